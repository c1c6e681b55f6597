"""Tests of crashsweep.spec.ladder: which rung settles a call with a marker and no result."""

from __future__ import annotations

from crashsweep.spec.job import Call
from crashsweep.spec.ladder import settle
from crashsweep.spec.ops import AskPerson, Lookup, Send
from crashsweep.spec.tracker import KEYED, KEYLESS, KEYLESS_LOOKUP

WRITE = Call("a", "create_issue", True)
READ = Call("s", "search_issues", False)


def test_rung_one_reads_and_keyed_writes_run_again() -> None:
    """A read, or a write with a key the tracker honours, is sent again."""
    assert settle(READ, False, KEYLESS) == (Send("s", False, rerun=True),)
    assert settle(WRITE, True, KEYED) == (Send("a", True, rerun=True),)


def test_rung_two_asks_the_tracker_when_it_can_answer() -> None:
    """A keyless write against a tracker with lookup is looked up."""
    assert settle(WRITE, True, KEYLESS_LOOKUP) == (Lookup("a", True),)


def test_rung_three_asks_a_person_otherwise() -> None:
    """A write without an honoured key and without lookup goes to a person."""
    assert settle(WRITE, False, KEYED) == (AskPerson("a", False),)
    assert settle(WRITE, True, KEYLESS) == (AskPerson("a", True),)
