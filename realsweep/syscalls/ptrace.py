"""A program run under ptrace(2): every system call of every thread and child stops at its entry and exit.

Why our own tracer and not strace's output: a sweep kills a process at the k-th pass of a
named point ("write state.json.tmp", third time), and the name is known only once the call's
file or peer is read. strace can skip a call and kill (`-e inject=write:error=EIO:signal=KILL:
when=N`), but it counts N per system call and per tracee over every call it traces: the third
write to state.json.tmp is the N-th write of one thread, with N unknown until the run has
happened (spec/POINTS.md section 3). Here the tracer stops the call at its entry, names it, and
decides; a kill there is SIGKILL sent while the tracee sits in its syscall-entry stop, and the
kernel then skips the call (a fatal signal pending at the entry stop: the call never runs).

`Tracee` events come from `run`: `entry(pid, nr, args)` and `exit(pid, rval)`, one thread at a
time (the tracer serialises them: the order of entries is the order of decisions). Children
and threads are followed (PTRACE_O_TRACEFORK, VFORK, CLONE); PTRACE_O_EXITKILL kills them all
if the tracer dies. Linux only, through PTRACE_GET_SYSCALL_INFO (Linux 5.3): the call's number,
arguments and result without a register layout per architecture.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Mapping, Sequence

from crashsweep.realsweep.syscalls import seccomp

PTRACE_TRACEME = 0
PTRACE_CONT = 7
PTRACE_SYSCALL = 24
PTRACE_SETOPTIONS = 0x4200
PTRACE_GET_SYSCALL_INFO = 0x420E
OPTIONS = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x100000
"""TRACESYSGOOD, TRACEFORK, TRACEVFORK, TRACECLONE, TRACEEXEC, EXITKILL."""
TRACESECCOMP = 0x80
"""PTRACE_O_TRACESECCOMP: a call the filter hands to the tracer stops at its entry (seccomp.py)."""
EVENT_SECCOMP = 7
SYSCALL_STOP = signal.SIGTRAP | 0x80
WALL = 0x40000000  # __WALL: wait for threads (clones) too
ENTRY, EXIT, SECCOMP = 1, 2, 3
FILTERED, UNFILTERED = signal.SIGSTOP, signal.SIGTSTP
"""The signal the child stops itself with before it execs: its filter is in place, or could not be."""


class TraceError(OSError):
    """ptrace cannot trace here (not Linux, a kernel before 5.3, ptrace forbidden by a sandbox)."""


class _Info(ctypes.Structure):
    """struct ptrace_syscall_info: op, arch, then entry {nr, args[6]} or exit {rval, is_error}."""

    _fields_ = (
        ("op", ctypes.c_uint8),
        ("pad", ctypes.c_uint8 * 3),
        ("arch", ctypes.c_uint32),
        ("ip", ctypes.c_uint64),
        ("sp", ctypes.c_uint64),
        ("data", ctypes.c_uint64 * 7),
    )


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = (ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p)
    libc.ptrace.restype = ctypes.c_long
    return libc


_LIBC = _libc() if sys.platform == "linux" else None


def _ptrace(request: int, pid: int, addr: int, data: int | ctypes.c_void_p | None) -> int:
    assert _LIBC is not None
    result = int(_LIBC.ptrace(request, pid, addr, data))
    if result == -1:
        errno = ctypes.get_errno()
        if errno:
            raise TraceError(errno, f"ptrace({request:#x}, {pid}): {os.strerror(errno)}")
    return result


class Tracee:
    """What the tracer tells about the traced program: override `entry` and `exit` (both return nothing).

    `watch`: the calls `entry` looks at (seccomp.py), so that no other call stops the program;
    None: every call stops (`entry` and `exit` are told of all of them).
    """

    watch: seccomp.Watch | None = None

    def entry(self, pid: int, arch: int, nr: int, args: tuple[int, ...]) -> None:
        """Thread `pid` is about to make system call `nr` (of `arch`) with `args`; it waits until this returns."""

    def exit(self, pid: int, rval: int) -> None:
        """Thread `pid`'s call returned `rval` (negative: -errno)."""


class Tracer:
    """One program under ptrace: started by `run`, which returns its wait status when every tracee is gone."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], tracee: Tracee) -> None:
        if _LIBC is None:
            raise TraceError("ptrace tracing needs Linux")
        self.argv, self.env, self.tracee = list(argv), dict(env), tracee
        arch = seccomp.native_arch()
        watch = tracee.watch
        self._filter = (
            seccomp.Filter(seccomp.program(watch, arch))
            if watch is not None and arch is not None and seccomp.available()
            else None
        )
        self.filtered = False
        """Whether the program runs under the filter (set once it has stopped before its exec)."""
        self._resume = PTRACE_SYSCALL
        """How a stop other than a watched call's entry is resumed: to the next call, or to the next watched one."""
        self.pids: set[int] = set()
        self.main = 0
        self.status = 0
        """The main process's wait status, once it is gone."""
        self._info = _Info()

    def run(self) -> int:
        """Start the program, trace it to its end; the main process's wait status (as os.waitpid gives it)."""
        self.main = self._spawn()
        self.pids.add(self.main)
        _ptrace(PTRACE_SETOPTIONS, self.main, 0, OPTIONS | (TRACESECCOMP if self.filtered else 0))
        _ptrace(self._resume, self.main, 0, 0)
        while self.pids:
            try:
                pid, got = os.waitpid(-1, WALL)
            except ChildProcessError:
                break
            if not self._gone(pid, got) and os.WIFSTOPPED(got):
                self._stopped(pid, got)
        return self.status

    def _gone(self, pid: int, status: int) -> bool:
        """Whether the wait `status` of `pid` says it is gone (then forgotten, and the main one's status kept)."""
        if not (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            return False
        self.pids.discard(pid)
        if pid == self.main:
            self.status = status
        return True

    def kill_all(self) -> None:
        """SIGKILL every tracee now (each stopped one dies without finishing the call it stopped in) and reap them."""
        for pid in list(self.pids):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                self.pids.discard(pid)
        while self.pids:
            try:
                pid, got = os.waitpid(-1, WALL)
            except ChildProcessError:
                break
            self._gone(pid, got)

    def _spawn(self) -> int:
        """Fork the program: the child asks to be traced, installs the filter, stops, and execs once resumed.

        Between the filter and the stop the child makes no watched call (getpid, kill), so none
        is handed to a tracer that has not yet asked for them; its stop signal says whether the
        filter is in place (FILTERED) or was refused (UNFILTERED: every call is traced).
        """
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (coverage does not follow it past exec)
            try:
                _ptrace(PTRACE_TRACEME, 0, 0, 0)
                in_place = self._filter is not None and seccomp.install(self._filter)
                os.kill(os.getpid(), FILTERED if in_place else UNFILTERED)
                os.execvpe(self.argv[0], self.argv, self.env)
            except OSError as error:
                os.write(2, f"crashsweep trace: cannot start {self.argv[0]!r}: {error.strerror or error}\n".encode())
            os._exit(127)
        _, got = os.waitpid(pid, WALL)
        if not os.WIFSTOPPED(got):
            raise TraceError(f"the program ended before it could be traced (status {got})")
        self.filtered = os.WSTOPSIG(got) == FILTERED and self._filter is not None
        self._resume = PTRACE_CONT if self.filtered else PTRACE_SYSCALL
        return pid

    def _stopped(self, pid: int, status: int) -> None:
        """Handle one stop of `pid`: a system call, a new thread or child, an event, or a signal to pass on."""
        sig, event = os.WSTOPSIG(status), status >> 16
        deliver, resume = 0, self._resume
        if pid not in self.pids:  # a new thread or child, seen before its parent's event
            self.pids.add(pid)
        elif sig == SYSCALL_STOP or (sig == signal.SIGTRAP and event == EVENT_SECCOMP):
            if self._syscall(pid):
                resume = PTRACE_SYSCALL  # an entry: on to its exit stop
            if pid not in self.pids:  # killed meanwhile (the chosen call)
                return
        elif sig == signal.SIGTRAP and event:
            pass  # fork, clone, exec: the new tracee reports its own first stop
        elif sig != signal.SIGSTOP or pid == self.main:
            deliver = sig  # a signal for the program: pass it on
        try:
            _ptrace(resume, pid, 0, deliver)
        except TraceError:
            self.pids.discard(pid)  # it died between the stop and the resume (SIGKILL from elsewhere)

    def _syscall(self, pid: int) -> bool:
        """Tell the tracee of the call `pid` stopped in; whether the stop is a call's entry (a filter's included)."""
        info = self._info
        try:
            _ptrace(PTRACE_GET_SYSCALL_INFO, pid, ctypes.sizeof(info), ctypes.addressof(info))
        except TraceError:
            return False
        if info.op in (ENTRY, SECCOMP):  # a filter's stop is laid out as an entry (struct ptrace_syscall_info)
            self.tracee.entry(pid, info.arch, info.data[0], tuple(info.data[1:7]))
            return True
        if info.op == EXIT:
            rval = info.data[0]
            self.tracee.exit(pid, rval - (1 << 64) if rval >= 1 << 63 else rval)
        return False


def read_memory(pid: int, address: int, size: int) -> bytes:
    """`size` bytes of thread `pid`'s memory at `address` (fewer where it ends); b"" for a null address."""
    if not address or size <= 0:
        return b""
    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    try:
        return os.pread(fd, size, address)
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_string(pid: int, address: int, limit: int = 4096) -> str:
    """The NUL-terminated string at `address` in thread `pid` (a path), decoded as the file system does."""
    data = read_memory(pid, address, limit)
    return os.fsdecode(data.split(b"\0", 1)[0])
