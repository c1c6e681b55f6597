"""Conformance of the patterns users report (issue #45): when an approval is consumed, a batch, a trimmed context.

spec/CONVERSATIONS.md sections 5, 6 and 7, and a retry budget of one attempt (spec/RETRIES.md 1.8),
crashed for real at depth 2 beside the model (worlds merged, as `crashsweep conform` does by
default): every figure and verdict of the real row is the model's, and the figures the spec derives
by hand hold. Each design is its preset's file with one line more, written under the module's
temporary folder; each sweep runs once for the module (`Sweeps`), whatever number of tests read it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.reference.conformance import Conformance
from crashsweep.realsweep.sweep import SweepOptions
from crashsweep.spec.invariants import CAN_FINISH, NO_DUPLICATE, NO_LOSS, WELL_FORMED_TRANSCRIPT
from crashsweep.spec.job import load_job
from tests.paths import ROOT

DEPTH_2 = SweepOptions(depth=2, workers=2, dedup=True, snapshots=True, every=True)
"""Every scenario listed (the graph's paths expanded, no process more): the tests count those of one move."""
EXAMPLES = ROOT / "examples"
BUDGET = '{ scope = "call", on = "error", retry_policy = "unset", schedule_to_close = "one-attempt" }'
"""A call layer retried without bound within a schedule-to-close of one attempt (spec/RETRIES.md 1.8)."""
CASES: dict[str, tuple[str, str, str, str, tuple[str, ...]]] = {
    # name: (preset, the line added, job, tracker, faults)
    "before-resume": ("save-after-reply", 'approval_consume = "before-resume"', "triage-approval", "keyed", ()),
    "after-resume-started": (
        "save-after-reply",
        'approval_consume = "after-resume-started"',
        "triage-approval",
        "keyed",
        (),
    ),
    "per-batch": ("attempt-markers", 'persist_granularity = "per-batch"', "parallel-batch", "keyless-lookup", ()),
    "per-call": ("attempt-markers", 'persist_granularity = "per-call"', "parallel-batch", "keyless-lookup", ()),
    "none": ("save-after-reply", 'transcript_repair = "none"', "triage", "keyed", ("trim-context",)),
    "add-missing-results": (
        "save-after-reply",
        'transcript_repair = "add-missing-results"',
        "triage",
        "keyed",
        ("trim-context",),
    ),
    "both-directions": (
        "save-after-reply",
        'transcript_repair = "both-directions"',
        "triage",
        "keyed",
        ("trim-context",),
    ),
    "one-attempt": ("idempotency-keys", f"retries = [{BUDGET}]", "triage", "keyed", ()),
    "one-attempt-fails": ("idempotency-keys", f"retries = [{BUDGET}]", "triage-fails", "keyed", ()),
}


class Sweeps:
    """Each case's conformance, swept the first time a test asks for it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.done: dict[str, Conformance] = {}

    def design(self, case: str) -> Path:
        """The preset's design file with the case's line, named after the case."""
        preset, line = CASES[case][:2]
        text = (ROOT / "docs" / "designs" / f"{preset}.toml").read_text(encoding="utf-8")
        path = self.folder / f"{case}.toml"
        path.write_text(text.replace(f'name = "{preset}"', f'name = "{case}"') + line + "\n", encoding="utf-8")
        return path

    def job(self, name: str) -> Path:
        """The example job file `name`."""
        return EXAMPLES / f"{name}.toml"

    def __getitem__(self, case: str) -> Conformance:
        if case not in self.done:
            _, _, job, tracker, faults = CASES[case]
            job_path, design = self.job(job), self.design(case)
            self.done[case] = conformance.conform(
                case, load_job(job_path), job_path, tracker, DEPTH_2, None, design, Nemesis(faults)
            )
        return self.done[case]


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Sweeps:
    """The module's sweeps, in a folder of their own."""
    return Sweeps(tmp_path_factory.mktemp("patterns"))


def _holds(c: Conformance) -> dict[str, bool | None]:
    """The real row's verdicts, by invariant."""
    return {v.name: v.holds for v in c.real.invariants}


def _one_move(c: Conformance, what: str) -> int:
    """The real scenarios of one move that are stuck (`what` = "stuck") or hold a duplicate ("dups")."""
    return sum(1 for s in c.sweep.scenarios if s.moves == 1 and getattr(s.outcome, what))


@pytest.mark.parametrize("case", list(CASES))
def test_the_real_row_is_the_model_s(case: str, sweeps: Sweeps) -> None:
    """Every figure, the moves of each kind and every verdict: no difference at depth 2."""
    assert sweeps[case].differences == []


def test_an_approval_consumed_before_the_resume_leaves_a_restart_stuck(sweeps: Sweeps) -> None:
    """CONVERSATIONS.md 5: an approval consumed at the answer and lost with its process leaves a restart stuck.

    Durable storage, fsync none: a crash at `approved comment_a` or at `approval comment_a: tmp
    written` leaves a checkpoint without the approval, and the restart's gate finds its request
    consumed: 2 scenarios of one crash never finish. Under after-resume-started the same
    restarts ask again, and every run can finish.

    The 38 crash points are the preset's on this job: the start (2), each reply's arrival and
    save (3 each, 3 with the final one), each write's 5 and the search's 4, each turn's save (2
    each), and the gate's 4 (requested, approved, the approval save's 2).
    """
    consumed, kept = sweeps["before-resume"], sweeps["after-resume-started"]
    assert consumed.real.crash_points == kept.real.crash_points == 2 + 3 * 3 + 3 * 5 + 4 + 2 * 2 + 4
    assert _one_move(consumed, "stuck") == 2
    assert (_holds(consumed)[CAN_FINISH], consumed.real.never_finish > 0) == (False, True)
    assert (_holds(kept)[CAN_FINISH], kept.real.never_finish) == (True, 0)


def test_a_batch_read_back_whole_duplicates_at_one_crash(sweeps: Sweeps) -> None:
    """CONVERSATIONS.md 6 on three writes with markers, lookup tracker. Per call, no duplicate at depth 1 or 2.

    Per batch, a crash with a write applied and the batch's last result not yet saved drops the
    turn's results and markers, and the restart sends that write again unmarked. Each write
    passes 8 points (its marker save's 2 and `marker saved`, accepted, returned, its result
    save's 2 and `result saved`); the crashes from `tracker accepted create_a` through
    `result create_c: tmp written` are create_a's last 5, create_b's 8 and create_c's first 6: 19.
    """
    batch, call = sweeps["per-batch"], sweeps["per-call"]
    assert _one_move(batch, "dups") == 5 + 8 + 6
    assert (_one_move(call, "dups"), call.real.with_dups) == (0, 0)
    assert (_holds(batch)[NO_DUPLICATE], _holds(call)[NO_DUPLICATE]) == (False, True)


def test_a_trimmed_context_is_refused_unless_the_start_repairs_both_ways(sweeps: Sweeps) -> None:
    """CONVERSATIONS.md 7: after a crash that left a result saved, a trim leaves it without its call.

    The trim's chances at depth 2 are the crashes whose checkpoint holds a result and is not
    done: on triage, from `result create_a: renamed` to `final: tmp written` (2 + 5 + 2 + 3 + 4
    + 5 + 2 + 2 = 25). Under none and add-missing-results the next request is refused for good
    (resume-pending settles every call first, so add-missing-results has nothing to add):
    well-formed-transcript and can-finish fail; under both-directions the results leave the
    conversation and every property holds.
    """
    none, adding, both = sweeps["none"], sweeps["add-missing-results"], sweeps["both-directions"]
    assert none.real.moves[2]["trim-context"] == adding.real.moves[2]["trim-context"] == 25
    assert both.real.moves[2]["trim-context"] == 25
    for refused in (none, adding):
        assert (_holds(refused)[WELL_FORMED_TRANSCRIPT], _holds(refused)[CAN_FINISH]) == (False, False)
    assert (_holds(both)[WELL_FORMED_TRANSCRIPT], _holds(both)[CAN_FINISH], both.real.never_finish) == (True, True, 0)
    assert (_holds(adding)[NO_LOSS], _holds(both)[NO_LOSS]) == (True, True)


def test_a_death_inside_an_attempt_fails_the_run_under_a_one_attempt_budget(sweeps: Sweeps) -> None:
    """RETRIES.md 1.8 on triage, one move (tests/variants/test_retry_budgets.py derives it by hand).

    The 34 crashes and a retry move at each write's `tracker accepted` (3): 37 scenarios. A crash
    at one of the 7 sites fails the run at the restart, losing the writes not yet applied: at
    create_a's two sites 2 each (create_b, comment_a), at create_b's 1 each (comment_a), at the
    search's 1 (comment_a), at comment_a's 0 (applied): 7 missing. A retry move is a quick error,
    retried, and loses nothing; a failed run is finished, so nothing is stuck.
    """
    budget = sweeps["one-attempt"]
    one_move = [s for s in budget.sweep.scenarios if s.moves == 1]
    assert len(one_move) == 37
    assert sum(s.outcome.missing for s in one_move) == 2 + 2 + 1 + 1 + 1 + 0
    assert sum(1 for s in one_move if s.outcome.missing) == 5
    assert _one_move(budget, "stuck") == 0
    assert (_holds(budget)[NO_LOSS], _holds(budget)[CAN_FINISH]) == (False, True)
