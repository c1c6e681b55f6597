"""Zygotes shared by the sweeps of one process: a program imported once, not once per sweep.

A sweep starts a zygote (zygote.py) that imports the program, and stops it at its end. For a
program built on a framework the import is most of a short sweep's cost: 1 to 2 s of CPU for
pydantic-ai or the OpenAI Agents SDK, more for a user's agent that imports more. Where one process runs
several sweeps of the same program (a test session, `crashsweep conform` over designs, a
sweep and its determinism check), `shared()` keeps each sweep's zygote after the sweep, idle,
and gives it to the next sweep that would start the same one: the same interpreter and
options, entry point, work directory and environment (`Zygote.key`).

A kept zygote is what a fresh one would be for the next sweep. It forks each process from the
state it reached after importing the program and warming it up (zygote_server.py), which no
process of the last sweep changed: each ran in a child of its own. Before it serves another
sweep it is asked (`Zygote.reuse`), and declines, and is stopped, when a process of the last
sweep is still running, when its warm-ups started processes of their own (Temporal's dev
server, whose state the last sweep's runs are in), or when a file it imported has changed
since (imported.py): a fresh zygote then imports the program as it is now.

Outside `shared()` every sweep starts and stops its own zygote, as before. At most IDLE
zygotes wait at a time (the least recently used is stopped first); the end of the last block
that shares stops them all, and a zygote whose parent dies ends with its stdin.

The same blocks keep a sweep's tracker service for the next sweep (trackers.py): `keep` and
`take` hold any process kept between sweeps, a zygote or a service, found by its `key`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from crashsweep.realsweep.process.zygote import Zygote

IDLE = 4
"""Processes of one kind kept waiting at most (a zygote holds its program's memory: a framework's is 100
to 300 MB). Each kind has its bound: a kept tracker service never stops a zygote, nor the reverse."""


class Kept(Protocol):
    """A process kept between sweeps: a zygote or a tracker service."""

    @property
    def key(self) -> tuple[Any, ...]: ...

    def close(self) -> None: ...


_lock = threading.Lock()
_blocks: list[bool] = []  # the open shared() blocks, innermost last: whether each shares
_idle: list[Kept] = []  # the waiting processes, the most recently parked last


@contextmanager
def shared(on: bool = True) -> Iterator[None]:
    """Within the block, a sweep's zygote (and tracker service) is kept for the next sweep of the same program.

    Blocks nest, and the innermost decides: `shared(False)` within one gives each sweep a
    zygote of its own again, stopped at the sweep's end, while the processes kept wait. When no
    open block shares, the kept processes are stopped.
    """
    with _lock:
        _blocks.append(on)
    try:
        yield
    finally:
        with _lock:
            _blocks.pop()
            ended = [] if True in _blocks else list(_idle)
            del _idle[: len(ended)]
        for process in ended:
            process.close()


def sharing() -> bool:
    """Whether sweeps share zygotes now (the innermost open `shared()` block shares)."""
    with _lock:
        return bool(_blocks) and _blocks[-1]


def started(
    entry: str, env: Mapping[str, str], log: Path, *, flags: Sequence[str] = (), python: str = sys.executable
) -> Zygote:
    """A zygote of `entry` for a sweep whose zygote logs to `log`: a kept one that matches, else a new one.

    `flags` and `python` are Zygote's. ZygoteError if a new one cannot start.
    """
    wanted = Zygote.key_of(python, flags, entry, env)
    while (kept := take(wanted)) is not None:
        assert isinstance(kept, Zygote)
        if not kept.reuse(log):
            return kept
        kept.close()
    return Zygote(entry, env, log, python=python, flags=flags)


def ended(zygote: Zygote) -> None:
    """A sweep is done with `zygote`: kept for the next sweep of its program while sweeps share, else stopped."""
    if not sharing() or zygote.reuse(None):
        zygote.close()
        return
    keep(zygote)


def keep(process: Kept) -> None:
    """Keep `process` for the next sweep that `take`s its key (past IDLE of its kind, the oldest is stopped).

    Stopped at once when no open block shares (the last one may have ended meanwhile).
    """
    with _lock:
        if True not in _blocks:
            stopped = [process]
        else:
            _idle.append(process)
            kind = isinstance(process, Zygote)  # zygotes, and the rest (tracker services)
            alike = [kept for kept in _idle if isinstance(kept, Zygote) == kind]
            stopped = alike[: max(0, len(alike) - IDLE)]
            _idle[:] = [kept for kept in _idle if kept not in stopped]
    for old in stopped:
        old.close()


def take(key: tuple[Any, ...]) -> Kept | None:
    """The most recently kept process with `key`, no longer kept; None if none is, or sweeps do not share now."""
    with _lock:
        if not (_blocks and _blocks[-1]):
            return None
        for index in range(len(_idle) - 1, -1, -1):
            if _idle[index].key == key:
                return _idle.pop(index)
    return None
