"""A file of crash points to crash at: `crashsweep sweep --points from:FILE` (spec/POINTS.md section 6).

A points file lists where a sweep may crash a program, one point a line as `NAME#PASS` (PASS:
which pass of the point NAME, from 1: what `sweep --crash` takes and `sweep --list-points` shows
in its point and pass columns), as `crashsweep from-trace` writes points.txt. Lines that start
with `#` are comments; blank lines are ignored. `read` refuses a bad file in one line naming
FILE:LINE, before any work. A `PointList` then says whether a crash is tried at a point
(`keeps`), how many of a run's points it keeps (`kept`), and, in the words `--crash` uses for a
point the program never passes (`passes_words`), which listed point a run does not pass
(`missing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crashsweep.spec import files

FROM = "from:"
"""How `--points` names a points file: `from:FILE`."""
MOST_PASSES = 10**9
"""The highest PASS a point is named by (`--crash NAME#K` too): a sweep kills one scenario at each
point of a run, so none lists a billion points, and no line it prints names a pass beyond them."""
HOW_TO_LIST = "list them with --points marked --list-points"
"""How a user sees the points a run passes (with `--points from:FILE` too, --list-points would refuse again)."""


class PointsFileError(ValueError):
    """A points file that cannot be used: one line naming FILE (and LINE) and what is wrong."""


@dataclass(frozen=True, slots=True)
class PointList:
    """The points a file lists, in order, each a (name, pass) with the line it is on: a crash is tried only there."""

    source: str
    """FILE as given (the row and the re-run command name it so)."""
    points: tuple[tuple[str, int], ...]
    lines: tuple[int, ...]
    """The line each point is on, from 1."""
    _chosen: frozenset[tuple[str, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_chosen", frozenset(self.points))

    def keeps(self, name: str, occurrence: int) -> bool:
        """Whether a crash is tried at the `occurrence`-th pass of the point `name` (it is listed)."""
        return (name, occurrence) in self._chosen

    def kept(self, passed: Sequence[str]) -> int:
        """How many of the points of a process that passed `passed` (names, in order) are listed."""
        return sum(self.keeps(name, k) for name, k in numbered(passed))

    def missing(self, passed: Sequence[str]) -> str | None:
        """The line that refuses the first listed point an uninterrupted run that passed `passed` does not pass."""
        passes = set(numbered(passed))
        for (name, k), line in zip(self.points, self.lines, strict=True):
            if (name, k) not in passes:
                count = f"{len(passed)} crash point{'' if len(passed) == 1 else 's'}"
                said = f"{name}#{k}"
                run = f"the uninterrupted run passes {count}: {HOW_TO_LIST}"
                return f"{self.source}:{line}: {said!r}: {passes_words(name, passed)}; {run}"
        return None


def numbered(passed: Sequence[str]) -> list[tuple[str, int]]:
    """Each point a process passed (names, in order) as (name, pass): the k-th pass of a name is pass k."""
    seen: dict[str, int] = {}
    found = []
    for name in passed:
        seen[name] = seen.get(name, 0) + 1
        found.append((name, seen[name]))
    return found


def passes_words(name: str, passed: Sequence[str]) -> str:
    """How often a process that passed `passed` passes the point `name`: "the program passes 'x' once (x#1)".

    The one wording of a point the program does not pass (as asked), for `--crash` and for a
    points file alike.
    """
    passes = list(passed).count(name)
    if not passes:
        return "the program passes no such point"
    first_last = f"{name}#1" + (f" to {name}#{passes}" if passes > 1 else "")
    times = "once" if passes == 1 else f"{passes} times"
    return f"the program passes {name!r} {times} ({first_last})"


def read(source: str) -> PointList:
    """The points file `source` names (a path, as given); PointsFileError for a file that cannot be used."""
    return parse(files.read_text(Path(source), "points file", PointsFileError), source)


def parse(text: str, source: str) -> PointList:
    """The points `text` lists; PointsFileError naming `source`:LINE for the first bad line."""
    points: list[tuple[str, int]] = []
    lines: list[int] = []
    first: dict[tuple[str, int], int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        point = _point(line, f"{source}:{number}")
        if point in first:
            raise PointsFileError(f"{source}:{number}: {line!r} is listed already, on line {first[point]}")
        first[point] = number
        points.append(point)
        lines.append(number)
    if not points:
        raise PointsFileError(f"{source}: lists no crash point (one NAME#PASS a line)")
    return PointList(source, tuple(points), tuple(lines))


def _point(line: str, where: str) -> tuple[str, int]:
    """One line's (name, pass); PointsFileError at `where` (FILE:LINE) when it is no NAME#PASS.

    Its name is not blank: a line that is `#` after spaces is a comment.
    """
    name, hash_sign, digits = line.rpartition("#")
    if not hash_sign or not (digits.isascii() and digits.isdigit()):
        raise PointsFileError(f"{where}: {line!r}: expected NAME#PASS (PASS: which pass of the point, from 1)")
    if len(digits) > len(str(MOST_PASSES)) or int(digits) > MOST_PASSES:
        raise PointsFileError(f"{where}: {line!r}: a pass beyond {MOST_PASSES:,} (no sweep lists that many points)")
    if int(digits) < 1:
        raise PointsFileError(f"{where}: {line!r}: passes count from 1 ({name}#1 is the first)")
    return name, int(digits)
