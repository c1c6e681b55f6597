"""Helpers of the tests that kill a parent and look for its children: who they are, and waiting for them to go."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path


def parent_of(pid: int) -> int | None:
    """The parent process ID of `pid` (from /proc), or None once it is gone (a zombie counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else int(fields[1])


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and parent_of(int(entry)) == pid:
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` still runs (not a zombie)."""
    return parent_of(pid) is not None


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `condition` until it holds; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.05)
