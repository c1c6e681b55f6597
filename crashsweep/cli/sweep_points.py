"""`crashsweep sweep --list-points`: a program's crash points, from one uninterrupted run, without sweeping.

A user who marks points by hand, or sweeps a framework through an adapter, wants to see what
a sweep would crash before paying for it: each point's name, which pass of that name it is
(the sweep names a crash by both: `--crash "NAME#K"`), and where in the code it was passed.
The run is the sweep's own first run (crashsweep.realsweep.sweep.list_points), so the list
is exactly what the sweep would start from. With `--points from:FILE` (spec/POINTS.md section
6: `PointsChoice` takes it, crashsweep.spec.points_file reads FILE) it lists the points kept,
each under its number in the whole run's list.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click

import crashsweep
from crashsweep.realsweep import api
from crashsweep.spec.points_file import FROM, PointList

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


class PointsChoice(click.Choice[str]):
    """`--points`: how crash points are found (api.POINTS_CHOICES), or `from:FILE`: the marks, crashed where FILE says.

    FILE is taken as given here and read by the plan after its rules (crashsweep.cli.sweep_plan),
    before any work, so that a bad file is one line as every refusal is.
    """

    def __init__(self) -> None:
        super().__init__((*api.POINTS_CHOICES, f"{FROM}FILE"))

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if isinstance(value, str) and value.startswith(FROM):
            if not value.removeprefix(FROM):
                self.fail(f"{value!r} names no file: give {FROM}FILE", param, ctx)
            return value
        return super().convert(value, param, ctx)


def render(
    label: str, passed: tuple[api.Passed, ...], command: list[str], fmt: str, listed: PointList | None = None
) -> str:
    """The points as a table with the command that crashes at the first one, or as JSON; only `listed`'s if given."""
    numbered = [(n, p) for n, p in enumerate(passed, start=1) if listed is None or listed.keeps(p.name, p.occurrence)]
    if fmt == "json":
        points = [
            {"index": n, "name": p.name, "occurrence": p.occurrence, "where": shown_where(p.where)} for n, p in numbered
        ]
        kept = {} if listed is None else {"from": listed.source, "passed": len(passed)}
        return json.dumps({"target": label, "points": points, **kept}, indent=2) + "\n"
    rows = [(str(n), p.name, str(p.occurrence), shown_where(p.where)) for n, p in numbered]
    heads = ("#", "point", "pass", "where")
    widths = [max(len(row[i]) for row in (heads, *rows)) for i in range(4)]
    count = f"{len(passed)} crash point{'' if len(passed) == 1 else 's'}"
    if listed is not None:
        count = f"{len(numbered)} of {count} kept (from {listed.source})"
    lines = [f"{label}: {count} in one uninterrupted run"]
    for row in (heads, *rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    first = numbered[0][1]
    crash = shlex.join([*command, "--crash", f"{first.name}#{first.occurrence}"])
    lines.append(f"crash at one of them (here the first): {crash}")
    return "\n".join(lines) + "\n"
