"""Tests of crashsweep.spec.loading: what a start makes of the checkpoint it loads."""

from __future__ import annotations

from dataclasses import replace

from crashsweep.spec import loading
from crashsweep.spec.design import Design
from crashsweep.spec.job import Call, Job
from crashsweep.spec.memory import Snapshot, Turn

JOB = Job("j", ((Call("a", "create_issue", True), Call("b", "create_issue", True)),))
PLAIN = Design("d", "d", lambda env: (), lambda memory, env: ())


def test_per_batch_forgets_a_half_done_batch_and_keeps_a_whole_one() -> None:
    half = Snapshot("run-1", turns=(Turn(1, results=(("a", "#1"),), marked=("a", "b"), approved=("a@1#1",)),))
    batch = replace(PLAIN, persist_granularity="per-batch")
    loaded = loading.loaded(half, JOB, batch)
    assert loaded.last == Turn(1, approved=("a@1#1",))  # results and markers gone, the approval kept
    assert loading.loaded(half, JOB, PLAIN) is half
    whole = Snapshot("run-1", turns=(Turn(1, results=(("a", "#1"), ("b", "#2"))),))
    assert loading.loaded(whole, JOB, batch) is whole


def test_a_repair_in_either_direction_turns_as_is_into_repair_and_leaves_the_rest() -> None:
    """Only `as-is` sends a call without its result; `resume-pending` settles it first (CONVERSATIONS.md 7)."""
    assert loading.reload_how(PLAIN) == "resume-pending"
    assert loading.reload_how(replace(PLAIN, transcript_on_restart="as-is")) == "as-is"
    for repair in ("add-missing-results", "both-directions"):
        assert loading.reload_how(replace(PLAIN, transcript_on_restart="as-is", transcript_repair=repair)) == "repair"
        assert loading.reload_how(replace(PLAIN, transcript_repair=repair)) == "resume-pending"
        assert loading.reload_how(replace(PLAIN, transcript_on_restart="repair", transcript_repair=repair)) == "repair"


def test_both_directions_and_memory_approvals_apply_at_the_load() -> None:
    cut = Snapshot("run-1", turns=(Turn(1, results=(("a", "#1"),), approved=("a@1#1",), trimmed=1),))
    loaded = loading.loaded(cut, JOB, replace(PLAIN, transcript_repair="both-directions", approval_storage="memory"))
    assert loaded.last == Turn(1, results=(("a", "#1"),), trimmed=2)
