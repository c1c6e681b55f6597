"""crashsweep.cli.sweep_modes: one function per mode, chosen by the request, and the real side's errors as one line.

The modes' own output is tested through real runs in test_sweep.py, test_sweep_points.py and
test_sweep_determinism.py; here the table is: every mode has its function, the command reaches
the one its options ask for, and what the function raises becomes the exit status it should.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli import sweep_modes
from crashsweep.cli.main import main
from crashsweep.cli.sweep_plan import Mode, SweepRequest
from crashsweep.cli.sweep_sources import Source
from crashsweep.realsweep import api
from crashsweep.spec.history import KEPT
from tests.realsweep.helpers import child_env
from tests.realsweep.process.kin import wait_until

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


TORN = Path(__file__).parents[1] / "realsweep" / "process"
TORN_SWEEP = ["sweep", "--target", "torn_store:run", "--check", "torn_store:check", "--depth", "1"]


@pytest.mark.parametrize("dedup", ["--dedup", "--no-dedup"])
def test_restarts_that_cannot_recover_are_the_sweeps_finding(
    dedup: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store left with "Extra data" by a crash: each such restart counted and named, the sweep finished (exit 1).

    torn_store's crashes at its 2nd and 3rd `saved` leave the old text's tail; the 1st is over an empty file.
    """
    monkeypatch.chdir(TORN)
    record = tmp_path / "scenarios.jsonl"
    assert main([*TORN_SWEEP, dedup, "--scenarios", str(record)]) == 1
    out = capsys.readouterr().out
    said = "the restart exited with status 1: json.decoder.JSONDecodeError: Extra data: line 1 column 20 (char 19)"
    assert "(6 in all, 2 never finish)" in out
    assert f"  unrecovered   2 scenario(s) end in a restart that cannot recover (first 4: {said})\n" in out
    assert "  can-finish    VIOLATED  first in scenario 4: crash at point 4 'saved', restart, which cannot" in out
    assert "  no-loss       holds\n" in out
    assert "  re-run (can-finish, scenario 4, its restart exits with status 1):  " in out
    assert out.rstrip().endswith("--crash 'saved#2'")
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    failed = {line["code"]: line["outcome"].get("exit_status") for line in lines if line["outcome"].get("stuck")}
    assert failed == {"4": 1, "6": 1}
    assert main([*TORN_SWEEP[:5], "--crash", "saved#2"]) == 1  # the re-run line's scenario, alone
    assert f"  crash at 'saved#2', restart, which cannot recover ({said})\n" in capsys.readouterr().out


def test_a_program_that_fails_in_its_uninterrupted_run_is_an_error_of_the_program(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No crash before it: exit 1, the program failed, named by its exception; no row."""
    monkeypatch.chdir(TORN)
    monkeypatch.setenv("TORN_FIRST", "1")
    assert main(TORN_SWEEP) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "crashsweep: the program failed: the uninterrupted run, process 1: exited with status 1: "
        "RuntimeError: the store's folder is read-only\n"
    )


@pytest.mark.parametrize(
    ("crash", "line"),
    [
        ("saved#7", "--crash 'saved#7': the program passes 'saved' 3 times (saved#1 to saved#3)"),
        ("saved#" + "1" * 23, "Invalid value for --crash: 'saved#" + "1" * 23 + "': a pass beyond 1,000,000,000"),
    ],
)
def test_a_crash_beyond_the_passes_of_its_point_is_refused_in_one_line(
    crash: str, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--crash NAME#K past NAME's passes: exit 2, one line with the passes (a huge K: before any process)."""
    monkeypatch.chdir(TORN)
    assert main([*TORN_SWEEP[:5], "--crash", crash]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"crashsweep: error: {line}")


def test_sigterm_keeps_the_scenarios_finished_so_far_and_says_how_many(tmp_path: Path) -> None:
    """SIGTERM to `sweep --scenarios FILE` of every scenario: FILE holds each finished one, whole; exit 130, one line.

    torn_store sleeps 0.2 s a process: at depth 2, one worker, the sweep takes many seconds; it is
    stopped once three scenarios are recorded.
    """
    record = tmp_path / "scenarios.jsonl"
    command = [str(Path(sys.executable).with_name("crashsweep")), *TORN_SWEEP[:5], "--depth", "2", "--no-dedup"]
    command += ["--workers", "1", "--scenarios", str(record)]
    env = child_env(TORN_SLOW="0.2")
    process = subprocess.Popen(command, cwd=TORN, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def recorded() -> int:
        return sum(p.read_text().count("\n") for p in tmp_path.iterdir() if p.name.endswith(".partial"))

    try:
        wait_until(lambda: recorded() >= 3 or process.poll() is not None, 120, "three scenarios")
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    kept = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(kept) >= 3
    assert kept[0]["code"] == ""  # the uninterrupted run first
    assert err.count("\n") == 1
    said = re.fullmatch(
        r"crashsweep: interrupted after (\d+) of the (\d+) scenarios known so far; the (\d+) scenario\(s\) finished"
        r" \(the uninterrupted run first\) are in (.+)\n",
        err,
    )
    assert said is not None, err
    assert (int(said[3]), said[4]) == (len(kept), str(record))
    assert len(kept) - int(said[1]) in (1, 2)  # the uninterrupted run, and one more if stopped before the count
    assert int(said[2]) > int(said[1])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_sigterm_to_a_merging_sweep_keeps_a_scenario_per_final_world_reached(tmp_path: Path) -> None:
    """SIGTERM to a merging `sweep --scenarios FILE`: FILE holds a scenario per final world known; exit 130, one line.

    It is stopped once a few worlds are saved in its --keep folder and some final world was reached
    (a kept process's history.jsonl is written then): under load, three saved worlds alone did
    not always mean the baseline had ended, and with none reached no record is written.
    """
    record, keep = tmp_path / "scenarios.jsonl", tmp_path / "keep"
    command = [str(Path(sys.executable).with_name("crashsweep")), *TORN_SWEEP[:5], "--depth", "2"]
    command += ["--workers", "1", "--scenarios", str(record), "--keep", str(keep)]
    env = child_env(TORN_SLOW="0.2")
    process = subprocess.Popen(command, cwd=TORN, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def saved() -> int:
        return len(list((keep / "worlds").iterdir())) if (keep / "worlds").exists() else 0

    def reached() -> bool:
        return any((keep / "processes").glob(f"*/{KEPT}"))

    try:
        wait_until(lambda: (saved() >= 3 and reached()) or process.poll() is not None, 120, "three worlds, one final")
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    kept = [json.loads(line) for line in record.read_text().splitlines()]
    assert kept
    assert kept[0]["code"] == ""  # the uninterrupted run first
    assert err.count("\n") == 1
    said = re.fullmatch(
        r"crashsweep: interrupted after \d+ of the \d+ processes known so far; the (\d+) scenario\(s\) whose final"
        r" world was reached \(the uninterrupted run first\) are in (.+); the work folders swept so far stay in .+\n",
        err,
    )
    assert said is not None, err
    assert (int(said[1]), said[2]) == (len(kept), str(record))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize(
    ("args", "per_core"),
    [
        (["--framework", "temporal"], sweep_modes.SERVER_WORKERS_PER_CORE),  # its state is in its server
        (["--framework", "temporal", "--workers", "3"], None),  # given: as given
        (["--framework", "langgraph"], 1),
    ],
)
def test_a_source_whose_state_is_in_a_server_runs_more_processes_than_cores_unless_told(
    monkeypatch: pytest.MonkeyPatch, args: list[str], per_core: int | None
) -> None:
    """Temporal's processes wait on its server: without --workers, SERVER_WORKERS_PER_CORE a core; else as given."""
    from crashsweep.cli import limits

    swept: list[api.SweepOptions] = []

    def sweep(target: object, check: object, options: api.SweepOptions, *rest: object) -> None:
        swept.append(options)
        raise SystemExit(0)

    monkeypatch.setattr(api, "sweep", sweep)
    with pytest.raises(SystemExit):
        main(["sweep", *args, "--depth", "1", "--no-determinism", "--no-dedup"])
    cores = limits.cores() if per_core != 1 else os.cpu_count()  # the default of every other source
    expected = 3 if per_core is None else per_core * (cores or 1)
    assert [options.workers for options in swept] == [expected]
