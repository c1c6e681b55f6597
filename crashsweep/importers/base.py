"""What every importer is: a kind of recorded run, how a file of it is recognised, how it is read.

An importer turns one kind of record (OTLP spans, a session database, a checkpoint database,
a workflow history, a receiver's ledger) into Histories, one a run (spec/HISTORY.md 7). It is a
`Kind` value of the registry (importers/registry.py): `recognises` looks at a file cheaply (its
first bytes, an SQLite database's tables) and `read` reads it whole. Input it cannot use is an
`Unusable` error whose one line names the file and the place (line, or table and row) and what
is wrong; nothing read from a file that fails is kept.
"""

from __future__ import annotations

import functools
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from crashsweep.spec.history import History

HEAD = 65536
"""How many bytes of a file `recognises` is given."""
SQLITE = b"SQLite format 3\x00"


class Unusable(ValueError):
    """A record audit cannot use: one line, "FILE:LINE: what" or "FILE: table T row N: what"."""


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of recorded run: its name, what it is, how a file of it is recognised and read."""

    name: str
    summary: str
    recognises: Callable[[Path, bytes], bool]
    """Whether the file at the path, whose first bytes (HEAD at most) are given, is of this kind."""
    read: Callable[[Path], tuple[History, ...]]
    """The file's histories, one a run, in the order the runs began; Unusable for what is wrong."""


def tables(path: Path) -> frozenset[str]:
    """The table names of the SQLite database at `path` (empty when it is not one).

    Every SQLite kind asks while a file is recognised, and each answer costs a copy of the
    database (`connect`): the answer is kept for the file as it stands (its and its WAL's size
    and times).
    """
    try:
        stat = path.stat()
    except OSError:
        return frozenset()
    wal = path.with_name(path.name + "-wal")
    logged = wal.stat() if wal.exists() else None
    log = (logged.st_size, logged.st_mtime_ns) if logged is not None else (0, 0)
    return _tables(path, (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, *log))


@functools.lru_cache(maxsize=64)
def _tables(path: Path, stands: tuple[int, ...]) -> frozenset[str]:
    """The tables of the database at `path` as it stands (`stands`: its and its WAL's sizes and times)."""
    try:
        with closing(connect(path)) as db:
            return frozenset(row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    except (sqlite3.Error, Unusable):
        return frozenset()


class _Copied(sqlite3.Connection):
    """A connection to a copy of a database, whose folder goes when it is closed."""

    folder: tempfile.TemporaryDirectory[str] | None = None

    def close(self) -> None:
        super().close()
        if self.folder is not None:
            self.folder.cleanup()
            self.folder = None


def connect(path: Path) -> sqlite3.Connection:
    """The SQLite database at `path` as it stands, read from a copy: audit never writes beside a record.

    SQLite opens even a read-only connection's shared-memory file (`-shm`) beside a database in
    WAL mode, and a database whose writer died keeps its last transactions in the `-wal` file:
    the database and its WAL are copied into a temporary folder and the copy is read, so what
    the writer committed is seen and the audited folder is left as it was.
    """
    folder = tempfile.TemporaryDirectory(prefix="crashsweep-audit-")
    copy = Path(folder.name) / "db.sqlite"
    try:
        shutil.copyfile(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        db = sqlite3.connect(copy, factory=_Copied)
    except (OSError, sqlite3.Error) as error:
        folder.cleanup()
        raise Unusable(f"{path}: cannot be opened as an SQLite database ({error})") from None
    assert isinstance(db, _Copied)
    db.folder = folder
    return db


def place(path: Path, where: str) -> str:
    """An event's `src`: the file's name and the place in it ("traces.jsonl:span 5b8e...")."""
    return f"{path.name}:{where}"
