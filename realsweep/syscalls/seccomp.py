"""A seccomp filter that stops a traced program only at the system calls its tracer looks at.

Under plain ptrace every system call stops the program twice (entry and exit), and the tracer,
in Python, wakes for each: a Python program makes some 1,700 calls just to start (stat, read,
mmap of every module it imports), of which a sweep looks at none. With this filter installed
in the program before it execs, the kernel stops it (PTRACE_EVENT_SECCOMP, at the call's
entry) only for the calls of a `Watch`, and lets every other call run without waking the
tracer; the tracer then asks for that call's exit stop alone (ptrace.py). What the tracer sees
of the calls it looks at is what it saw before, in the same order: the filter only leaves out
calls whose decoding would have found nothing, which is what `Watch.flags` is held to as well
(an open without O_CREAT or O_TRUNC: calls.py decodes none).

The filter is classic BPF over `struct seccomp_data` (nr at 0, arch at 4, args from 16, each
64 bits, little-endian): the program's own architecture only, since a call of another (a 32-bit
program on x86_64) is one the tracer does not look at either. Where the kernel has no seccomp
filters, or refuses one, the program is traced as before: every call stops (`install` says so).
"""

from __future__ import annotations

import ctypes
import platform
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["AARCH64", "X86_64", "Filter", "Watch", "available", "install", "native_arch", "program"]

X86_64, AARCH64 = 0xC000003E, 0xC00000B7  # AUDIT_ARCH_*, as PTRACE_GET_SYSCALL_INFO gives them
_MACHINES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_RET_ALLOW, _RET_TRACE = 0x7FFF0000, 0x7FF00000
_ARCH_AT, _NR_AT, _ARGS_AT = 4, 0, 16
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
_ACTIONS = Path("/proc/sys/kernel/seccomp/actions_avail")


@dataclass(frozen=True)
class Watch:
    """The calls a tracer looks at: per architecture, their numbers; `flags`: a call looked at only with a flag.

    `flags[arch][nr] = (argument index, mask)`: call `nr` stops only when that argument has
    some bit of `mask` (an open that may create or empty its file).
    """

    numbers: Mapping[int, frozenset[int]]
    flags: Mapping[int, Mapping[int, tuple[int, int]]] = field(default_factory=dict)


class _SockFilter(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


class Filter:
    """A BPF program made in the tracer before it forks, installed by the child (`install`) before it execs."""

    def __init__(self, code: bytes) -> None:
        count = len(code) // 8
        self._filters = (_SockFilter * count).from_buffer_copy(code)
        self.program = _SockFprog(count, self._filters)
        self.prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
        self.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
        self.prctl.restype = ctypes.c_int


def native_arch() -> int | None:
    """The AUDIT_ARCH of this machine's programs, or None where the tracer knows no call numbers."""
    return _MACHINES.get(platform.machine().lower())


def available() -> bool:
    """Whether the kernel lets a filter hand a call to the tracer (Linux 4.14 and later list their actions)."""
    try:
        return "trace" in _ACTIONS.read_text(encoding="ascii").split()
    except OSError:
        return False


def program(watch: Watch, arch: int) -> bytes:
    """The BPF program: RET_TRACE for the watched calls of `arch` (their flags set, where asked), else RET_ALLOW.

    Laid out as: the arch test, the number loaded, one test per number (a flagged one loads its
    argument and tests the mask), then RET_ALLOW and RET_TRACE; jumps are counted once laid out.
    """
    flags = watch.flags.get(arch, {})
    # (code, where a true test goes, where a false one goes, k): "allow", "trace", or how many to skip.
    code: list[tuple[int, str | int, str | int, int]] = [(_LD_W_ABS, 0, 0, _ARCH_AT), (_JEQ_K, 0, "allow", arch)]
    code.append((_LD_W_ABS, 0, 0, _NR_AT))
    for nr in sorted(watch.numbers.get(arch, ())):
        if nr in flags:
            index, mask = flags[nr]
            code.append((_JEQ_K, 0, 2, nr))
            code.append((_LD_W_ABS, 0, 0, _ARGS_AT + 8 * index))  # the low half: little-endian
            code.append((_JSET_K, "trace", "allow", mask))
        else:
            code.append((_JEQ_K, "trace", 0, nr))
    code += [(_RET_K, 0, 0, _RET_ALLOW), (_RET_K, 0, 0, _RET_TRACE)]
    ends = {"allow": len(code) - 2, "trace": len(code) - 1}

    def jump(place: int, to: str | int) -> int:
        return to if isinstance(to, int) else ends[to] - place - 1

    laid = [(op, jump(n, yes), jump(n, no), k) for n, (op, yes, no, k) in enumerate(code)]
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in laid)


def install(compiled: Filter) -> bool:
    """In the child, before it execs: install `compiled`; False where the kernel refuses it (traced as before).

    Without CAP_SYS_ADMIN the kernel wants no_new_privs set first: it is set only then.
    """
    prctl, pointer = compiled.prctl, ctypes.addressof(compiled.program)
    if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, pointer, 0, 0) == 0:
        return True
    if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, pointer, 0, 0) == 0)
