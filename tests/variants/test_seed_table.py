"""The published figures, pinned: the seed's five-design table and its agent-loop sweep.

Every number here is quoted from the seed document (SEMANTICS.md sections 8 and 9), not
taken from crashsweep's output.
"""

from __future__ import annotations

import pytest

from crashsweep.explorer.search import explore
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import SEED_DESIGNS, model
from tests.published import SEED_TABLE


def _row(variant: str, tracker: str = "keyed") -> Summary:
    exploration = explore(model(variant, TRIAGE, TRACKERS[tracker]), 2)
    return summarize(exploration, variant=variant, job="triage", tracker=tracker)


@pytest.mark.parametrize("variant", SEED_TABLE)
def test_seed_row(variant: str) -> None:
    """Each design's row at depth 2 equals the seed's, all seven numbers."""
    row = _row(variant)
    once, twice, with_dups, dups, missing, asks, calls_plus = SEED_TABLE[variant]
    assert row.crash_points == once
    assert row.scenarios == {1: once, 2: twice}
    assert (row.with_dups, row.dups, row.missing, row.asks, row.calls_plus) == (
        with_dups,
        dups,
        missing,
        asks,
        calls_plus,
    )


def test_seed_designs_in_table_order() -> None:
    """The registry lists the seed designs in the table's order."""
    assert [d.name for d in SEED_DESIGNS] == list(SEED_TABLE)


def test_markers_without_keys_ask_on_669_of_1039_scenarios() -> None:
    """The seed's prose: 669 questions across 1,039 scenarios for attempt-markers."""
    row = _row("attempt-markers")
    assert sum(row.scenarios.values()) == 1039
    assert row.asks == 669


@pytest.mark.parametrize(("tracker", "twice", "asks"), [("keyed", 872, 0), ("keyless", 854, 624)])
def test_agent_loop_sweep(tracker: str, twice: int, asks: int) -> None:
    """The agent's own loop: 38 points; 910 scenarios keyed, 892 keyless with 624 questions; no dup or loss."""
    row = _row("agent-loop", tracker)
    assert row.crash_points == 38
    assert row.scenarios == {1: 38, 2: twice}
    assert (row.with_dups, row.dups, row.missing, row.asks) == (0, 0, 0, asks)
    assert row.holds


@pytest.mark.parametrize(("variant", "holds"), [(v, SEED_TABLE[v][2] == 0) for v in SEED_TABLE])
def test_verdicts_follow_the_duplicates(variant: str, holds: bool) -> None:
    """no-duplicate is violated exactly where the table shows duplicates; nothing is ever lost."""
    row = _row(variant)
    verdicts = {v.name: v for v in row.invariants}
    assert verdicts["no-duplicate"].holds is holds
    assert verdicts["no-loss"].holds
    assert all(v.witnessed for v in row.invariants)


def test_error_to_model_without_failures_is_idempotency_keys() -> None:
    """With no tool failing, error-to-model is idempotency-keys: the seed's row 34/654/0/0/0/0/234."""
    row = _row("error-to-model")
    assert row.crash_points == 34
    assert row.scenarios == {1: 34, 2: 654}
    assert (row.with_dups, row.dups, row.missing, row.asks, row.calls_plus) == SEED_TABLE["idempotency-keys"][2:]
