"""crashsweep.cli.sweep_modes: one function per mode, chosen by the request, and the real side's errors as one line.

The modes' own output is tested through real runs in test_sweep.py, test_sweep_points.py and
test_sweep_determinism.py; here the table is: every mode has its function, the command reaches
the one its options ask for, and what the function raises becomes the exit status it should.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.cli import sweep_modes
from crashsweep.cli.main import main
from crashsweep.cli.sweep_plan import Mode, SweepRequest
from crashsweep.cli.sweep_sources import Source
from crashsweep.realsweep import api

AGENT = ["sweep", "--variant", "agent-loop"]


def test_every_mode_has_its_function() -> None:
    assert set(sweep_modes.MODES) == set(Mode)


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ([], Mode.SWEEP),
        (["--list-points"], Mode.LIST_POINTS),
        (["--determinism"], Mode.DETERMINISM),
        (["--crash", "reply 1 arrived"], Mode.CRASH),
    ],
)
def test_the_command_hands_the_request_to_its_modes_function(
    args: list[str], mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mode's function gets the request, the source it names (with --spawn) and the sweep's options."""
    seen: list[tuple[Mode, str, list[str]]] = []

    def stand_in(request: SweepRequest, source: Source, options: api.SweepOptions) -> int:
        seen.append((request.mode, source.label, source.command[-2:]))
        return 7

    monkeypatch.setattr(sweep_modes, "MODES", dict.fromkeys(Mode, stand_in))
    assert main([*AGENT, *args]) == 7
    assert seen == [(mode, "agent-loop", ["--spawn", "fork"])]


@pytest.mark.parametrize(
    ("raised", "status", "line"),
    [
        (api.TargetFailed("it exited 3"), 1, "crashsweep: the program failed: it exited 3\n"),
        (api.SweepError("no cluster"), 2, "crashsweep: error: no cluster\n"),
        (ValueError("--arg x: m takes y"), 2, "crashsweep: error: --arg x: m takes y\n"),
    ],
)
def test_what_the_real_side_raises_is_one_line(
    raised: Exception, status: int, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing(*_: object) -> int:
        raise raised

    monkeypatch.setattr(sweep_modes, "MODES", {**sweep_modes.MODES, Mode.SWEEP: failing})
    assert main(AGENT) == status
    assert capsys.readouterr() == ("", line)


def test_ctrl_c_with_keep_says_what_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C with --keep: the folder's name (runs.Interrupted, exit 130); without it, nothing was written."""

    def interrupted(*_: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_modes, "MODES", {**sweep_modes.MODES, Mode.SWEEP: interrupted})
    kept = tmp_path / "kept"
    assert main([*AGENT, "--keep", str(kept)]) == 130
    assert capsys.readouterr().err == f"crashsweep: interrupted; the work folders swept so far stay in {kept}\n"
    assert main(AGENT) == 130
    assert capsys.readouterr().err.strip() == "crashsweep: interrupted; nothing was written"  # (click's empty line)


def test_progress_counts_scenarios_or_processes(capsys: pytest.CaptureFixture[str]) -> None:
    """Not on a terminal, the progress line stays quiet."""
    progress = sweep_modes.Progress("sweep", "processes")
    progress(3, 10)
    progress.done()
    assert (progress.unit, capsys.readouterr().err) == ("processes", "")


def test_fail_says_one_line_and_gives_the_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert sweep_modes.fail("error: x", 2) == 2
    assert capsys.readouterr().err == "crashsweep: error: x\n"
