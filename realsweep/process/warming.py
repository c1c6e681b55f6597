"""Warm-ups for the zygote that the modules a swept program imports register (a framework adapter's).

The zygote calls the entry point's own `zygote_warm(argv)` before each fork (zygote_server.py).
A user's program does not define one, but the adapter it imports knows what its framework
makes on first use that no disk state decides (pydantic's deferred models, a first run's lazy
imports): it registers a warm-up here when it is imported, and the zygote calls each one too,
with the same argv and the same rule (whatever it raises is ignored: the child meets it
again). Outside a zygote nothing calls them. A warm-up is called before every fork, so it does
its work once and returns at once after.

Standard library only and nothing else of crashsweep: the zygote imports it.
"""

from __future__ import annotations

from collections.abc import Callable

Warm = Callable[[list[str]], object]

WARMERS: list[Warm] = []
"""The registered warm-ups, in the order they were registered (once each)."""


def register(warm: Warm) -> Warm:
    """Have every zygote that has imported the caller call `warm(argv)` before each fork; `warm` itself."""
    if warm not in WARMERS:
        WARMERS.append(warm)
    return warm
