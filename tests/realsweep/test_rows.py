"""A real sweep's results as the explorer's row: columns, verdicts and counterexamples."""

from __future__ import annotations

import json

from crashsweep.realsweep import rows
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepResult


def scenario(crashes: tuple[int, ...], dups: int = 0, calls: int = 3, asks: int = 0) -> ScenarioResult:
    """A scenario result with the given crash indices and figures."""
    crash = tuple(Crash(i, f"point {i}") for i in crashes)
    return ScenarioResult(crash, Outcome(dups=dups, applied=1), {"model_calls": calls, "asks": asks}, ())


RESULT = SweepResult(
    depth=2,
    baseline=ScenarioResult((), Outcome(applied=1), {"model_calls": 3}, ("point 1", "point 2")),
    scenarios=(scenario((1,)), scenario((2,), dups=2, calls=4), scenario((1, 1), asks=1), scenario((2, 1), dups=1)),
    processes=11,
    seconds=1.5,
)


def test_the_row_has_the_explorers_columns() -> None:
    """Scenarios per crash count, with_dups, dups, asks and calls+ over the scenarios."""
    row = rows.summary(RESULT, variant="v", job="triage", tracker="keyed")
    assert (row.crash_points, row.scenarios) == (2, {1: 2, 2: 2})
    assert (row.with_dups, row.dups, row.missing, row.asks, row.calls_plus) == (2, 3, 0, 1, 1)
    assert not row.holds


def test_the_first_violating_scenario_is_the_counterexample() -> None:
    """Scenarios are ordered by crash count, so the first duplicate is a shortest one."""
    row = rows.summary(RESULT, variant="v", job="triage", tracker="keyed")
    duplicate = row.invariants[0]
    assert (duplicate.name, duplicate.holds, duplicate.counterexample, duplicate.crashes) == (
        "no-duplicate",
        False,
        "2",
        1,
    )
    text = rows.row_text(row, RESULT, rows.counterexamples(RESULT))
    assert "VIOLATED  first in scenario 2: crash at point 2 'point 2', restart to the end" in text
    assert "processes     11 in 1.5 s" in text


def test_json_reports_processes_instead_of_a_graph() -> None:
    """The JSON row has processes and seconds, not states and edges."""
    data = json.loads(rows.to_json(rows.summary(RESULT, variant="v", job="t", tracker="keyed"), RESULT))
    assert data["processes"] == 11
    assert "states" not in data
    assert data["scenarios"] == {"1": 2, "2": 2}
