"""pause for real: its chances at every crash point, its label and code, its wakes, its scenario of its own."""

from __future__ import annotations

from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.pause import PAUSE, waking_at
from tests.realsweep.faults.points import PAUSES, POINTS


def test_a_pause_may_strike_at_every_crash_point_and_wakes_at_a_point_of_the_restart() -> None:
    """FAULTS.md 7: a chance at each crash point (not at a person's pause); waking is named by the restart's point."""
    found = PAUSE.chances(POINTS, PAUSES, (0, 0))
    assert [(f.index, f.point, f.occurrence) for f in found] == [
        (i, point, POINTS[:i].count(point)) for i, point in enumerate(POINTS, start=1)
    ]
    fourth = found[3]
    assert fourth.env() == {}  # the process is told nothing: the sweep holds it
    assert fourth.label == "pause at tracker accepted create_a#2, wake at p2 stopped"
    woken = waking_at(fourth, 4, POINTS)
    assert (woken.wake, woken.wake_at) == (4, "tracker accepted create_a#2")
    assert woken.label == "pause at tracker accepted create_a#2, wake at tracker accepted create_a#2"
    assert (fourth.code, woken.code) == ("pause-4-0", "pause-4-4")
    assert waking_at(fourth, 2, POINTS).wake_at == "tracker accepted create_a"
    assert [f.index for f in PAUSE.chances(POINTS, PAUSES, (5, 0))] == [6]


def test_a_pause_whose_restart_stopped_opens_a_wake_at_each_of_its_points() -> None:
    """The restart ran to its stop passing `points`: the same pause, waking at each; a held wake opens nothing."""
    stopped = Fault(PAUSE, 2, "tracker accepted create_a")
    assert stopped.next_moves(POINTS[:3]) == [waking_at(stopped, k, POINTS[:3]) for k in (1, 2, 3)]
    assert waking_at(stopped, 1, POINTS).next_moves(POINTS) == []
    assert Fault(LOST_REPLY, 2, "tracker accepted create_a").next_moves(POINTS) == []


class FakeRunner:
    """The runner's `pause`: records the fault and returns a result of its own."""

    def __init__(self) -> None:
        self.paused: list[Fault] = []

    def pause(self, fault: Fault) -> str:
        self.paused.append(fault)
        return "two live processes"


def test_a_pause_is_a_scenario_of_its_own_the_runner_runs() -> None:
    """The kind hands its move to the runner's pause (process/pausing.py); other kinds leave the runner's scenario."""
    runner = FakeRunner()
    fault = Fault(PAUSE, 1, "start: tmp written")
    assert fault.alone(runner) == "two live processes"
    assert runner.paused == [fault]
    assert Fault(LOST_REPLY, 2, "tracker accepted create_a").alone(runner) is None
    assert (PAUSE.every_scenario, PAUSE.doing) == (True, "pauses a process")
