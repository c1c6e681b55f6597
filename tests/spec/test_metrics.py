"""Tests of spec.metrics: a final world's duplicates and missing writes, in numbers."""

from __future__ import annotations

from spec import metrics
from spec.job import TRIAGE
from spec.world import Record, Tracker, World

TWICE = World(tracker=Tracker((Record("create_a", "run-1"), Record("search", "run-1"), Record("create_a", "run-1"))))


def test_metrics_count_extra_records_and_missing_writes() -> None:
    """dups counts records beyond the first per write; missing counts writes with none."""
    assert metrics.dups(TWICE, TRIAGE) == 1
    assert metrics.with_dups(TWICE, TRIAGE) == 1
    assert metrics.missing(TWICE, TRIAGE) == 2
    assert metrics.with_dups(World(), TRIAGE) == 0
