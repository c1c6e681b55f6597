"""The shim's command line (`wrap`) and whether this machine can trace a program at all (`check`).

What the runner calls (process/runner.py): `wrap` before a sweep's first traced process, `check`
before any process starts, so that a machine that cannot trace is one line and exit 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

MODULE = "crashsweep.realsweep.syscalls.trace"
ENTRY = f"{MODULE}:main"
"""The shim as an entry point: what a sweep's zygote forks for each traced process (runner.py)."""
SUPPORTED = ("x86_64", "aarch64")


def shim_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """The shim's arguments that run `argv` under the tracer.

    A program named by a relative path ("./my_loop") is found from the current folder, where
    the user typed it: each process runs in its scenario's work folder.
    """
    program = [*argv[:1]]
    if program and os.sep in program[0] and not os.path.isabs(program[0]):
        program = [os.path.abspath(program[0])]
    return ("--", *program, *argv[1:])


def wrap(argv: Sequence[str]) -> tuple[str, ...]:
    """The command line that runs `argv` as one swept process whose points are its system calls."""
    return (sys.executable, "-m", MODULE, *shim_argv(argv))


def check() -> None:
    """Refuse (ValueError, one line) where the tracer cannot run: not Linux, an architecture not known, no ptrace.

    The last is found by tracing `true` (a sandbox that forbids ptrace, a kernel before 5.3).
    """
    import platform
    import shutil
    import subprocess

    if sys.platform != "linux":
        raise ValueError(f"--points syscalls traces system calls with ptrace on Linux; this is {sys.platform}")
    if platform.machine() not in SUPPORTED:
        raise ValueError(
            f"--points syscalls knows the calls of {' and '.join(SUPPORTED)}; this machine is {platform.machine()}"
        )
    true = shutil.which("true")
    if true is None:
        return
    env = {key: value for key, value in os.environ.items() if not key.startswith("CRASHSWEEP_")}
    probe = subprocess.run(wrap([true]), env=env, capture_output=True, text=True, check=False, timeout=60)
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
        raise ValueError(f"--points syscalls cannot trace a program here: {said}")
