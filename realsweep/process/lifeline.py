"""Children that die with their parent: a sweep's helpers must not outlive it, even killed by SIGKILL.

A process killed by SIGKILL runs no cleanup, so the children it started would run on (a
frontier's workers exploring for minutes, the processes a zygote forked). `die_with_parent`
asks Linux (PR_SET_PDEATHSIG, through ctypes) to signal the child when its parent dies. The
"parent" is the thread that forked it, so it suits a child forked by a thread that lives as
long as the child is needed: a pool's workers, forked by the main thread; the zygote's
children, forked by its only thread. (The tracker service, which a sweep may start from a
thread that ends first, watches its parent process instead: tracker/service.py.) Elsewhere
than Linux it does nothing and returns False.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
"""prctl's option: the signal the calling process gets when its parent thread dies (linux/prctl.h)."""


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> bool:
    """Ask the kernel for `signum` when the parent dies; exit at once if `parent` died already. Whether it is set.

    `parent` is the parent's process ID as the parent knew it before the fork: had it died
    before the request took effect, the request would never fire, so the child checks.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        if _libc().prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:
        os._exit(1)
    return True


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """The C library, by the program's own symbols (ctypes.util would import threading: the zygote avoids it)."""
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]
