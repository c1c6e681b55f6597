"""The check of my_loop.c's sweep (`--points syscalls`): after each scenario, was each issue filed exactly once?

my_loop.c files create_a and create_b (the `call` of each record); the sweep gives each
scenario a tracker space of its own, whose records this reads.
"""

from __future__ import annotations

from crashsweep import Outcome, Scenario

CALLS = ("create_a", "create_b")


def check(scenario: Scenario) -> Outcome:
    """Count the tracker's records per call: duplicates, and calls never filed."""
    assert scenario.tracker is not None, "the sweep starts a tracker for each scenario"
    return Outcome.of((record["call"] for record in scenario.tracker.records()), CALLS)
