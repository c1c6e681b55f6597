"""When the running command began: the process's start when crashsweep is the program, else main()'s call.

`crashsweep sweep` reports its seconds from there, so that they include what a user waits for
before the first process runs: the interpreter's start and the command line's imports (the
sweep engine's own clock starts later, at its tracker service and zygote). Called in-process
(`crashsweep.cli.main.main([...])`, as tests do), a command begins when main() is called.
"""

from __future__ import annotations

import os
import time

_began: list[float] = []


def process_started() -> float:
    """The monotonic time at which this process started (Linux: /proc/self/stat); now where that cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()
    return time.monotonic() - max(age, 0.0)


def begin(at: float | None = None) -> None:
    """The running command began at monotonic time `at` (None: now)."""
    _began[:] = [time.monotonic() if at is None else at]


def seconds() -> float:
    """Seconds since the running command began (since now, if no command said when it began)."""
    if not _began:
        begin()
    return time.monotonic() - _began[0]
