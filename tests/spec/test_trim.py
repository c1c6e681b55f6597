"""Tests of crashsweep.spec.trim: the trim-context strike, the both-directions repair, a result without its call."""

from __future__ import annotations

from crashsweep.spec import trim
from crashsweep.spec.memory import Snapshot, Turn
from crashsweep.spec.world import World, make_checkpoint, make_world

DONE_TURN = Turn(1, results=(("a", "#1"), ("b", "#2")), complete=True)
HALF_TURN = Turn(2, results=(("c", "#3"),))


def _world(memory: Snapshot, runs: int = 1) -> World:
    return make_world(
        make_checkpoint(memory, None), World().tracker, None, False, runs, World().lock, (), 0, World().second
    )


def test_a_restart_with_a_saved_result_is_a_chance_and_the_first_start_is_not() -> None:
    memory = Snapshot("run-1", turns=(DONE_TURN, HALF_TURN))
    assert trim.trimmable(_world(memory))
    assert not trim.trimmable(_world(memory, runs=0))  # no start yet: nothing was loaded
    assert not trim.trimmable(_world(Snapshot("run-1", turns=(Turn(1),))))  # a reply, no result: nothing to cut
    assert not trim.trimmable(_world(Snapshot("run-1", done=True, turns=(DONE_TURN,))))


def test_the_strike_cuts_the_oldest_reply_and_keeps_its_results() -> None:
    world = trim.trim(_world(Snapshot("run-1", turns=(DONE_TURN, HALF_TURN))))
    stored = world.checkpoint.committed
    assert stored is not None
    assert [t.trimmed for t in stored.turns] == [1, 0]
    assert trim.orphan_result(stored) == "a"
    assert trim.TRIMMED in world.struck
    again = trim.trim(world)  # the next strike cuts turn 2's reply; turn 1 leaves the conversation whole
    assert again.checkpoint.committed is not None
    assert [t.trimmed for t in again.checkpoint.committed.turns] == [2, 1]
    assert trim.orphan_result(again.checkpoint.committed) == "c"
    assert again.struck.count(trim.TRIMMED) == 1


def test_both_directions_leaves_a_result_without_its_call_out() -> None:
    cut = Snapshot("run-1", turns=(DONE_TURN.with_trim(1), HALF_TURN))
    repaired = trim.repaired(cut)
    assert [t.trimmed for t in repaired.turns] == [2, 0]
    assert trim.orphan_result(repaired) is None
    assert repaired.turns[0].results == DONE_TURN.results  # the loop keeps what was done
    whole = Snapshot("run-1", turns=(DONE_TURN,))
    assert trim.repaired(whole) is whole
