"""What one `audit` reads: its paths as units of records, each read whole before anything is judged.

A unit is the records of one or more runs that belong together (spec/HISTORY.md 7): the files
named on the command line are one unit (a session database and the receiver's ledger of the
same run); a folder gives a unit per `history.jsonl` under it (a kept sweep: one a scenario),
or, with none, a unit per folder of records some kind recognises (files no kind recognises
in a folder are not records: a program's logs). Every file is read before the first verdict:
the first that cannot be used is one Unusable line, and nothing is judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crashsweep.importers.base import Unusable
from crashsweep.importers.registry import kind_of, unrecognised
from crashsweep.spec.history import KEPT, History


@dataclass(frozen=True, slots=True)
class Source:
    """One file read: its path, its kind's name, and its histories."""

    path: Path
    kind: str
    histories: tuple[History, ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """Records that belong together: its name (the path or paths, as given) and its sources."""

    name: str
    sources: tuple[Source, ...]


def read(path: Path) -> Source:
    """The file read by the first kind that recognises it; Unusable when none does or it is bad."""
    kind = kind_of(path)
    if kind is None:
        raise unrecognised(path)
    return Source(path, kind.name, kind.read(path))


def units(paths: Sequence[Path]) -> list[Unit]:
    """The units the paths name, every file read: the files together, then each folder's."""
    files = [path for path in paths if not path.is_dir()]
    for path in files:
        if not path.exists():
            raise Unusable(f"{path}: no such file or folder")
    found: list[Unit] = []
    if files:
        found.append(Unit(" + ".join(str(path) for path in files), tuple(read(path) for path in files)))
    for folder in (path for path in paths if path.is_dir()):
        found.extend(_folder(folder))
    return found


def _folder(folder: Path) -> list[Unit]:
    """A unit per kept history under the folder, else per folder of recognised records."""
    kept = sorted(folder.rglob(KEPT))
    if kept:
        return [Unit(str(path), (read(path),)) for path in kept]
    groups: dict[Path, list[Source]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if kind_of(path) is not None:
            groups.setdefault(path.parent, []).append(read(path))
    if not groups:
        raise Unusable(f"{folder}: no record audit reads in this folder (nor a {KEPT} of a kept sweep)")
    return [Unit(str(parent), tuple(sources)) for parent, sources in groups.items()]
