"""A real world as a value: the work directory's files and the tracker space, and its digest.

A swept process's behaviour depends only on what is on disk and at the tracker (the sweep
checks it), so two scenarios that leave the same files and the same tracker database have
the same future. `World` is that state, captured after a process ended: every file under the
work directory (path relative to it, and bytes) and every row of every table of the space's
SQLite database (records, remembered idempotency keys, the number sequence), rows sorted so
that the value does not depend on storage order. `digest` is a SHA-256 of its canonical JSON.

A program whose files carry a timestamp, a process ID or a random ID makes every world new;
a state key (`--state-key module:function`, World -> World) rewrites such fields to a
constant before the digest. It must keep everything the program's future depends on.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path

TRACKER_FILE = "tracker.sqlite3"
FILES = "files"


@dataclass(frozen=True, slots=True)
class World:
    """Files (relative path, bytes), sorted by path; tracker tables (name, sorted JSON rows)."""

    files: tuple[tuple[str, bytes], ...] = ()
    tables: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def file(self, name: str) -> bytes | None:
        """The bytes of file `name` (relative path), or None."""
        return next((data for path, data in self.files if path == name), None)

    def with_file(self, name: str, data: bytes) -> World:
        """The same world with file `name` holding `data` (for state keys)."""
        files = tuple((path, data if path == name else old) for path, old in self.files)
        return replace(self, files=files)


StateKey = Callable[[World], World]


def digest(world: World) -> str:
    """SHA-256 (hex) of the world's canonical JSON."""
    data = {
        "files": [[path, hashlib.sha256(content).hexdigest()] for path, content in world.files],
        "tables": [[name, list(rows)] for name, rows in world.tables],
    }
    return hashlib.sha256(json.dumps(data, separators=(",", ":")).encode("utf-8")).hexdigest()


def read_world(folder: Path) -> World:
    """The world saved in `folder` by `save` (files/ and tracker.sqlite3, either may be absent)."""
    return capture(folder / FILES, folder / TRACKER_FILE)


def capture(workdir: Path, space: Path | None, live: LiveTables | None = None) -> World:
    """The world of a work directory and a space's database (read-only; its WAL included).

    `live`: the space's tables read over its kept connection (a process's snapshots).
    """
    found = sorted(_files(str(workdir), "")) if os.path.isdir(workdir) else []
    tables = () if space is None else live.read() if live is not None else _tables(space)
    return World(tuple(found), tables)


class LiveTables:
    """The tables of one live space, read again and again over one read-only connection.

    A snapshot sweep reads a running process's space at each of its points (process/snapshots.py);
    opening the database each time cost more than reading it. The connection holds no
    transaction between reads, so each read sees what the tracker has committed by then (in
    WAL mode a reader never blocks the tracker's writes). Until the space's file exists (no
    write yet), there is nothing to read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def read(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every table's rows as sorted JSON lists, as `capture` reads them; () while there is no database."""
        if self._db is None:
            if not self.path.exists():
                return ()
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        return _rows(self._db)

    def close(self) -> None:
        """Close the connection, if one was opened."""
        if self._db is not None:
            self._db.close()
            self._db = None


def _files(folder: str, prefix: str) -> Iterator[tuple[str, bytes]]:
    """Every file under `folder` (into its subfolders, not through links to folders): (prefix + relative path, bytes).

    os.scandir, not Path.rglob: the sweep captures a world after every process (at every
    point, with snapshots), and the paths' objects cost more than the few files' reads.
    """
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                yield from _files(entry.path, f"{prefix}{entry.name}/")
            elif entry.is_file():
                with open(entry.path, "rb") as file:
                    yield prefix + entry.name, file.read()


def _tables(path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every table's rows as sorted JSON lists; () when there is no database."""
    if not path.exists():
        return ()
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return _rows(db)


def _rows(db: sqlite3.Connection) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every table's rows, read over `db`, as sorted JSON lists."""
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    tables = []
    for name in names:
        rows = db.execute(f'SELECT * FROM "{name}"').fetchall()
        tables.append((name, tuple(sorted(json.dumps(list(row)) for row in rows))))
    return tuple(tables)


def save(workdir: Path, space: Path | None, folder: Path) -> None:
    """Save a world: the work directory's files to folder/files, a consistent copy of the space's database.

    The database is copied with SQLite's backup API (what its WAL holds included); the
    process that wrote it is dead, so nothing writes to it meanwhile.
    """
    folder.mkdir(parents=True)
    copy_files(workdir, folder / FILES)
    if space is not None and space.exists():
        with closing(sqlite3.connect(space)) as source, closing(sqlite3.connect(folder / TRACKER_FILE)) as target:
            target.execute("PRAGMA synchronous=OFF")  # a working copy: a power cut is not what a sweep survives
            source.backup(target)


def restore(folder: Path, workdir: Path, space: Path) -> None:
    """Lay a saved world out as a new work directory and a new (not yet opened) space database."""
    copy_files(folder / FILES, workdir)
    saved = folder / TRACKER_FILE
    if saved.exists():
        shutil.copyfile(saved, space)
        os.chmod(space, 0o644)


def copy_files(source: Path, target: Path) -> None:
    """Copy the folder `source` to the new folder `target`: the files' bytes, subfolders, links as links.

    Neither times nor permission bits are copied (shutil.copytree's copy2 sets both, five
    system calls a file): a world is its files' bytes (`capture`), and the program makes its
    files with the default mode, which a new file gets again.
    """
    os.makedirs(target)
    with os.scandir(source) as entries:
        for entry in entries:
            to = target / entry.name
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), to)
            elif entry.is_dir():
                copy_files(Path(entry.path), to)
            else:
                shutil.copyfile(entry.path, to)
