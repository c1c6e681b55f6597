"""A swept process's descendants: gone when it is, whether they forked, double-forked or called setsid().

A program may start children of its own (a helper, a daemon that forks twice). When the
sweep's process ends (killed at its point, or done), they would run on, re-parented to PID 1,
writing into a work folder the sweep then deletes. So each swept process leads a process
group of its own (`os.setpgid`), and when it ends the group is killed (`end_group`, by the
group's ID). A descendant that called setsid() has left that group; on Linux the fork server
catches it anyway: each swept child is a child subreaper (`subreaper`, PR_SET_CHILD_SUBREAPER),
so its orphaned descendants are re-parented to it rather than to PID 1, and the fork server
is one too, so when the swept child dies they come to the fork server, which kills and reaps
them by PID (`end_orphans`) until none is left. A process started from a command line
(`--spawn exec`) has no fork server of ours around it: what escaped its group is found by
the work directory in its environment as it was started (`end_marked`, from /proc).

Like lifeline.py it imports neither threading nor subprocess: the fork server uses it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Container

from crashsweep.realsweep.process.lifeline import _libc

PR_SET_CHILD_SUBREAPER = 36
"""prctl's option: orphaned descendants are re-parented to the caller, not to PID 1 (linux/prctl.h)."""


def subreaper() -> bool:
    """Make this process a child subreaper (Linux; elsewhere nothing); whether it is one now."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(_libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def lead_group() -> None:
    """Make the calling process the leader of a new process group (its own ID), as a swept process is."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)


def end_group(pgid: int) -> None:
    """SIGKILL every process still in the group `pgid` (that a swept process led); none left is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc; elsewhere none)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as listed:  # a single-threaded parent's
            return [int(child) for child in listed.read().split()]
    except OSError:
        pass
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _parent(int(entry)) == pid:
                found.append(int(entry))
    return found


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def end_orphans(keep: Container[int]) -> list[int]:
    """Kill and reap every child of this process but those in `keep`, then theirs, until none is left.

    Called by a subreaper whose children are the processes it started (`keep`, still running)
    and orphans adopted from those that ended: each orphan is killed by its PID, which stays
    its own until it is reaped here, and its children come to this process in turn. The
    status of each is this function's; the PIDs ended, in order.
    """
    ended: list[int] = []
    while True:
        orphans = [pid for pid in children(os.getpid()) if pid not in keep and pid not in ended]
        if not orphans:
            return ended
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in orphans:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        ended += orphans


def end_marked(variable: str, value: str) -> list[int]:
    """SIGKILL every process of this user started with `variable=value` in its environment; their PIDs.

    A process's /proc environ is the environment it was started with, which its forks keep:
    the work directory a scenario's process got marks it and every descendant it did not
    start with another environment (Linux; elsewhere none).
    """
    mark = f"{variable}={value}".encode()
    killed = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    started = environ.read().split(b"\0")
            except OSError:
                continue
            if mark in started:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry), signal.SIGKILL)
                    killed.append(int(entry))
    return killed
