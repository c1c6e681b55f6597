"""A swept process's descendants die with it: forks, double forks and setsid() daemons, in every mode."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crashsweep.realsweep.process import descendants
from crashsweep.realsweep.sweep import Outcome, Scenario, SweepError, SweepOptions, Target, sweep
from tests.realsweep.process import forking_program
from tests.realsweep.process.kin import parent_of, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER, /proc")

HERE = str(Path(__file__).resolve().parents[3])


def _gone(pid: int) -> bool:
    """Whether `pid` no longer runs: no such process (os.kill(pid, 0)), or a zombie no one reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return parent_of(pid) is None


def _swept(tmp_path: Path, **extra: object) -> tuple[list[int], BaseException | None]:
    """Sweep the forking program for real at depth 1; the PIDs its processes wrote, and what the sweep raised."""
    pids = tmp_path / "pids"
    pids.mkdir()
    target = Target.entry_point("tests.realsweep.process.forking_program:main", path=[HERE])
    target = Target(target.argv, {**target.env, forking_program.PIDS: str(pids)}, target.label, target.fork)
    options = SweepOptions(depth=1, workers=2, tracker=None, root=tmp_path / "sweep", **extra)  # type: ignore[arg-type]
    raised: BaseException | None = None
    try:
        sweep(target, _check, options)
    except SweepError as error:
        raised = error
    written = [int(path.read_text()) for path in pids.iterdir() if path.read_text()]
    return written, raised


def _check(scenario: Scenario) -> Outcome:
    return Outcome()


def _end_all(pids: list[int]) -> None:
    """Kill what a failing test left (the PIDs the program wrote), so that it does not outlive the test."""
    for pid in pids:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "extra",
    [{}, {"spawn": "exec"}, {"dedup": True}],
    ids=["zygote", "exec", "merging"],
)
def test_no_process_of_a_swept_program_outlives_the_sweep(tmp_path: Path, extra: dict[str, object]) -> None:
    pids, raised = _swept(tmp_path, **extra)
    try:
        assert raised is None
        assert len(pids) >= 3 * 2 * 3  # the baseline's six, and at least two runs of each scenario
        wait_until(lambda: all(_gone(pid) for pid in pids), 5.0, "the program's forks end")
    finally:
        _end_all(pids)


def test_a_failing_check_leaves_no_process_of_the_program(tmp_path: Path) -> None:
    def failing(scenario: Scenario) -> Outcome:
        raise RuntimeError("no")

    pids = tmp_path / "pids"
    pids.mkdir()
    target = Target.entry_point("tests.realsweep.process.forking_program:main", path=[HERE])
    target = Target(target.argv, {**target.env, forking_program.PIDS: str(pids)}, target.label, target.fork)
    with pytest.raises(SweepError, match="the check failed"):
        sweep(target, failing, SweepOptions(depth=1, workers=1, tracker=None, root=tmp_path / "sweep"))
    written = [int(path.read_text()) for path in pids.iterdir() if path.read_text()]
    try:
        assert written
        wait_until(lambda: all(_gone(pid) for pid in written), 5.0, "the program's forks end")
    finally:
        _end_all(written)


def test_end_orphans_kills_and_reaps_the_adopted_ones_but_those_kept(tmp_path: Path) -> None:
    """In a subreaper: a daemon's setsid() grandchild comes back to it once its parent is gone, and is ended."""
    code = f"""
import os, sys, time
sys.path.insert(0, {HERE!r})
from crashsweep.realsweep.process import descendants
assert descendants.subreaper()
kept = os.fork()
if kept == 0:
    time.sleep(60); os._exit(0)
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60); os._exit(0)
    os._exit(0)
os.waitpid(middle, 0)
time.sleep(0.2)
ended = descendants.end_orphans({{kept}})
print(len(ended), kept in ended, descendants.children(os.getpid()) == [kept])
os.kill(kept, 9); os.waitpid(kept, 0)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.split() == ["1", "False", "True"], done.stderr


def test_end_marked_kills_the_processes_started_with_the_mark(tmp_path: Path) -> None:
    env = {**os.environ, "CRASHSWEEP_TEST_MARK": str(tmp_path)}
    marked = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env, start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.2)
        assert descendants.end_marked("CRASHSWEEP_TEST_MARK", str(tmp_path)) == [marked.pid]
        assert marked.wait(5) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
        marked.kill()
        marked.wait()
