"""Tests of crashsweep.spec.world: durable and volatile state, hashable, frozen (turns, snapshots: test_memory)."""

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
    make_checkpoint,
    make_process,
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


def test_tracker_counts_and_finds_per_run() -> None:
    """count is over every run; find is for one run and gives the record's number."""
    tracker = Tracker((Record("a", "run-1"), Record("b", "run-1"), Record("a", "run-2")))
    assert tracker.count("a") == 2
    assert tracker.find("a", "run-2") == "#3"
    assert tracker.find("b", "run-2") is None
    assert Tracker(keys=(("k", "#4"),)).answer_for("k") == "#4"


def test_fast_constructors_equal_the_dataclass_constructors() -> None:
    """make_process and make_world give equal values with equal hashes; programs are shared."""
    snap = Snapshot("run-1", turns=(Turn(1),))
    pending = (Point("a"), WriteTmp())
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


def test_fast_constructors_make_frozen_values_of_the_type() -> None:
    """A world and a checkpoint made fast are of their class, frozen, and equal to the constructor's."""
    snap = Snapshot("run-1")
    disk = make_checkpoint(snap, None)
    world = make_world(disk, Tracker(), None, False, 1, LockFile(), ())
    assert type(disk) is Checkpoint
    assert type(world) is World
    assert (disk, world) == (Checkpoint(snap), World(Checkpoint(snap), runs=1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        world.runs = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        disk.torn = True  # type: ignore[misc]
    assert dataclasses.replace(world, runs=2) == World(Checkpoint(snap), runs=2)
