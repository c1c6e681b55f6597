"""`crashsweep sweep --list-points`: a program's crash points, from one uninterrupted run, without sweeping.

A user who marks points by hand, or sweeps a framework through an adapter, wants to see what
a sweep would crash before paying for it: each point's name, which pass of that name it is
(the sweep names a crash by both: `--crash "NAME#K"`), and where in the code it was passed.
The run is the sweep's own first run (crashsweep.realsweep.sweep.list_points), so the list
is exactly what the sweep would start from.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import crashsweep
from crashsweep.realsweep import api

"""What --list-points prints: a table, or a JSON object."""

_PACKAGE_HOME = Path(crashsweep.__file__).resolve().parent.parent
"""The folder crashsweep's package lives in: an adapter's place is shown from there (crashsweep/...)."""


def shown_where(where: str, here: Path | None = None) -> str:
    """`file:line` relative to the current folder when under it, to crashsweep's home when an adapter's, else as is."""
    path, colon, line = where.rpartition(":")
    if not where:
        return "-"  # a program that logs its points itself: no place known
    if not colon:
        return where
    file = Path(path)
    for base in (here or Path.cwd(), _PACKAGE_HOME):
        try:
            return f"{file.relative_to(base.resolve())}:{line}"
        except ValueError:
            continue
    return where


def render(label: str, passed: tuple[api.Passed, ...], command: list[str], fmt: str) -> str:
    """The points as a table with the command that crashes at the first one, or as JSON."""
    if fmt == "json":
        points = [
            {"index": n, "name": p.name, "occurrence": p.occurrence, "where": shown_where(p.where)}
            for n, p in enumerate(passed, start=1)
        ]
        return json.dumps({"target": label, "points": points}, indent=2) + "\n"
    rows = [(str(n), p.name, str(p.occurrence), shown_where(p.where)) for n, p in enumerate(passed, start=1)]
    heads = ("#", "point", "pass", "where")
    widths = [max(len(row[i]) for row in (heads, *rows)) for i in range(4)]
    count = f"{len(passed)} crash point{'' if len(passed) == 1 else 's'}"
    lines = [f"{label}: {count} in one uninterrupted run"]
    for row in (heads, *rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    first = passed[0]
    crash = shlex.join([*command, "--crash", f"{first.name}#{first.occurrence}"])
    lines.append(f"crash at one of them (here the first): {crash}")
    return "\n".join(lines) + "\n"
