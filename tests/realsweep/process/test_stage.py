"""The scenario under way a fault kind acts on: its next process, run by the runner with the kind's variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from crashsweep.realsweep.process.runner import Runner
from crashsweep.realsweep.process.stage import FaultStage
from crashsweep.realsweep.values import Crash


class FakeRunner:
    """Records each process `ended` is asked to run."""

    def __init__(self) -> None:
        self.ran: list[tuple[Any, ...]] = []

    def ended(self, *args: Any) -> tuple[int, list[str]]:
        self.ran.append(args)
        return -9, []


def test_kill_runs_the_stage_s_process_with_the_kind_s_variables_added(tmp_path: Path) -> None:
    runner = FakeRunner()
    crashes = (Crash(3, "start"),)
    stage = FaultStage(cast(Runner, runner), tmp_path, tmp_path / "work", {"A": "1", "B": "2"}, 2, crashes)
    stage.kill("1:saved", {"B": "3"})
    assert runner.ran == [(tmp_path, tmp_path / "work", {"A": "1", "B": "3"}, 2, "1:saved", crashes)]
    assert stage.env == {"A": "1", "B": "2"}  # the scenario's own environment is left as it was
