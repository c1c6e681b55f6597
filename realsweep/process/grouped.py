"""A process started from a command line (`--spawn exec`) that takes its descendants with it when it ends.

It leads a process group of its own; once it has ended, and before it is reaped (so that its
ID is still its group's and no other process's), the group is killed, then whatever left the
group (setsid()) but still carries the scenario's mark in the environment it was started with
(descendants.end_marked). `Groups` holds the groups of the processes running, so that a
stopping sweep can kill them all at once (a Ctrl-C at the terminal no longer reaches a
process in a group of its own).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from crashsweep.realsweep.process import descendants


class Groups:
    """The process groups (by their leader's ID) of the processes running, which `end_all` kills."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[int] = set()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._live.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._live.discard(pgid)

    def end(self, pgid: int) -> None:
        """Kill the group `pgid` if it is still held here (its leader not yet reaped)."""
        with self._lock:
            if pgid in self._live:
                descendants.end_group(pgid)

    def end_all(self) -> None:
        """Kill every group held here (the sweep stops)."""
        with self._lock:
            for pgid in self._live:
                descendants.end_group(pgid)


def run(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    output: Path,
    timeout: float,
    groups: Groups,
    mark: tuple[str, str],
) -> int:
    """Run `argv` in a group of its own, output to `output`; its exit status, once its descendants are gone.

    subprocess.TimeoutExpired after `timeout` seconds (its group killed first). `mark`: the
    variable and value of its environment that only this process and its descendants carry.
    """
    with open(output, "wb") as out:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
    groups.add(process.pid)
    late = threading.Event()

    def expire() -> None:
        late.set()
        groups.end(process.pid)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: its ID is still its own
    finally:
        timer.cancel()
        groups.end(process.pid)
        groups.discard(process.pid)
        status = process.wait()
        descendants.end_marked(*mark)
    if late.is_set():
        raise subprocess.TimeoutExpired(list(argv), timeout)
    return status
