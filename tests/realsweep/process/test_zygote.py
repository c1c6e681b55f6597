"""The fork server: each process a fresh fork that never saw the previous one, killed for real."""

from __future__ import annotations

import os
import signal
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from crashsweep.realsweep.process.zygote import Zygote, ZygoteError
from tests.realsweep.helpers import child_env

MODULE = textwrap.dedent(
    """
    import os, sys, time
    from crashsweep.realsweep.probe.crashpoint import crashpoint
    CALLS = []

    def main():
        CALLS.append(1)
        print("calls", len(CALLS), "cwd", os.getcwd(), "argv", sys.argv[1:], "colour", os.environ.get("COLOUR"))
        mode = os.environ.get("MODE")
        if mode == "crash":
            try:
                crashpoint("inside")
            finally:
                print("finally ran")
        if mode == "exit":
            raise SystemExit(3)
        if mode == "raise":
            raise RuntimeError("boom")
        if mode == "sleep":
            time.sleep(30)
    """
)


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[Zygote]:
    """A zygote of zmod:main."""
    (tmp_path / "zmod.py").write_text(MODULE)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("zmod:main", env, tmp_path / "zygote.log")
    yield server
    server.close()


def test_each_process_starts_from_the_zygotes_memory(zygote: Zygote, tmp_path: Path) -> None:
    """Two runs: each sees CALLS == [] at start (a fork of the zygote, not of the last child), its cwd and env."""
    work = tmp_path / "work"
    work.mkdir()
    for n in range(2):
        status = zygote.run(["a", "b"], work, {"COLOUR": f"c{n}"}, tmp_path / f"out{n}.txt", 30)
        assert status == 0
        assert (tmp_path / f"out{n}.txt").read_text().strip() == f"calls 1 cwd {work} argv ['a', 'b'] colour c{n}"


def test_a_crash_point_kills_the_fork_with_sigkill(zygote: Zygote, tmp_path: Path) -> None:
    """The chosen point kills the child: status -9, and its finally block never ran."""
    env = {"MODE": "crash", "CRASHSWEEP_POINTS_LOG": str(tmp_path / "p.log"), "CRASHSWEEP_CRASH_AT": "1"}
    assert zygote.run([], tmp_path, env, tmp_path / "out.txt", 30) == -9
    assert "finally ran" not in (tmp_path / "out.txt").read_text()
    assert zygote.run([], tmp_path, {}, tmp_path / "out2.txt", 30) == 0  # the zygote goes on


def test_exit_statuses_and_tracebacks_reach_the_parent(zygote: Zygote, tmp_path: Path) -> None:
    """SystemExit(3) gives 3; an exception gives 1 with its traceback in the output."""
    assert zygote.run([], tmp_path, {"MODE": "exit"}, tmp_path / "exit.txt", 30) == 3
    assert zygote.run([], tmp_path, {"MODE": "raise"}, tmp_path / "raise.txt", 30) == 1
    assert "RuntimeError: boom" in (tmp_path / "raise.txt").read_text()


def test_a_zygote_of_a_missing_entry_point_fails_to_start(tmp_path: Path) -> None:
    """An entry point that cannot be imported: ZygoteError with the reason."""
    with pytest.raises(ZygoteError, match="no_such_module"):
        Zygote("no_such_module:main", child_env(), tmp_path / "zygote.log")


def test_the_zygote_starts_with_the_interpreter_flags_it_is_given(tmp_path: Path) -> None:
    """flags=("-S",): the forked processes run without site, as `python -S -m ...` would; without flags, with it."""
    (tmp_path / "flagmod.py").write_text("import sys\n\ndef main():\n    print('no_site', sys.flags.no_site)\n")
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    for flags, expected in (((), "no_site 0"), (("-S",), "no_site 1")):
        server = Zygote("flagmod:main", env, tmp_path / "zygote.log", flags=flags)
        try:
            assert server.run([], tmp_path, {}, tmp_path / "out.txt", 30) == 0
        finally:
            server.close()
        assert (tmp_path / "out.txt").read_text().strip() == expected


MEETING = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path

    def main():
        folder = Path(os.environ["FOLDER"])
        (folder / os.environ["NAME"]).write_text(str(os.getpid()))
        deadline = time.monotonic() + 20
        while len(list(folder.iterdir())) < int(os.environ["COUNT"]):
            if time.monotonic() > deadline:
                sys.exit(4)  # the others never ran beside this one
            time.sleep(0.01)
    """
)


def test_one_zygote_runs_the_processes_of_several_threads_at_once(tmp_path: Path) -> None:
    """Three threads, three children that each wait until all three exist: they can only all exit 0 together."""
    (tmp_path / "meet.py").write_text(MEETING)
    folder = tmp_path / "met"
    folder.mkdir()
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("meet:main", env, tmp_path / "zygote.log")
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            runs = [
                pool.submit(
                    server.run,
                    [],
                    tmp_path,
                    {"FOLDER": str(folder), "NAME": f"p{n}", "COUNT": "3"},
                    tmp_path / f"o{n}",
                    60,
                )
                for n in range(3)
            ]
            assert [run.result() for run in runs] == [0, 0, 0]
        pids = {(folder / f"p{n}").read_text() for n in range(3)}
        assert len(pids) == 3
    finally:
        server.close()


def test_a_zygote_that_dies_fails_the_requests_waiting_on_it(tmp_path: Path) -> None:
    """SIGKILL to the zygote while its child runs: the waiting run raises ZygoteError, and so does the next."""
    (tmp_path / "meet.py").write_text(MEETING)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("meet:main", env, tmp_path / "zygote.log")
    folder = tmp_path / "met"
    folder.mkdir()
    request = {"FOLDER": str(folder), "NAME": "p0", "COUNT": "2"}  # waits for a second process that never comes
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            waiting = pool.submit(server.run, [], tmp_path, request, tmp_path / "o0", 60)
            # Its pid written, not only its file made: write_text creates the file, then writes.
            while not ((folder / "p0").exists() and (folder / "p0").read_text().strip().isdigit()):
                time.sleep(0.01)
            os.kill(server.pid, signal.SIGKILL)
            with pytest.raises(ZygoteError, match="died"):
                waiting.result()
        with pytest.raises(ZygoteError, match="died"):
            server.run([], tmp_path, request, tmp_path / "o1", 60)
    finally:
        server.close()
        os.kill(int((folder / "p0").read_text()), signal.SIGKILL)


WARMING = textwrap.dedent(
    """
    import os, sys
    WARMED = {}

    def zygote_warm(argv):
        if argv == ["refused"]:
            raise SystemExit(2)
        WARMED[tuple(argv)] = os.getpid()

    def main():
        print("warmed by", WARMED.get(tuple(sys.argv[1:])), "child", os.getpid())
    """
)


def test_the_modules_warm_function_runs_in_the_zygote_before_each_fork(tmp_path: Path) -> None:
    """zygote_warm(argv) runs in the zygote (its PID), so the child finds its result; what it raises is ignored."""
    (tmp_path / "wmod.py").write_text(WARMING)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("wmod:main", env, tmp_path / "zygote.log")
    try:
        assert server.run(["--a", "1"], tmp_path, {}, tmp_path / "out.txt", 30) == 0
        warmed, _, child = (tmp_path / "out.txt").read_text().split()[2:]
        assert int(warmed) == server.pid != int(child)
        assert server.run(["refused"], tmp_path, {}, tmp_path / "refused.txt", 30) == 0
        assert (tmp_path / "refused.txt").read_text().split()[2] == "None"
    finally:
        server.close()


REGISTERING = textwrap.dedent(
    """
    from crashsweep.realsweep.process import warming

    CALLS = []

    def zygote_warm(argv):
        CALLS.append("own")

    def other(argv):
        CALLS.append("registered")

    warming.register(zygote_warm)  # as a module that imports an adapter's warm-up as its own
    warming.register(other)

    def main():
        print(" ".join(CALLS))
    """
)


def test_registered_warm_ups_run_before_each_fork_and_the_modules_own_once(tmp_path: Path) -> None:
    """The entry's zygote_warm, then each registered warm-up but that same one: one call each per fork."""
    (tmp_path / "rmod.py").write_text(REGISTERING)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("rmod:main", env, tmp_path / "zygote.log")
    try:
        assert server.run([], tmp_path, {}, tmp_path / "one.txt", 30) == 0
        assert server.run([], tmp_path, {}, tmp_path / "two.txt", 30) == 0
    finally:
        server.close()
    assert (tmp_path / "one.txt").read_text().split() == ["own", "registered"]
    assert (tmp_path / "two.txt").read_text().split() == ["own", "registered"] * 2


def test_when_its_stdin_closes_the_zygote_kills_the_processes_still_running(tmp_path: Path) -> None:
    """The sweep gone (its end of stdin closed, as by SIGKILL), a hung child is killed, not left to run on."""
    from tests.realsweep.process.kin import alive, wait_until

    hang = "import os, time\n\ndef main():\n    print(os.getpid(), flush=True)\n    time.sleep(600)\n"
    (tmp_path / "hang.py").write_text(hang)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("hang:main", env, tmp_path / "zygote.log")
    output = tmp_path / "out.txt"
    pool = ThreadPoolExecutor(1)
    child = 0
    try:
        running = pool.submit(server.run, [], tmp_path, env, output, 600)
        wait_until(lambda: output.exists() and output.read_text().strip().isdigit(), 30, "the child's start")
        child = int(output.read_text())
        assert server._process.stdin is not None
        server._process.stdin.close()
        assert running.result(timeout=30) == -signal.SIGKILL
        wait_until(lambda: not alive(child), 10, "the child's end")
    finally:
        if child and alive(child):
            os.kill(child, signal.SIGKILL)
        pool.shutdown(wait=True)
        server.close()


ENTRY = textwrap.dedent(
    """
    import os, sys
    import rmod

    LOADED_IN = os.getpid()

    def other():
        warmed = " ".join(rmod.CALLS) or "none"
        print("warm-ups", warmed, "argv", sys.argv[1:], "loaded-in-zygote", LOADED_IN != os.getpid())
        return 5
    """
)


def test_a_request_may_name_another_entry_point_run_without_the_programs_warm_ups(tmp_path: Path) -> None:
    """`entry`: the child runs it (its module loaded once, in the zygote), with none of the program's warm-ups.

    The zygote's own entry point (rmod:main) still gets its warm-ups after.
    """
    (tmp_path / "rmod.py").write_text(REGISTERING)
    (tmp_path / "emod.py").write_text(ENTRY)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("rmod:main", env, tmp_path / "zygote.log")
    try:
        assert server.run(["x"], tmp_path, {}, tmp_path / "entry.txt", 30, entry="emod:other") == 5
        assert server.run([], tmp_path, {}, tmp_path / "program.txt", 30) == 0
        assert server.run([], tmp_path, {}, tmp_path / "missing.txt", 30, entry="emod:nothing") == 1
    finally:
        server.close()
    said = (tmp_path / "entry.txt").read_text().split()
    assert said == ["warm-ups", "none", "argv", "['x']", "loaded-in-zygote", "True"]
    assert (tmp_path / "program.txt").read_text().split() == ["own", "registered"]
    assert "'emod' has no 'nothing'" in (tmp_path / "missing.txt").read_text()


def test_a_reused_zygote_forks_as_fresh_logs_where_told_and_starts_its_clock_again(
    zygote: Zygote, tmp_path: Path
) -> None:
    """reuse(log): "" (it can serve another sweep); its log is `log` from then on, its first fork the next one."""
    assert zygote.run([], tmp_path, {}, tmp_path / "one.txt", 30) == 0
    assert zygote.first_fork is not None
    assert zygote.reuse(None) == ""  # only asked: nothing moves
    assert zygote.log == tmp_path / "zygote.log"
    assert zygote.first_fork is not None
    moved = tmp_path / "next" / "zygote.log"
    moved.parent.mkdir()
    assert zygote.reuse(moved) == ""
    assert zygote.log == moved
    assert zygote.first_fork is None  # reuse() reset it
    assert moved.read_bytes() == b""
    assert zygote.run([], tmp_path, {}, tmp_path / "two.txt", 30) == 0
    assert (tmp_path / "two.txt").read_text().startswith("calls 1 ")  # a fork of the zygote, never of the last child
    assert zygote.first_fork is not None


def test_a_zygote_declines_reuse_while_a_process_runs_and_once_it_died(zygote: Zygote, tmp_path: Path) -> None:
    """Each reason a zygote cannot serve another sweep, in its words."""
    with ThreadPoolExecutor(1) as pool:
        sleeping = pool.submit(zygote.run, [], tmp_path, {"MODE": "sleep"}, tmp_path / "sleep.txt", 60)
        deadline = time.monotonic() + 30
        while not (tmp_path / "sleep.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert zygote.reuse(None) == "a process of the last sweep still runs"
        zygote.halt()  # the zygote kills what runs, and ends
        assert sleeping.result() == -9
    assert zygote.reuse(None).startswith("zmod:main: the fork server died")


def test_a_zygote_declines_reuse_once_a_file_it_imported_changed(zygote: Zygote, tmp_path: Path) -> None:
    """The program's module edited after the zygote imported it: the zygote names it and declines."""
    assert zygote.reuse(None) == ""
    with open(tmp_path / "zmod.py", "a", encoding="utf-8") as module:
        module.write("# edited\n")
    assert zygote.reuse(None) == f"{tmp_path / 'zmod.py'} changed since it was imported"


SERVING = textwrap.dedent(
    """
    import subprocess, sys

    SERVER = []

    def zygote_warm(argv):
        if not SERVER:  # a server of the zygote's own, as Temporal's dev server is
            SERVER.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))

    def main():
        pass
    """
)


def test_a_zygote_whose_warm_up_started_a_process_declines_reuse(tmp_path: Path) -> None:
    """What its warm-up started holds the last sweep's state: the zygote is not reused."""
    (tmp_path / "smod.py").write_text(SERVING)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    server = Zygote("smod:main", env, tmp_path / "zygote.log")
    try:
        assert server.reuse(None) == ""
        assert server.run([], tmp_path, {}, tmp_path / "out.txt", 30) == 0
        assert server.reuse(None) == "its warm-up started processes of its own"
    finally:
        server.close()
