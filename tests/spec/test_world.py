"""Tests of crashsweep.spec.world: durable and volatile state, hashable and frozen."""

from __future__ import annotations

import dataclasses

import pytest

from crashsweep.spec.ops import Point, WriteTmp
from crashsweep.spec.world import (
    Checkpoint,
    LockFile,
    Process,
    Record,
    Snapshot,
    Tracker,
    Turn,
    World,
    make_process,
    make_turn,
    make_world,
)


def test_crash_keeps_disk_and_tracker_and_drops_memory() -> None:
    """A crash keeps the checkpoint, the temp file and the tracker; the process is gone."""
    snap = Snapshot("run-1", turns=(Turn(1, results=(("a", "#1"),)),))
    world = World(Checkpoint(snap, snap), Tracker((Record("a", "run-1"),)), Process(snap, (), "p"), runs=1)
    after = world.crashed()
    assert after.process is None
    assert (after.checkpoint, after.tracker, after.runs) == (world.checkpoint, world.tracker, world.runs)


def test_states_are_frozen_and_hashable() -> None:
    """Equal worlds hash equal; fields cannot be assigned."""
    a = World(tracker=Tracker((Record("a", "r"),), (("k", "#1"),)))
    b = World(tracker=Tracker((Record("a", "r"),), (("k", "#1"),)))
    assert a == b
    assert hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.runs = 3  # type: ignore[misc]


def test_turn_records_results_and_markers_in_order() -> None:
    """Results and markers keep their order; a second marker for one call changes nothing."""
    turn = Turn(1).with_marker("a").with_marker("a").with_result("a", "#1").with_result("b", "read ok")
    assert turn.marked == ("a",)
    assert turn.result("a") == "#1"
    assert turn.result("c") is None


def test_tracker_counts_and_finds_per_run() -> None:
    """count is over every run; find is for one run and gives the record's number."""
    tracker = Tracker((Record("a", "run-1"), Record("b", "run-1"), Record("a", "run-2")))
    assert tracker.count("a") == 2
    assert tracker.find("a", "run-2") == "#3"
    assert tracker.find("b", "run-2") is None
    assert Tracker(keys=(("k", "#4"),)).answer_for("k") == "#4"


def test_successors_equal_the_same_value_built_directly() -> None:
    """with_last, appended, marked_done and completed give values (and hashes) equal to direct construction."""
    one, two = Turn(1, results=(("a", "#1"),), complete=True), Turn(2, marked=("b",))
    built = Snapshot("run-1").appended(one).appended(Turn(2)).with_last(two).marked_done()
    direct = Snapshot("run-1", done=True, turns=(one, two))
    assert built == direct
    assert hash(built) == hash(direct)
    assert built.turns == (one, two)
    assert (built.size, built.last) == (2, two)
    assert dataclasses.replace(built, done=False) == Snapshot("run-1", turns=(one, two))
    assert Turn(2).with_marker("b").completed() == Turn(2, marked=("b",), complete=True)
    assert hash(Snapshot("r", turns=(one, two))) != hash(Snapshot("r", turns=(two, one)))


def test_fast_constructors_equal_the_dataclass_constructors() -> None:
    """make_turn, make_process and make_world give equal values with equal hashes; programs are shared."""
    snap = Snapshot("run-1", turns=(Turn(1),))
    pending = (Point("a"), WriteTmp())
    assert make_turn(1, (("a", "#1"),), ("a",), True, (), ()) == Turn(1, (("a", "#1"),), ("a",), True)
    made = make_process(snap, (Point("a"), WriteTmp()), "p")
    direct = Process(snap, pending, "p")
    assert made == direct
    assert made.pending is direct.pending  # one shared tuple for equal programs
    for process in (None, made):
        fast = make_world(Checkpoint(snap), Tracker(), process, False, 1, LockFile("run-1"), ("c",))
        slow = World(Checkpoint(snap), Tracker(), direct if process else None, False, 1, LockFile("run-1"), ("c",))
        assert fast == slow
        assert hash(fast) == hash(slow)
    assert hash(World(process=made)) != hash(World(process=Process(snap, pending, "q")))
