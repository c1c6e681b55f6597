"""Tests of crashsweep.spec.invariants: duplicates and losses as predicates and in words."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep.spec import invariants
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.world import Record, Tracker, World

TWICE = World(tracker=Tracker((Record("create_a", "run-1"), Record("search", "run-1"), Record("create_a", "run-1"))))


def test_duplicate_is_stated_in_words() -> None:
    """The violation names the call and its records' numbers."""
    assert not invariants.no_duplicate.holds(TWICE, TRIAGE)
    assert invariants.violation(invariants.NO_DUPLICATE, TWICE, TRIAGE) == "create_a has 2 records: #1 and #3"


def test_loss_lists_writes_without_records() -> None:
    """Writes with no record are lost; reads never are."""
    assert invariants.lost(TWICE, TRIAGE) == ("create_b", "comment_a")
    assert "create_b has no record" in invariants.violation(invariants.NO_LOSS, TWICE, TRIAGE)


def test_witnesses() -> None:
    """Some write applied needs a record; some run finished needs a finished world."""
    assert invariants.some_write_applied(TWICE, TRIAGE)
    assert not invariants.some_write_applied(World(), TRIAGE)
    assert invariants.some_run_finished(World(finished=True), TRIAGE)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["create_a", "create_b", "search", "comment_a", "other"]), max_size=8))
def test_duplicates_and_losses_agree_with_a_scan_of_the_records(calls: list[str]) -> None:
    """The tracker's running figures give what counting every write against every record gives."""
    world = World(tracker=Tracker(tuple(Record(call, "run-1") for call in calls)))
    writes = ("create_a", "create_b", "comment_a")
    scanned = tuple(w for w in writes if sum(1 for c in calls if c == w) > 1)
    assert invariants.duplicated(world, TRIAGE) == scanned
    assert invariants.no_duplicate.holds(world, TRIAGE) == (not scanned)
    assert invariants.lost(world, TRIAGE) == tuple(w for w in writes if w not in calls)
