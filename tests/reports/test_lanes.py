"""Tests of crashsweep.reports.lanes: which process acts in each step, and in which lane."""

from __future__ import annotations

from pathlib import Path

from crashsweep.explorer.path import replay
from crashsweep.reports.counterexample import Counterexample, from_path
from crashsweep.reports.lanes import actors, two_lanes
from crashsweep.reports.trace import text
from crashsweep.spec.job import load_job
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model
from crashsweep.variants.design_file import load_design


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


def test_a_retry_on_a_timeout_starts_a_second_lane() -> None:
    """RETRIES.md 1.2: a timeout suspends the attempt and its retry starts beside it, as a pause does.

    keys-turn-timeout-file on one-write: process 1 times out at its reply's temp file (step 5);
    process 2 runs in lane 1 until process 1 wakes (step 13) and sends create_a again.
    """
    root = Path(__file__).resolve().parents[2]
    job = load_job(root / "examples" / "one-write.toml")
    loop = model(load_design(root / "examples" / "keys-turn-timeout-file.toml").design, job, KEYED)
    path = replay(loop, 1, "14:5=2,13=1")
    cx = from_path(loop, path, variant="t", job="one-write", job_file=None, tracker="keyed", depth=1)
    assert two_lanes(cx.steps)
    who = actors(cx.steps)
    assert (who[4].number, who[4].lane, who[4].paused) == (2, 1, 1)
    assert (who[12].number, who[12].lane, who[12].held) == (1, 0, 2)
    assert "process 1 TIMED OUT" in text(cx)
