"""Tests of crashsweep.spec.records: the tracker's logs and indexes against the tuples they stand for."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep.spec.records import Record, Tracker


def test_appended_tracker_equals_the_tracker_built_at_once() -> None:
    """Records and keys added one by one give the tracker constructed from the tuples, indexes and all."""
    records = (Record("a", "run-1"), Record("b", "run-1"), Record("a", "run-2"), Record("a", "run-1"))
    keys = (("k1", "#1"), ("k1", "#9"))
    grown = Tracker().appended(records[0], "k1", "#1")
    for record in records[1:]:
        grown = grown.appended(record)
    grown = grown.appended(Record("c", "run-3"), "k1", "#9")
    direct = Tracker((*records, Record("c", "run-3")), keys)
    assert grown == direct
    assert hash(grown) == hash(direct)
    for tracker in (grown, direct):
        assert (tracker.count("a"), tracker.count("b"), tracker.count("z")) == (3, 1, 0)
        assert tracker.duplicated == 1  # only "a" has more than one record
        assert (tracker.find("a", "run-1"), tracker.find("a", "run-2"), tracker.find("b", "run-2")) == (
            "#1",
            "#3",
            None,
        )
        assert tracker.answer_for("k1") == "#1"  # the first answer stored under a key


def test_records_and_keys_read_back_in_order() -> None:
    """A tracker grown one record at a time gives its tuples back, oldest first, and copies like a dataclass."""
    grown = Tracker().appended(Record("a", "r"), "k", "#1").appended(Record("b", "r"))
    assert grown.records == (Record("a", "r"), Record("b", "r"))
    assert grown.keys == (("k", "#1"),)
    assert grown.size == 2
    assert repr(grown) == repr(Tracker(grown.records, grown.keys))
    assert dataclasses.replace(grown, keys=()) == Tracker(grown.records)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=6),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=6),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
)
def test_equality_is_that_of_the_tuples(shared: list[str], one: list[str], other: list[str]) -> None:
    """Two trackers grown from a shared one are equal exactly when their record tuples are."""
    base = Tracker()
    for call in shared:
        base = base.appended(Record(call, "r"))
    first, second = base, base
    for call in one:
        first = first.appended(Record(call, "r"))
    for call in other:
        second = second.appended(Record(call, "r"))
    assert (first == second) == (first.records == second.records)
    assert (first == second) == (Tracker(first.records) == Tracker(second.records))
    if first == second:
        assert hash(first) == hash(second)
