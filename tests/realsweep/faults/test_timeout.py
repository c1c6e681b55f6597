"""A timeout layer's retry for real: chances where the program marks them, what the new attempt is told."""

from __future__ import annotations

from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.pause import PAUSE
from crashsweep.realsweep.faults.timeout import TIMEOUT_RETRY
from crashsweep.realsweep.probe.faults_env import TIMED_OUT, timeout_chance
from crashsweep.spec.retries import MOVE_COUNTER
from tests.realsweep.faults.points import POINTS

TURN = timeout_chance(0, "turn", "run-1/turn 1")


def test_a_timeout_strikes_at_the_points_the_program_marked_right_after_them() -> None:
    """Marks after points 2 and 4 (a pause passed after k points marks point k); a person's pause is none.

    Each chance carries what the new attempt is told: the layer, its scope and the instance.
    """
    pauses = ((2, TURN), (3, "person answers create_a"), (4, timeout_chance(1, "run", "run")))
    found = TIMEOUT_RETRY.chances(POINTS, pauses, (0, 0))
    assert [(f.index, f.point, f.occurrence, f.detail) for f in found] == [
        (2, "tracker accepted create_a", 1, "0 turn run-1/turn 1"),
        (4, "tracker accepted create_a", 2, "1 run run"),
    ]
    assert found[0].restart_env() == {TIMED_OUT: "0 turn run-1/turn 1"}
    assert found[0].env() == {}  # the attempt given up on is told nothing: it is only held
    assert TIMEOUT_RETRY.chances(POINTS, pauses, (2, 0)) == found[1:]
    assert TIMEOUT_RETRY.chances(POINTS, ((0, TURN), (7, TURN)), (0, 0)) == []  # before any point; past the last


def test_it_is_a_pause_whose_restart_is_the_new_attempt_counted_as_a_retry() -> None:
    """Swept scenario by scenario like a pause, its wakes opened the same way; named and counted as a retry."""
    move = Fault(TIMEOUT_RETRY, 2, "tracker accepted create_a", 1, detail="0 turn run-1/turn 1")
    assert (TIMEOUT_RETRY.every_scenario, TIMEOUT_RETRY.doing) == (True, "times out an attempt")
    woken = move.next_moves(("start: tmp written", "reply 1 arrived"))
    assert [(f.wake, f.wake_at, f.detail) for f in woken] == [
        (1, "start: tmp written", "0 turn run-1/turn 1"),
        (2, "reply 1 arrived", "0 turn run-1/turn 1"),
    ]
    assert move.label == "retry at tracker accepted create_a on timeout, wake at p2 stopped"
    assert woken[1].label == "retry at tracker accepted create_a on timeout, wake at reply 1 arrived"
    assert (move.code, woken[1].code, move.counter) == ("timeout-2-0", "timeout-2-2", MOVE_COUNTER)
    assert Fault(PAUSE, 2, "tracker accepted create_a", 1).restart_env() == {}
