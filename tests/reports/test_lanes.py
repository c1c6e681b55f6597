"""Tests of crashsweep.reports.lanes: which process acts in each step, and in which lane."""

from __future__ import annotations

from crashsweep.reports.counterexample import Counterexample
from crashsweep.reports.lanes import actors, two_lanes


def test_one_process_per_lane_through_a_pause_and_a_wake(pause_cx: Counterexample) -> None:
    """Process 1 runs in lane 0 until its pause; process 2 starts in lane 1; process 1 wakes in lane 0."""
    assert two_lanes(pause_cx.steps)
    who = actors(pause_cx.steps)
    assert [(a.number, a.lane) for a in who[:2]] == [(1, 0), (1, 0)]
    pause = next(i for i, step in enumerate(pause_cx.steps) if step.kind == "fault")
    wake = next(i for i, step in enumerate(pause_cx.steps) if step.action == "wake")
    assert (who[pause].number, who[pause].lane, who[pause].paused) == (2, 1, 1)
    assert all((a.number, a.lane) == (2, 1) for a in who[pause:wake])
    assert (who[wake].number, who[wake].lane, who[wake].held) == (1, 0, 2)
    assert all((a.number, a.lane) == (1, 0) for a in who[wake:])


def test_a_single_process_path_has_one_lane(sar_cx: Counterexample) -> None:
    """Crashes and restarts: each restart is a new process, always in the first lane."""
    assert not two_lanes(sar_cx.steps)
    who = actors(sar_cx.steps)
    assert {a.lane for a in who} == {0}
    restarts = sum(step.kind == "restart" for step in sar_cx.steps)
    assert max(a.number for a in who) == 1 + restarts
