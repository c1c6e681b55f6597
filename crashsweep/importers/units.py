"""What one `audit` reads: its paths as units of records, each read whole before anything is judged.

A unit is the records of one or more runs that belong together (spec/HISTORY.md 7): the files
named on the command line are one unit (a session database and the receiver's ledger of the
same run). A folder a sweep kept (`sweep --keep DIR`: each final world's `history.jsonl` in its
process's folder) gives a unit per final world: what the run left, the records of its work
folder that some kind reads and the tracker's database of that process (none: the tracker
never wrote one, as it does for a space with no record), judged against the job
the sweep ran (its history's header); a world whose work folder holds no record audit reads (a
program of the user's own) is its kept history instead. Any other folder gives a unit per
folder of records some kind recognises (files no kind recognises there are not records: a
program's logs; nor is a save's temporary file, `*.tmp`, which its program never reads). Every
file is read before the first verdict: the first that cannot be used is one Unusable line, and
nothing is judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crashsweep.importers import ledger
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
    """Records that belong together: its name (the path or paths, as given), its sources, and its job's calls."""

    name: str
    sources: tuple[Source, ...]
    expected: tuple[str, ...] = ()
    """The writes the run had to apply, where the unit knows them (a kept sweep's job)."""
    gated: tuple[str, ...] = ()


def read(path: Path) -> Source:
    """The file read by the first kind that recognises it; Unusable when none does or it is bad."""
    found = recognised(path)
    if found is None:
        raise unrecognised(path)
    return found


def recognised(path: Path) -> Source | None:
    """The file read by the first kind that recognises it, or None (Unusable when it is bad)."""
    kind = kind_of(path)
    return None if kind is None else Source(path, kind.name, kind.read(path))


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
    """A unit per final world of a kept sweep, else per folder of recognised records."""
    kept = sorted(folder.rglob(KEPT))
    if kept:
        return [_world(path) for path in kept]
    groups: dict[Path, list[Source]] = {}
    for path in _files(folder):
        found = recognised(path)
        if found is not None:
            groups.setdefault(path.parent, []).append(found)
    if not groups:
        raise Unusable(f"{folder}: no record audit reads in this folder (nor a {KEPT} of a kept sweep)")
    return [Unit(str(parent), tuple(sources)) for parent, sources in groups.items()]


def _files(folder: Path) -> list[Path]:
    """The folder's files, in name order, but a save's temporary file (`*.tmp`): never made durable, never read."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".tmp")


def _world(history: Path) -> Unit:
    """A kept final world: its work folder's records and its tracker's database, or its kept history."""
    world = history.parent
    own = read(history)
    job = own.histories[0] if own.histories else None
    sources = [found for path in _files(world / "work") if (found := recognised(path)) is not None]
    if not sources or job is None:
        return Unit(str(history), (own,))
    tracker = world.parent.parent / "tracker" / f"{world.name}.sqlite3"
    if tracker.is_file():
        sources.append(read(tracker))
    elif tracker.parent.is_dir():  # the sweep had a tracker: this process's space was never written
        sources.append(Source(tracker, "ledger", ledger.untouched(tracker)))
    return Unit(str(world), tuple(sources), job.expected, job.gated)
