"""The tracer: each call of a program and its children at entry and exit, its status, a kill that skips the call."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

import pytest

from crashsweep.realsweep.syscalls import calls, ptrace, seccomp

SH = ("/bin/sh", "-c")


class Recorder(ptrace.Tracee):
    """Decodes every call; kills the program at the first write to `kill_at` (a full path) when given.

    `watch`: the calls the program stops at (calls.WATCH: those decode() reads; None: all).
    """

    def __init__(self, kill_at: str = "", watch: seccomp.Watch | None = None) -> None:
        self.effects: list[tuple[int, calls.Effect]] = []
        self.exits = self.entries = 0
        self.kill_at = kill_at
        self.watch = watch
        self.tracer: ptrace.Tracer | None = None

    def entry(self, pid: int, arch: int, nr: int, args: tuple[int, ...]) -> None:
        self.entries += 1
        effect = calls.decode(pid, arch, nr, args)
        if effect is None:
            return
        self.effects.append((pid, effect))
        if self.kill_at and effect.op == "write" and effect.paths == (self.kill_at,):
            assert self.tracer is not None
            self.tracer.kill_all()

    def exit(self, pid: int, rval: int) -> None:
        self.exits += 1


WATCHES = pytest.mark.parametrize("watch", [None, calls.WATCH], ids=["every call", "filtered"])


def traced(
    command: str, cwd: Path, kill_at: str = "", watch: seccomp.Watch | None = None, argv: tuple[str, ...] = SH
) -> tuple[int, Recorder]:
    recorder = Recorder(kill_at, watch)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        recorder.tracer = ptrace.Tracer([*argv, command], os.environ, recorder)
        status = recorder.tracer.run()
        assert recorder.tracer.filtered == (watch is not None)  # the filter is in place wherever it is asked for
        return status, recorder
    finally:
        os.chdir(old)


@WATCHES
def test_a_program_and_its_children_are_traced_to_their_exit_status(tmp_path: Path, watch: seccomp.Watch) -> None:
    """The subshell (a child) writes too; the main process's status comes back as waitpid gives it."""
    status, recorder = traced("echo hi > f; (echo there > g; true); exit 3", tmp_path, watch=watch)
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 3
    writes = [(pid, e.paths[0]) for pid, e in recorder.effects if e.op == "write"]
    work = str(tmp_path.resolve())
    assert [path for _, path in writes] == [f"{work}/f", f"{work}/g"]
    assert len({pid for pid, _ in writes}) == 2  # the shell, and its subshell
    assert recorder.exits >= len(recorder.effects)


@WATCHES
def test_a_kill_at_a_call_s_entry_skips_the_call(tmp_path: Path, watch: seccomp.Watch) -> None:
    """The shell created f (open with O_TRUNC) and dies at its write: f is empty, g never written."""
    status, recorder = traced("echo hi > f; echo there > g", tmp_path, str((tmp_path / "f").resolve()), watch)
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGKILL
    assert (tmp_path / "f").read_bytes() == b""
    assert not (tmp_path / "g").exists()
    assert not recorder.tracer or not recorder.tracer.pids


@WATCHES
def test_a_signal_for_the_program_is_delivered(tmp_path: Path, watch: seccomp.Watch) -> None:
    status, _ = traced("kill -TERM $$", tmp_path, watch=watch)
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGTERM


@WATCHES
def test_a_program_that_cannot_start_exits_127(tmp_path: Path, watch: seccomp.Watch) -> None:
    tracee = ptrace.Tracee()
    tracee.watch = watch
    tracer = ptrace.Tracer([str(tmp_path / "missing")], os.environ, tracee)
    status = tracer.run()
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 127


PYTHON_PROGRAM = """
import os, subprocess, sys, threading
with open("a.tmp", "w") as f:
    f.write("one")
    f.flush()
    os.fsync(f.fileno())
os.rename("a.tmp", "a")
threading.Thread(target=lambda: open("t", "w").write("from a thread")).start()
subprocess.run([sys.executable, "-c", "open('c', 'a').write('child')"], check=True)
os.mkdir("d")
os.unlink("a")
print(open("c").read())
"""


def test_the_filter_shows_the_tracer_every_effect_it_saw_without_it(tmp_path: Path) -> None:
    """A Python program with a thread and a child: the same effects in the same order, at a small part of the stops.

    Without the filter the tracer sees every call and decodes them all (decode() passes over the
    rest); with it, only the calls decode() reads stop the program. Pipes are named by a new
    inode each run: compared as "pipe".
    """
    seen: list[tuple[list[tuple[str, str, tuple[str, ...], str, int, int]], int]] = []
    for watch, folder in ((None, tmp_path / "all"), (calls.WATCH, tmp_path / "filtered")):
        folder.mkdir()
        status, recorder = traced(PYTHON_PROGRAM, folder, watch=watch, argv=(sys.executable, "-c"))
        assert os.waitstatus_to_exitcode(status) == 0
        where = str(folder.resolve())
        paths = [
            tuple("pipe" if p.startswith("pipe:") else p.replace(where, "~") for p in e.paths)
            for _, e in recorder.effects
        ]
        effects = [
            (e.call, e.op, ps, e.sort, e.offset, e.flags) for (_, e), ps in zip(recorder.effects, paths, strict=True)
        ]
        seen.append((effects, recorder.entries))
    (every, every_stops), (filtered, filtered_stops) = seen
    assert filtered == every
    assert {"~/a.tmp", "~/a", "~/t", "~/c", "~/d"} <= {path for effect in every for path in effect[2]}
    assert filtered_stops == len(filtered)  # a stop for each call decode() reads, no other
    assert every_stops > 5 * filtered_stops


def test_memory_and_strings_are_read_from_procfs() -> None:
    buffer = ctypes.create_string_buffer(b"/a/path\0rest")
    address = ctypes.addressof(buffer)
    assert ptrace.read_memory(os.getpid(), address, 4) == b"/a/p"
    assert ptrace.read_string(os.getpid(), address) == "/a/path"
    assert ptrace.read_memory(os.getpid(), 0, 4) == b""


@pytest.mark.parametrize("value", [-1, 2**63 - 1])
def test_syscall_info_is_laid_out_as_the_kernel_s(value: int) -> None:
    """struct ptrace_syscall_info: op at 0, arch at 4, the entry's nr at 24 and its six arguments after."""
    assert ptrace._Info.arch.offset == 4
    assert ptrace._Info.data.offset == 24
    assert ctypes.sizeof(ptrace._Info) == 80
    assert value  # both extremes of a 64-bit result are read back by Tracer._syscall's sign rule
