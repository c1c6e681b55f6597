"""Tests of crashsweep.spec.metrics: a final world's duplicates and missing writes, in numbers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep.spec import metrics
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.world import Record, Tracker, World

TWICE = World(tracker=Tracker((Record("create_a", "run-1"), Record("search", "run-1"), Record("create_a", "run-1"))))


def test_metrics_count_extra_records_and_missing_writes() -> None:
    """dups counts records beyond the first per write; missing counts writes with none."""
    assert metrics.dups(TWICE, TRIAGE) == 1
    assert metrics.with_dups(TWICE, TRIAGE) == 1
    assert metrics.missing(TWICE, TRIAGE) == 2
    assert metrics.with_dups(World(), TRIAGE) == 0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["create_a", "create_b", "search", "comment_a", "other"]), max_size=8))
def test_figures_agree_with_a_scan_of_the_records(calls: list[str]) -> None:
    """dups and missing from the tracker's running counts equal a count of every write's records."""
    world = World(tracker=Tracker(tuple(Record(call, "run-1") for call in calls)))
    writes = ("create_a", "create_b", "comment_a")
    assert metrics.dups(world, TRIAGE) == sum(max(0, calls.count(w) - 1) for w in writes)
    assert metrics.missing(world, TRIAGE) == sum(1 for w in writes if w not in calls)
