"""Tests of crashsweep.spec.tracker: applying writes with and without honoured keys."""

from __future__ import annotations

from crashsweep.spec.keys import key
from crashsweep.spec.tracker import KEYED, KEYLESS, apply_write
from crashsweep.spec.world import Record, Tracker


def test_keyed_repeat_returns_first_answer_and_changes_nothing() -> None:
    """A known key gets the first answer; the tracker is unchanged."""
    first, answer = apply_write(Tracker(), KEYED, "a", "run-1", keyed=True)
    assert answer == "#1"
    assert first.keys == ((key("run-1", "a"), "#1"),)
    again, repeat = apply_write(first, KEYED, "a", "run-1", keyed=True)
    assert (again, repeat) == (first, "#1")


def test_same_call_of_another_run_is_a_new_write() -> None:
    """The key includes the run ID, so another run's call is applied anew."""
    first, _ = apply_write(Tracker(), KEYED, "a", "run-1", keyed=True)
    second, answer = apply_write(first, KEYED, "a", "run-2", keyed=True)
    assert answer == "#2"
    assert second.records == (Record("a", "run-1"), Record("a", "run-2"))


def test_keyless_tracker_or_unkeyed_request_applies_every_time() -> None:
    """Without keys honoured on both sides, a repeat is a second record and nothing is remembered."""
    for kind, keyed in ((KEYLESS, True), (KEYED, False)):
        tracker, _ = apply_write(Tracker(), kind, "a", "run-1", keyed)
        tracker, answer = apply_write(tracker, kind, "a", "run-1", keyed)
        assert answer == "#2"
        assert tracker.keys == ()
