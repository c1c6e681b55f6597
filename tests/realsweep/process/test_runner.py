"""The runner's zygote (its flags, its early start) and slots; its scenarios are run by test_engine/test_graph."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.process import zygotes
from crashsweep.realsweep.process.runner import Runner, _argv, _flags
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.values import SweepOptions, Target
from crashsweep.spec.job import TRIAGE
from tests.paths import ROOT
from tests.test_pause_oracle import HAND_DUPLICATING


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        ((sys.executable, "-S", "-m", "pkg.loop", "--variant", "x"), ("-S",)),
        ((sys.executable, "-S", "-B", "-m", "pkg.loop", "-S"), ("-S", "-B")),  # only the interpreter's, before -m
        ((sys.executable, "-X", "importtime", "-m", "pkg.loop"), ()),  # an option with an argument is not taken
        ((sys.executable, "-m", "pkg.loop"), ()),
        (("/usr/bin/other-python", "-S", "-m", "pkg.loop"), ()),  # another interpreter: its flags are its own
        ((sys.executable, "script.py", "-S"), ()),  # no -m: a script, not an entry point
        ((), ()),
    ],
)
def test_the_zygote_takes_the_interpreter_flags_of_the_targets_command(
    argv: tuple[str, ...], flags: tuple[str, ...]
) -> None:
    assert _flags(Target(argv, fork="pkg.loop:main")) == flags


def test_a_pause_sweep_on_one_worker_does_not_wait_on_its_own_slot(tmp_path: Path) -> None:
    """With one worker slot, a held process 1 must not keep its restart from starting.

    The two processes of a pause live at once; if each took one of the `--workers` slots, a
    single slot would go to the held process and the restart would wait for it forever. The
    sweep runs in a child process with a deadline: a hang fails the test instead of stalling it.
    """
    examples = ROOT / "examples"
    argv = [sys.executable, "-m", "crashsweep", "sweep", "--variant", "agent-loop", "--faults", "pause"]
    argv += ["--depth", "1", "--job", str(examples / "one-write.toml"), "--workers", "1", "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 1, done.stderr  # agent-loop's lock file stops no second process: violated
    row = json.loads(done.stdout)
    assert row["with_dups"] == HAND_DUPLICATING["file"]


def test_a_warmed_zygote_is_the_one_processes_fork_from_and_close_stops_it(tmp_path: Path) -> None:
    """`warm` starts the zygote on a thread: the runner's zygote is that one, and `close` ends it, used or not.

    (Where sweeps share zygotes, `close` keeps it for the next sweep instead: test_zygotes.py.)
    """
    target = reference.target("agent-loop", None, "keyed")
    for used in (False, True):
        root = tmp_path / f"used-{used}"
        root.mkdir()
        with zygotes.shared(False):
            runner = Runner(target, reference.check(TRIAGE), SweepOptions(tracker=None), root, None)
            runner.warm()
            assert runner._warming is not None
            runner._warming.join()
            zygote = runner._started
            assert zygote is not None
            if used:
                assert runner._zygote() is zygote
            runner.close()
            assert zygote._process.poll() is not None


def test_a_started_process_runs_under_the_points_machinery_its_points_need() -> None:
    """Each process's command line, by --points.

    marked: the target's argv; auto: the probe's entry, which installs the hooks, with the
    target's argv after its entry point; syscalls: the target under the tracer.
    """
    loop = reference.target("idempotency-keys", None, "keyed")
    assert _argv(loop, SweepOptions()) == loop.argv
    auto = _argv(loop, SweepOptions(points=Points(("auto",))))
    entry = (sys.executable, "-S", "-m", "crashsweep.realsweep.probe.entry")
    assert auto == (*entry, "crashsweep.realsweep.reference.loop:main", *loop.fork_argv)
    command = Target.command("./agent --fast")
    traced = _argv(command, SweepOptions(points=Points(("syscalls",))))
    assert traced[0] == sys.executable
    assert (traced[-3], traced[-1]) == ("--", "--fast")
    assert traced[-2].endswith("agent")  # made absolute by the tracer's wrap: the process runs in its work folder
