"""The cyclic garbage collector around a search: paused while it runs, kept off its result after.

A search makes millions of objects (worlds, processes, checkpoints, tuples) that live as long
as its result and form no cycles: reference counting frees them. The cyclic collector would
only walk them, and walk them again and again: with the collector on, counting paths after
the search (which makes a tuple per edge) set off collections of every generation, each one a
walk over every object the search made, and those walks cost more than a third of a 1,000-call
search's time (measured by benchmarks/scaling.py; docs/ARCHITECTURE.md gives the figures).

So `paused()` turns the collector off for the whole search and its counting, and `keep_out`
then moves every object the collector tracks into its permanent generation (`gc.freeze`), so
that later collections never walk the result, until the last result kept out this way is
freed (`gc.unfreeze`, from a finalizer of the result). Two things keep this from touching the
program around the search more than it must: the young generations are collected before the
search starts (so little garbage of the program's own is frozen with the result), and a
program that froze objects itself, or that runs with the collector off, is left as it is.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

_kept: list[int] = [0]
"""How many results kept out of the collector's reach are still alive (a list: mutable)."""


@contextmanager
def paused() -> Iterator[bool]:
    """Run the block with the collector off; yield whether it was on (and so is turned on again)."""
    collecting = gc.isenabled()
    if collecting:
        gc.collect(1)  # the program's young garbage, before the search's objects join it
    gc.disable()
    try:
        yield collecting
    finally:
        if collecting:
            gc.enable()


def keep_out(result: object, collecting: bool) -> None:
    """Keep every object tracked now (the search's among them) out of collections while `result` lives.

    Called after a search whose collector was on (`collecting`), with the search's result; a
    freeze the program made itself is left alone (no freeze of ours is added to it).
    """
    # While a result of ours is kept out, what is frozen is ours: no need to ask. Asking is not
    # free: `gc.get_freeze_count()` walks every frozen object (CPython 3.11), and a program that
    # runs hundreds of searches (frontier, a test session) would walk every result it keeps.
    if not collecting or (not _kept[0] and gc.get_freeze_count()):
        return
    gc.freeze()
    _kept[0] += 1
    weakref.finalize(result, _release)


def kept_out() -> int:
    """How many results `keep_out` keeps out of the collector's reach that are still alive."""
    return _kept[0]


def _release() -> None:
    """A kept-out result is freed: the last one gives the frozen objects back to the collector."""
    _kept[0] -= 1
    if not _kept[0]:
        gc.unfreeze()
