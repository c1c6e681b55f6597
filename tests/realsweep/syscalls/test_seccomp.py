"""The tracer's seccomp filter: it hands over exactly the calls decode() reads, and the kernel takes it."""

from __future__ import annotations

import os
import struct

import pytest

from crashsweep.realsweep.syscalls import calls, seccomp


def run_bpf(code: bytes, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """What the kernel's classic BPF machine returns for `struct seccomp_data` (the instructions the filter uses)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    program = [struct.unpack_from("<HBBI", code, at) for at in range(0, len(code), 8)]
    accumulator: int = 0
    place = 0
    while True:
        op, jt, jf, k = program[place]
        if op == 0x20:  # BPF_LD | BPF_W | BPF_ABS: a 32-bit word of the data
            (accumulator,) = struct.unpack_from("<I", data, k)
        elif op == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            place += jt if accumulator == k else jf
        elif op == 0x45:  # BPF_JMP | BPF_JSET | BPF_K
            place += jt if accumulator & k else jf
        elif op == 0x06:  # BPF_RET | BPF_K
            return int(k)
        else:
            raise AssertionError(f"instruction {op:#x} at {place}")
        place += 1


TRACE, ALLOW = 0x7FF00000, 0x7FFF0000
OPEN_FLAGS = (0, calls.O_WRONLY, calls.O_CREAT, calls.O_TRUNC, calls.O_CREAT | calls.O_WRONLY | calls.O_TRUNC)


@pytest.mark.parametrize("arch", sorted(calls.NUMBERS))
def test_the_filter_hands_over_the_calls_decode_reads_and_no_other(arch: int) -> None:
    """Every number 0..511 of the arch, each open's flags: traced exactly when decode() could find an effect."""
    code = seccomp.program(calls.WATCH, arch)
    table = calls.NUMBERS[arch]
    for nr in range(512):
        name = table.get(nr)
        for flags in OPEN_FLAGS if name in ("open", "openat") else (0,):
            args = [0] * 6
            args[1 if name == "open" else 2] = flags
            opens = name in ("open", "openat")
            wanted = name is not None and (not opens or bool(flags & (calls.O_CREAT | calls.O_TRUNC)))
            assert run_bpf(code, nr, arch, tuple(args)) == (TRACE if wanted else ALLOW), (name, nr, flags)


def test_a_call_of_another_architecture_is_let_through() -> None:
    """A 32-bit program's write (i386's number 4; AUDIT_ARCH_I386) is not looked at, as decode() does not."""
    code = seccomp.program(calls.WATCH, seccomp.X86_64)
    assert run_bpf(code, 1, 0x40000003) == ALLOW
    assert run_bpf(code, 1, seccomp.X86_64) == TRACE


def test_the_high_half_of_an_open_s_flags_register_is_not_read() -> None:
    """flags is a C int: the filter reads the argument's low 32 bits (little-endian), as decode() keeps them."""
    code = seccomp.program(calls.WATCH, seccomp.X86_64)
    openat = next(nr for nr, name in calls.NUMBERS[seccomp.X86_64].items() if name == "openat")
    assert run_bpf(code, openat, seccomp.X86_64, (0, 0, 1 << 40, 0, 0, 0)) == ALLOW
    assert run_bpf(code, openat, seccomp.X86_64, (0, 0, (1 << 40) | calls.O_CREAT, 0, 0, 0)) == TRACE


def test_this_kernel_takes_the_filter() -> None:
    """The machines crashsweep runs on (Linux 4.14 and later) list `trace`; a child installs the filter."""
    assert seccomp.native_arch() in calls.NUMBERS
    assert seccomp.available()
    arch = seccomp.native_arch()
    assert arch is not None
    compiled = seccomp.Filter(seccomp.program(seccomp.Watch({arch: frozenset()}), arch))
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: an empty watch lets every call through, so it can exit
        os._exit(0 if seccomp.install(compiled) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
