"""The check of my_loop's sweep: after each scenario, was every issue filed exactly once?"""

from __future__ import annotations

from my_loop import TITLES

from crashsweep import Outcome, Scenario


def check(scenario: Scenario) -> Outcome:
    """Count the tracker's records per title: duplicates, and titles never filed."""
    assert scenario.tracker is not None, "the sweep starts a tracker for each scenario"
    return Outcome.of((record["call"] for record in scenario.tracker.records()), TITLES)
