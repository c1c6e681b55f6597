"""The shim, one swept process: its points logged in order, the chosen call killed before it runs, the exit status."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from crashsweep.realsweep.syscalls import trace
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.syscalls.conftest import points, shim

SAVE = ["write state.json.tmp", "fsync state.json.tmp", "rename state.json.tmp -> state.json", "fsync ."]
REQUEST = ["connect <tracker>", "write <tracker>"]
MY_LOOP = [*SAVE, *REQUEST, *SAVE, *REQUEST, *SAVE]
"""my_loop.c's points from an empty folder: the start save, then per call a request and a save (3 saves of 4)."""


def loop(binary: Path, service: ServiceProcess, work: Path, *args: str, **env: str) -> int:
    work.mkdir(exist_ok=True)
    return shim([str(binary), *args], work, CRASHSWEEP_TRACKER_URL=service.space_url(work.name), **env).returncode


def test_my_loop_c_s_points_are_its_saves_and_requests_the_same_in_two_runs(
    my_loop_c: Path, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """Two runs from an empty folder name the same 16 points; stdout and the random run ID change nothing."""
    for run in ("one", "two"):
        assert loop(my_loop_c, keyed_service, tmp_path / run) == 0
    assert points(tmp_path / "one") == points(tmp_path / "two") == MY_LOOP
    assert [r["call"] for r in TrackerClient(keyed_service.space_url("one")).records()] == ["create_a", "create_b"]


STRACED = re.compile(r"^(?:\d+ +)?(\w+)\((?:\d+<([^>]*)>|\"([^\"]*)\", \"([^\"]*)\")")


@pytest.mark.requires_tool("strace")
def test_the_names_are_strace_s_calls(my_loop_c: Path, keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """strace, an independent tracer, lists the same calls in the same order on the same files and socket."""
    work = tmp_path / "w"
    work.mkdir()
    out = tmp_path / "strace.txt"
    command = ["strace", "-f", "-qq", "-y", "-o", str(out), "-e", "trace=write,fsync,rename,connect", str(my_loop_c)]
    env = {**os.environ, "CRASHSWEEP_TRACKER_URL": keyed_service.space_url("w")}
    subprocess.run(command, cwd=work, env=env, check=True, timeout=60)
    seen = []
    for line in out.read_text(encoding="utf-8").splitlines():
        found = STRACED.match(line)
        assert found, line
        call, fd_path, old, new = found.groups()
        what = f"{old} -> {new}" if old else "<tracker>" if fd_path.startswith("socket:") else fd_path
        seen.append(f"{call} {'.' if what == str(work.resolve()) else what.removeprefix(str(work.resolve()) + '/')}")
    assert seen == MY_LOOP


def test_a_kill_comes_before_the_chosen_call(my_loop_c: Path, keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """Killed at its first "write <tracker>": logged up to it, status -SIGKILL, the request never sent."""
    work = tmp_path / "w"
    assert loop(my_loop_c, keyed_service, work, CRASHSWEEP_CRASH_AT="1:write <tracker>") == -signal.SIGKILL
    assert points(work) == [*SAVE, *REQUEST]
    assert TrackerClient(keyed_service.space_url("w")).records() == []
    assert sorted(p.name for p in work.iterdir()) == ["state.json"]


def test_a_kill_at_the_second_rename_leaves_the_first_save(
    my_loop_c: Path, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """By occurrence ("2:rename ..."), and by index (the 9th point: the same call)."""
    for crash, work in (("2:rename state.json.tmp -> state.json", tmp_path / "a"), ("9", tmp_path / "b")):
        assert loop(my_loop_c, keyed_service, work, "--no-keys", CRASHSWEEP_CRASH_AT=crash) == -signal.SIGKILL
        assert points(work) == MY_LOOP[:9]
        assert '"create_a": 0' in (work / "state.json").read_text(encoding="utf-8")
        assert '"create_a": 1' in (work / "state.json.tmp").read_text(encoding="utf-8")


def test_the_where_log_and_the_filters(my_loop_c: Path, keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """--points-exclude by call (fsync) and by glob over the peer (tracker); the where log names each call."""
    work = tmp_path / "w"
    where = tmp_path / "where.log"
    env = {"CRASHSWEEP_POINTS_EXCLUDE": "fsync,tracker", "CRASHSWEEP_WHERE_LOG": str(where)}
    assert loop(my_loop_c, keyed_service, work, **env) == 0
    assert points(work) == ["write state.json.tmp", "rename state.json.tmp -> state.json"] * 3
    first = where.read_text(encoding="utf-8").splitlines()[0]
    assert first == "write state.json.tmp\twrite(3<state.json.tmp>)"


def test_a_dropped_call_on_the_work_folder_is_logged_as_a_pause(tmp_path: Path) -> None:
    """A call --points-exclude drops is no point, but is a pause "excluded <name>" after the points passed before it.

    Power loss reads it (names.at_risk): what it left unsynced is still lost by a cut.
    """
    work, pauses = tmp_path / "w", tmp_path / "pauses.log"
    work.mkdir()
    env = {"CRASHSWEEP_POINTS": "syscalls", "CRASHSWEEP_POINTS_EXCLUDE": "wal", "CRASHSWEEP_PAUSES_LOG": str(pauses)}
    run = shim(["/bin/sh", "-c", "echo a > wal; echo b > f"], work, **env)
    assert run.returncode == 0, run.stderr
    assert points(work) == ["write f"]
    assert pauses.read_text(encoding="utf-8").splitlines() == ["0 excluded write wal"]


def test_the_program_s_own_status_and_output(tmp_path: Path) -> None:
    """Not killed: the program's status; its standard output is no point (the runner's log), a file it writes is."""
    run = shim(["/bin/sh", "-c", "echo out; echo data > f; exit 3"], tmp_path)
    assert (run.returncode, run.stdout) == (3, "out\n")
    assert points(tmp_path) == ["write f"]


def test_the_program_runs_without_the_protocol_s_variables(tmp_path: Path) -> None:
    """A traced program sees no CRASHSWEEP_POINTS_LOG (its own marks pass silently) but keeps the work folder."""
    run = shim(["/bin/sh", "-c", "echo ${CRASHSWEEP_POINTS_LOG:-none} $CRASHSWEEP_WORKDIR"], tmp_path)
    assert run.stdout == f"none {tmp_path}\n"


def test_a_bad_crash_point_and_no_program_are_one_line_and_status_2(tmp_path: Path) -> None:
    run = shim(["/bin/true"], tmp_path, CRASHSWEEP_CRASH_AT="x:y")
    assert run.returncode == 2
    assert run.stderr.startswith("crashsweep trace: CRASHSWEEP_CRASH_AT='x:y'")
    assert trace.main([]) == 2
