"""Tests of crashsweep.spec.memory: turns and snapshots, their successors and fast constructor."""

from __future__ import annotations

import dataclasses

from crashsweep.spec import world
from crashsweep.spec.memory import Snapshot, Turn, make_turn


def test_turn_records_results_and_markers_in_order() -> None:
    """Results and markers keep their order; a second marker for one call changes nothing."""
    turn = Turn(1).with_marker("a").with_marker("a").with_result("a", "#1").with_result("b", "read ok")
    assert turn.marked == ("a",)
    assert turn.result("a") == "#1"
    assert turn.result("c") is None


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


def test_make_turn_equals_the_dataclass_constructor() -> None:
    """make_turn gives a value equal to Turn(...), with the same hash."""
    fast = make_turn(1, (("a", "#1"),), ("a",), True, (), ())
    slow = Turn(1, (("a", "#1"),), ("a",), True)
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert make_turn(2, (), (), False, (), (), "@3") == Turn(2, ids="@3")


def test_the_world_re_exports_the_memory_types() -> None:
    """spec.world names the same classes and constructor, for code that takes them from there."""
    assert (world.Snapshot, world.Turn, world.make_turn) == (Snapshot, Turn, make_turn)


def test_a_node_rerun_forgets_results_markers_and_failures_of_the_calls_named() -> None:
    """`without` drops what the named calls had (CONVERSATIONS.md 3) and keeps the rest, args included."""
    turn = make_turn(1, (("a", "#1"), ("b", "#2")), ("a", "b"), False, ("b@2#1",), ("a",), "", 2)
    kept = turn.without(("a",))
    assert (kept.results, kept.marked, kept.failed) == ((("b", "#2"),), ("b",), ())
    assert (kept.approved, kept.args) == (("b@2#1",), 2)


def test_the_arguments_version_is_part_of_a_turn_and_of_its_hash() -> None:
    """Version 1 hashes as a turn always did; another version is another turn."""
    assert Turn(1) == make_turn(1, (), (), False, (), (), "", 1)
    assert hash(Turn(1)) == hash(make_turn(1, (), (), False, (), ()))
    assert Turn(1, args=2) != Turn(1)
    assert Turn(1, args=2).with_result("a", "#1").args == 2
