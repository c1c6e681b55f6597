"""The tracer: each call of a program and its children at entry and exit, its status, a kill that skips the call."""

from __future__ import annotations

import ctypes
import os
import signal
from pathlib import Path

import pytest

from crashsweep.realsweep.syscalls import calls, ptrace

SH = ("/bin/sh", "-c")


class Recorder(ptrace.Tracee):
    """Decodes every call; kills the program at the first write to `kill_at` (a full path) when given."""

    def __init__(self, kill_at: str = "") -> None:
        self.effects: list[tuple[int, calls.Effect]] = []
        self.exits = 0
        self.kill_at = kill_at
        self.tracer: ptrace.Tracer | None = None

    def entry(self, pid: int, arch: int, nr: int, args: tuple[int, ...]) -> None:
        effect = calls.decode(pid, arch, nr, args)
        if effect is None:
            return
        self.effects.append((pid, effect))
        if self.kill_at and effect.op == "write" and effect.paths == (self.kill_at,):
            assert self.tracer is not None
            self.tracer.kill_all()

    def exit(self, pid: int, rval: int) -> None:
        self.exits += 1


def traced(command: str, cwd: Path, kill_at: str = "") -> tuple[int, Recorder]:
    recorder = Recorder(kill_at)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        recorder.tracer = ptrace.Tracer([*SH, command], os.environ, recorder)
        return recorder.tracer.run(), recorder
    finally:
        os.chdir(old)


def test_a_program_and_its_children_are_traced_to_their_exit_status(tmp_path: Path) -> None:
    """The subshell (a child) writes too; the main process's status comes back as waitpid gives it."""
    status, recorder = traced("echo hi > f; (echo there > g; true); exit 3", tmp_path)
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 3
    writes = [(pid, e.paths[0]) for pid, e in recorder.effects if e.op == "write"]
    work = str(tmp_path.resolve())
    assert [path for _, path in writes] == [f"{work}/f", f"{work}/g"]
    assert len({pid for pid, _ in writes}) == 2  # the shell, and its subshell
    assert recorder.exits >= len(recorder.effects)


def test_a_kill_at_a_call_s_entry_skips_the_call(tmp_path: Path) -> None:
    """The shell created f (open with O_TRUNC) and dies at its write: f is empty, g never written."""
    status, recorder = traced("echo hi > f; echo there > g", tmp_path, kill_at=str((tmp_path / "f").resolve()))
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGKILL
    assert (tmp_path / "f").read_bytes() == b""
    assert not (tmp_path / "g").exists()
    assert not recorder.tracer or not recorder.tracer.pids


def test_a_signal_for_the_program_is_delivered(tmp_path: Path) -> None:
    status, _ = traced("kill -TERM $$", tmp_path)
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGTERM


def test_a_program_that_cannot_start_exits_127(tmp_path: Path) -> None:
    tracer = ptrace.Tracer([str(tmp_path / "missing")], os.environ, ptrace.Tracee())
    status = tracer.run()
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 127


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
