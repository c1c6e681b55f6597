"""Retry budgets (spec/RETRIES.md 1.8), pinned by hand: a schedule-to-close of one attempt, a retry policy unset.

idempotency-keys on triage (keyed tracker) passes 34 crash points, numbered as in
tests/variants/test_conversations.py: a write's sites are its `tracker accepted` and `tool
returned` (create_a 6 and 7, create_b 11 and 12, comment_a 25 and 26), the search's its `tool
returned` (21). Each figure below is derived from the rules in the test's docstring.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from crashsweep.explorer.search import explore
from crashsweep.reports.summary import summarize
from crashsweep.spec import invariants
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import Policy
from crashsweep.spec.retries import parse_stack, spent_entry
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import model
from crashsweep.variants.composed import compose
from tests.paths import ROOT

KEYS = Policy(
    startup_save=True,
    reply_save="before-first-send",
    result_saves="each-call",
    markers="none",
    keys="run-call",
    lock="none",
)
UNSET: dict[str, object] = {"scope": "call", "on": "error", "retry_policy": "unset"}
ONE_ATTEMPT: dict[str, object] = {**UNSET, "schedule_to_close": "one-attempt"}


def _row(layer: dict[str, object], job: Job, depth: int) -> tuple[object, ...]:
    policy = replace(KEYS, retries=parse_stack([layer]))
    exploration = explore(model(compose("d", "d", policy), job, TRACKERS["keyed"]), depth)
    row = summarize(exploration, variant="d", job=job.name, tracker="keyed")
    verdicts = {v.name: v.holds for v in row.invariants}
    return row.scenarios, row.never_finish, row.missing, verdicts[invariants.NO_LOSS], verdicts[invariants.CAN_FINISH]


def test_a_death_inside_an_attempt_spends_a_one_attempt_budget_and_fails_the_run() -> None:
    """One move: the 34 crashes and a retry move at each write's `tracker accepted` (3): 37.

    Under the budget, a crash at one of the 7 sites fails the run at the restart: at create_a's
    two sites create_b and comment_a are never applied (2 + 2), at create_b's comment_a (1 + 1),
    at the search's comment_a (1), at comment_a's nothing (0): 7 missing, no run stuck. A retry
    move is a quick error, retried within the budget: nothing lost. Without the budget the
    restart sends the call again with its key: nothing lost.
    """
    assert _row(ONE_ATTEMPT, TRIAGE, 1) == ({1: 37}, 0, 7, False, True)
    assert _row(UNSET, TRIAGE, 1) == ({1: 37}, 0, 0, True, True)


def test_a_failed_run_is_finished_with_no_request_after_the_timeout() -> None:
    """one-write (create_a alone): a crash at either site fails the run, after create_a was applied.

    Crashes at `tracker accepted create_a` or `tool returned create_a` fail the run at the restart:
    nothing is missing, nothing is stuck, and no second request is made.
    """
    job = load_job(ROOT / "examples" / "one-write.toml")
    scenarios, never, missing, no_loss, can_finish = _row(ONE_ATTEMPT, job, 1)
    assert (never, missing, no_loss, can_finish) == (0, 0, True, True)
    assert scenarios == {1: 15 + 1}  # 15 crash points and one retry move


@pytest.mark.parametrize(("layer", "most"), [(UNSET, 3), ({"scope": "call", "on": "error", "attempts": 3}, 2)])
def test_an_unset_retry_policy_retries_as_often_as_the_depth_allows(layer: dict[str, object], most: int) -> None:
    """one-write at depth 3: unset, three moves can all be retries of create_a; `attempts = 3`, two at most.

    Each retry move fails create_a's attempt at `tracker accepted create_a`, and the layer sends
    it again (RETRIES.md 1.4); the spent retries are the world's entries of the instance.
    """
    job = load_job(ROOT / "examples" / "one-write.toml")
    policy = replace(KEYS, retries=parse_stack([layer]))
    exploration = explore(model(compose("d", "d", policy), job, TRACKERS["keyed"]), 3)
    spent = spent_entry(0, "run-1/create_a")
    assert max(exploration.state(n).struck.count(spent) for n in range(exploration.states)) == most
