"""The upper bounds of the count options (--workers, --max-states, --depth, --timeout), from the machine.

A count the machine cannot honour is refused as the option is parsed, in one line that says
the bound and why, before any work starts: `--workers` forks that many processes at once (a
large number is a fork bomb), `--max-states` holds that many states in memory, a search to
`--depth N` cannot finish once every crash more multiplies its work, and a `--timeout` beyond
what the platform's clocks take is an internal error deep in a wait. A number too large for a
C integer (10**20) is refused by the same line, never an OverflowError.
"""

from __future__ import annotations

import os
from typing import Any

import click

WORKERS_PER_CORE = 4
"""The most workers per core: a worker is a process (a sweep's, or a frontier's explorer) that keeps a core busy."""
BYTES_PER_STATE = 64
"""Less than any state the explorer keeps takes (about 175 bytes measured, docs/performance.md)."""
MODEL_DEPTH = 100
"""The deepest model search: every crash more multiplies the scenarios (save-after-reply on triage: 10,827,502 at
6 crashes) and at 43 crashes its states pass the default --max-states; a depth above 100 cannot finish."""
REAL_DEPTH = 12
"""The deepest real sweep: its processes about double with each crash (save-after-reply: 391 at depth 3, 2,071 at
depth 5, 42 s), so depth 12 is hours of work and more cannot finish."""
MOST_SECONDS = 7 * 24 * 3600.0
"""The longest --timeout: a process that runs a week is hung, and longer waits overflow the platform's clocks."""


def cores() -> int:
    """The cores this process may run on (its affinity, as a container limits it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def memory() -> int | None:
    """The machine's physical memory in bytes, or None where it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


class Count(click.ParamType[int]):
    """A whole number from `least` to a bound of the machine's; above it: one line saying the bound and why."""

    name = "integer"

    def __init__(self, least: int, most: int, why: str) -> None:
        self.least, self.most, self.why = least, most, why

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a whole number", param, ctx)
        if number < self.least:
            self.fail(f"{number} is below {self.least}", param, ctx)
        if number > self.most:
            shown = str(number) if len(str(number)) <= 30 else f"{str(number)[:30]}..."
            self.fail(f"{shown} is above {self.most:,}: {self.why}", param, ctx)
        return number


class Seconds(click.ParamType[float]):
    """A number of seconds from `least` to MOST_SECONDS."""

    name = "float"

    def __init__(self, least: float) -> None:
        self.least = least

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not number >= self.least:  # NaN too
            self.fail(f"{value} is below {self.least:g}", param, ctx)
        if number > MOST_SECONDS:
            self.fail(f"{value} is above {MOST_SECONDS:g} s (a week): a process that runs longer is hung", param, ctx)
        return number


def workers() -> Count:
    """--workers: at most WORKERS_PER_CORE per core of this machine."""
    n = cores()
    most = WORKERS_PER_CORE * n
    return Count(1, most, f"each worker is a process; this machine has {n} core(s), so at most {WORKERS_PER_CORE} each")


def max_states() -> Count:
    """--max-states: no more states than the machine's memory could hold."""
    total = memory()
    if total is None:
        return Count(1, 1 << 62, "more than any machine's memory could hold")
    most = total // BYTES_PER_STATE
    why = f"this machine's memory ({total / (1 << 30):.1f} GiB) holds fewer states, at {BYTES_PER_STATE}+ bytes each"
    return Count(1, most, why)


def model_depth() -> Count:
    """--depth of a command that explores the model."""
    return Count(1, MODEL_DEPTH, "every crash more multiplies the states; a search that deep cannot finish")


def real_depth() -> Count:
    """--depth of a real sweep."""
    why = "every crash more about doubles the processes a real sweep runs; a sweep that deep cannot finish"
    return Count(1, REAL_DEPTH, why)
