"""A swept program that leaves processes behind: a child, a double-forked grandchild, a setsid() daemon.

Each process it starts writes its PID to a file of the folder CRASHSWEEP_TEST_PIDS names, then
sleeps far longer than a sweep lasts: a process of it still alive after the sweep has
outlived the scenario that started it (test_descendants.py).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from crashsweep.realsweep.probe.crashpoint import crashpoint

PIDS = "CRASHSWEEP_TEST_PIDS"


def _linger(kind: str) -> None:
    """In a forked process: write its PID, sleep, never return."""
    try:
        folder = Path(os.environ[PIDS])
        (folder / f"{kind}-{os.getpid()}").write_text(str(os.getpid()))
        time.sleep(600)
    finally:
        os._exit(0)


def _spawn(kind: str) -> None:
    """Start a lingering process: a child; a grandchild whose parent exits (double fork); a setsid() one."""
    if kind == "child":
        if os.fork() == 0:
            _linger(kind)
        return
    middle = os.fork()
    if middle == 0:
        if kind == "setsid":
            os.setsid()
        if os.fork() == 0:
            _linger(kind)
        os._exit(0)
    os.waitpid(middle, 0)


def main() -> int:
    """Two crash points, a lingering process of each kind started before each."""
    for name in ("first", "second"):
        for kind in ("child", "double", "setsid"):
            _spawn(kind)
        Path(name).write_text("done")
        crashpoint(name)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
