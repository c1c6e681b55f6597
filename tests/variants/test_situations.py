"""The hard situations of spec/SITUATIONS.md: a tool failing after accept, an approval gate, rung 2."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crashsweep.explorer.path import replay, shortest_path
from crashsweep.explorer.search import explore
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.job import TRIAGE, Call, Job
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import model


def _with(call_id: str, *, fails_after_accept: bool = False, approval: bool = False) -> Job:
    def change(c: Call) -> Call:
        return replace(c, fails_after_accept=fails_after_accept, approval=approval) if c.id == call_id else c

    turns = tuple(tuple(change(c) for c in turn) for turn in TRIAGE.turns)
    return Job("triage-option", turns)


FAILS = _with("create_a", fails_after_accept=True)
APPROVAL = _with("comment_a", approval=True)


def _row(variant: str, job: Job, tracker: str) -> Summary:
    return summarize(explore(model(variant, job, TRACKERS[tracker]), 2), variant=variant, job=job.name, tracker=tracker)


@pytest.mark.parametrize("job", [FAILS, APPROVAL], ids=["fails-after-accept", "approval"])
def test_agent_loop_keyed_no_duplicate_no_loss_no_question(job: Job) -> None:
    """With keys, the agent's loop neither duplicates, loses, nor asks anyone to settle a call."""
    row = _row("agent-loop", job, "keyed")
    assert (row.dups, row.missing, row.asks) == (0, 0, 0)
    assert row.holds


@pytest.mark.parametrize("job", [FAILS, APPROVAL], ids=["fails-after-accept", "approval"])
def test_agent_loop_keyless_no_duplicate_no_loss(job: Job) -> None:
    """Without keys the ladder asks a person, and still nothing is duplicated or lost."""
    row = _row("agent-loop", job, "keyless")
    assert (row.dups, row.missing) == (0, 0)
    assert row.asks > 0
    assert row.holds


@pytest.mark.parametrize("job", [TRIAGE, FAILS, APPROVAL], ids=["triage", "fails-after-accept", "approval"])
def test_lookup_rung_replaces_the_person(job: Job) -> None:
    """Against a tracker with lookup, the person is never asked; lookups happen instead."""
    row = _row("agent-loop", job, "keyless-lookup")
    assert (row.dups, row.missing, row.asks) == (0, 0, 0)
    assert row.lookups > 0
    assert row.holds


def test_naive_error_to_model_duplicates_without_a_crash() -> None:
    """Handing the error to the model retries under a new key: the duplicate needs no crash."""
    exploration = explore(model("error-to-model", FAILS, TRACKERS["keyed"]), 2)
    verdict = exploration.verdicts["no-duplicate"]
    assert not verdict.holds
    assert verdict.node is not None
    path = shortest_path(exploration, verdict.node)
    assert path.crashes == 0
    points = [s.state.process.point for s in path.steps if s.state.process is not None]
    assert points[-4:] == [
        "tracker accepted create_a",
        "tool failed create_a",
        "retry reply arrived create_a",
        "tracker accepted create_a",
    ]
    replayed = replay(exploration.model, 2, path.code)
    assert replayed.end.tracker.count("create_a") == 2


def test_failure_strikes_once_and_is_settled_on_the_ladder() -> None:
    """agent-loop keyed: after `tool failed`, rung 1 sends again and the key returns the first answer."""
    row = _row("agent-loop", FAILS, "keyed")
    # Uninterrupted: 38 points, with `tool returned create_a` replaced by `tool failed create_a`
    # and the rung-1 repeat adding `tracker accepted` and `tool returned`: 40.
    assert row.crash_points == 40
    assert row.reruns > 0


def test_approval_points_and_counts() -> None:
    """agent-loop: the gate adds `approval requested`, `approved` and a two-point save: 38 + 4 points."""
    row = _row("agent-loop", APPROVAL, "keyed")
    assert row.crash_points == 42
    # One approval per scenario at least; a crash before the decision is saved asks again.
    assert row.approvals > sum(row.scenarios.values())
