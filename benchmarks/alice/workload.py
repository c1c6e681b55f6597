"""The key-value workload of the ALICE comparison (benchmarks/alice_table.py), one program per engine.

    python workload.py ENGINE        ENGINE: one of ENGINES (sqlite-rollback, sqlite-wal, lmdb, leveldb, gdbm)

It follows the key-value workloads and checkers of ALICE (OSDI'14, section 4.1, and the LevelDB
example that ships with ALICE): set up a database of INIT rows when there is none (as a whole,
made durable before it is put in place: ALICE makes it before recording), open it in the
current folder, check it, then insert the rows it does not hold, each one a transaction the engine is
told to make durable before it returns. The world outside the disk is the tracker: once an
insert has returned, the program says so there (an issue "row I"), as ALICE's workloads print
"after I" to the terminal. A restart checks what a user of the engine relies on:

- the database opens (else: "cannot open", exit 3), and takes the rows it lacks (else:
  "failed write", exit 3);
- every row it holds is whole, and they are rows 0..k-1, a prefix in insertion order (else:
  "corrupt" or "out of order", exit 3: atomicity and ordering);
- every row the tracker says was inserted is there (else: "lost", exit 4: durability).

Then it inserts rows k..ROWS-1. A restart that fails a check cannot go on: crashsweep counts it
as a restart that cannot recover, with the line printed here. Each engine is driven through
its own library: sqlite3 (rollback journal, `synchronous=FULL`; or WAL with `synchronous=FULL`),
py-lmdb (the LMDB it bundles; sync and metasync on), plyvel (the LevelDB it bundles;
`sync=True` writes, paranoid checks), and GDBM through ctypes (libgdbm.so.6, `GDBM_SYNC` and a
gdbm_sync after each store, and `GDBM_NOMMAP`: mapped writes are not system calls, and the
tracer sees system calls only). Each engine in its safest configuration, as ALICE counts.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterator
from typing import Any, Protocol

INIT = 2
"""Rows the database holds before the workload proper: ALICE's workloads start from a database
made beforehand (its LevelDB example's init.cc inserts rows before the recording starts)."""
ROWS = 4
"""Rows in all: the workload proper inserts rows INIT..ROWS-1."""
SETUP = "kv.init"
"""Where the set-up database is made; `--points-exclude 'kv.init*'` keeps cuts out of it."""
FILES = {
    "sqlite-rollback": "kv.db",
    "sqlite-wal": "kv.db",
    "lmdb": "kv.lmdb",
    "leveldb": "kv.leveldb",
    "gdbm": "kv.gdbm",
}
"""Each engine's file (or folder) in the work folder."""
VALUE = 1500
"""A value is 1500 bytes: each insert's data spans several 512-byte sectors, so it can tear."""


def key(i: int) -> bytes:
    """Row `i`'s key."""
    return f"row-{i:04d}".encode()


def value(i: int) -> bytes:
    """Row `i`'s value: its number, then a byte pattern of its own, VALUE bytes in all."""
    return (f"value {i} ".encode() + bytes([65 + i]) * VALUE)[:VALUE]


class Store(Protocol):
    """An engine's database as this workload uses it: rows in, rows out, closed."""

    def put(self, k: bytes, v: bytes) -> None: ...
    def rows(self) -> Iterator[tuple[bytes, bytes]]: ...
    def close(self) -> None: ...


class Sqlite:
    """SQLite through sqlite3: one table, one transaction per insert, `synchronous=FULL`."""

    def __init__(self, folder: str, journal: str) -> None:
        self.db = sqlite3.connect(os.path.join(folder, "kv.db"), isolation_level=None)
        self.db.execute(f"PRAGMA journal_mode={journal}")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB)")

    def put(self, k: bytes, v: bytes) -> None:
        self.db.execute("INSERT INTO kv VALUES (?, ?)", (k, v))

    def rows(self) -> Iterator[tuple[bytes, bytes]]:
        yield from self.db.execute("SELECT k, v FROM kv ORDER BY k")

    def close(self) -> None:
        self.db.close()


class Lmdb:
    """LMDB through py-lmdb: one write transaction per insert, synced (its defaults: sync, metasync)."""

    def __init__(self, folder: str) -> None:
        import lmdb

        self.env = lmdb.open(os.path.join(folder, "kv.lmdb"), map_size=1 << 20, sync=True, metasync=True, lock=True)

    def put(self, k: bytes, v: bytes) -> None:
        with self.env.begin(write=True) as txn:
            txn.put(k, v)

    def rows(self) -> Iterator[tuple[bytes, bytes]]:
        with self.env.begin() as txn:
            yield from ((bytes(k), bytes(v)) for k, v in txn.cursor())

    def close(self) -> None:
        self.env.close()


class Leveldb:
    """LevelDB through plyvel: synchronous writes, paranoid checks (ALICE: "We enable checksums")."""

    def __init__(self, folder: str) -> None:
        import plyvel  # type: ignore[import-untyped]

        self.db = plyvel.DB(os.path.join(folder, "kv.leveldb"), create_if_missing=True, paranoid_checks=True)

    def put(self, k: bytes, v: bytes) -> None:
        self.db.put(k, v, sync=True)

    def rows(self) -> Iterator[tuple[bytes, bytes]]:
        yield from self.db.iterator(verify_checksums=True, fill_cache=False)

    def close(self) -> None:
        self.db.close()


class Datum(ctypes.Structure):
    """GDBM's datum: a pointer and a length."""

    _fields_ = [("dptr", ctypes.c_void_p), ("dsize", ctypes.c_int)]


GDBM_WRCREAT, GDBM_REPLACE, GDBM_SYNC, GDBM_NOMMAP, GDBM_ITEM_NOT_FOUND = 2, 1, 0x20, 0x80, 15


class Gdbm:
    """GDBM through ctypes: `GDBM_SYNC` and gdbm_sync after each store, `GDBM_NOMMAP` (writes as system calls).

    A database GDBM says needs recovery is recovered with gdbm_recover, as its manual tells a
    user to (ALICE's checkers run the recovery a user is expected to run, too).
    """

    def __init__(self, folder: str) -> None:
        found = ctypes.util.find_library("gdbm")
        if found is None:
            raise OSError("libgdbm is not installed (Debian: apt-get install libgdbm6)")
        lib = ctypes.CDLL(found)
        lib.gdbm_open.restype = ctypes.c_void_p
        lib.gdbm_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        lib.gdbm_store.argtypes = [ctypes.c_void_p, Datum, Datum, ctypes.c_int]
        lib.gdbm_firstkey.restype = Datum
        lib.gdbm_firstkey.argtypes = [ctypes.c_void_p]
        lib.gdbm_nextkey.restype = Datum
        lib.gdbm_nextkey.argtypes = [ctypes.c_void_p, Datum]
        lib.gdbm_fetch.restype = Datum
        lib.gdbm_fetch.argtypes = [ctypes.c_void_p, Datum]
        lib.gdbm_close.argtypes = [ctypes.c_void_p]
        lib.gdbm_sync.argtypes = [ctypes.c_void_p]
        lib.gdbm_needs_recovery.argtypes = [ctypes.c_void_p]
        lib.gdbm_recover.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.gdbm_errno_location.restype = ctypes.POINTER(ctypes.c_int)
        lib.gdbm_strerror.restype = ctypes.c_char_p
        self.lib = lib
        flags = GDBM_WRCREAT | GDBM_SYNC | GDBM_NOMMAP
        self.db = lib.gdbm_open(os.path.join(folder, "kv.gdbm").encode(), 0, flags, 0o644, None)
        if not self.db:
            raise OSError(f"gdbm_open failed: {self._error()}")
        if lib.gdbm_needs_recovery(self.db) and lib.gdbm_recover(self.db, None, 0) != 0:
            raise OSError(f"gdbm_recover failed: {self._error()}")  # GDBM's own recovery, as a user runs it

    def _error(self) -> str:
        """GDBM's last error, in its words."""
        return (self.lib.gdbm_strerror(self.lib.gdbm_errno_location().contents.value) or b"").decode()

    def put(self, k: bytes, v: bytes) -> None:
        kb, vb = ctypes.create_string_buffer(k, len(k)), ctypes.create_string_buffer(v, len(v))
        if self.lib.gdbm_store(self.db, _datum(kb, len(k)), _datum(vb, len(v)), GDBM_REPLACE) != 0:
            raise OSError("gdbm_store failed")
        if self.lib.gdbm_sync(self.db) != 0:  # GDBM_SYNC alone does not sync every store (1.23): ask for it
            raise OSError("gdbm_sync failed")

    def rows(self) -> Iterator[tuple[bytes, bytes]]:
        self.lib.gdbm_errno_location().contents.value = 0  # an error seen now is this listing's
        k = self.lib.gdbm_firstkey(self.db)
        found = []
        while k.dptr:
            data = self.lib.gdbm_fetch(self.db, k)
            stored = ctypes.string_at(data.dptr, data.dsize) if data.dptr else b""
            found.append((ctypes.string_at(k.dptr, k.dsize), stored))
            k = self.lib.gdbm_nextkey(self.db, k)
        if self.lib.gdbm_errno_location().contents.value not in (0, GDBM_ITEM_NOT_FOUND):
            raise OSError(f"gdbm cannot list its keys: {self._error()}")
        yield from sorted(found)

    def close(self) -> None:
        self.lib.gdbm_close(self.db)


def _datum(buffer: Any, size: int) -> Datum:
    return Datum(ctypes.cast(buffer, ctypes.c_void_p), size)


ENGINES: dict[str, Callable[[str], Store]] = {
    "sqlite-rollback": lambda folder: Sqlite(folder, "DELETE"),
    "sqlite-wal": lambda folder: Sqlite(folder, "WAL"),
    "lmdb": Lmdb,
    "leveldb": Leveldb,
    "gdbm": Gdbm,
}


def versions() -> dict[str, str]:
    """Each engine's library version, as it reports it."""
    import lmdb
    import plyvel

    found = {"SQLite": sqlite3.sqlite_version, "LMDB": ".".join(map(str, lmdb.version()))}
    found["LevelDB"] = plyvel.__leveldb_version__
    library = ctypes.util.find_library("gdbm")
    if library is not None:
        text = ctypes.c_char_p.in_dll(ctypes.CDLL(library), "gdbm_version").value or b""
        found["GDBM"] = text.decode().removeprefix("GDBM version ").split(". ", 1)[0]
    return found


def held(store: Store) -> int:
    """How many rows the store holds, each whole and in insertion order; SystemExit(3) when not so."""
    rows = list(store.rows())
    for i, (k, v) in enumerate(rows):
        if k != key(i):
            raise SystemExit(_fail(3, f"out of order: row {i} of {len(rows)} is {k!r}, not {key(i)!r}"))
        if v != value(i):
            raise SystemExit(_fail(3, f"corrupt: row {i}'s value is not the one inserted ({len(v)} bytes)"))
    return len(rows)


def _fail(status: int, line: str) -> int:
    print(line, file=sys.stderr, flush=True)
    return status


def set_up(engine: str) -> None:
    """Make the database of INIT rows as a set-up the disk keeps whole, then put it in place.

    It is made in SETUP (a crash there leaves a folder the next run starts again), every file
    and folder of it fsynced, renamed into place and the work folder fsynced: the rename is
    the one call that publishes it, and it is durable before the workload proper starts.
    """
    shutil.rmtree(SETUP, ignore_errors=True)
    os.mkdir(SETUP)
    store = ENGINES[engine](SETUP)
    for i in range(INIT):
        store.put(key(i), value(i))
    store.close()
    for folder, _, files in os.walk(SETUP):
        for name in [*files, "."]:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    os.rename(os.path.join(SETUP, FILES[engine]), FILES[engine])
    fd = os.open(".", os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def main(engine: str) -> int:
    """Set up when there is no database; open, check, insert what is missing, saying so at the tracker."""
    from crashsweep import TrackerClient

    tracker = TrackerClient(os.environ["CRASHSWEEP_TRACKER_URL"])
    if not os.path.exists(FILES[engine]):
        set_up(engine)
    try:
        store = ENGINES[engine](".")
        count = held(store)
    except SystemExit:
        raise
    except Exception as error:  # the engine refuses its own files: the user cannot open the database
        return _fail(3, f"cannot open: {type(error).__name__}: {error}")
    said = sorted(int(record["call"].removeprefix("row ")) for record in tracker.records())
    lost = [i for i in [*range(INIT), *said] if i >= count]
    if lost:
        return _fail(
            4, f"lost: row {lost[0]} was inserted (set up or said at the tracker) but the database holds {count}"
        )
    for i in range(count, ROWS):
        try:
            store.put(key(i), value(i))
        except Exception as error:  # the engine cannot write into what the cut left
            return _fail(3, f"failed write: row {i}: {type(error).__name__}: {error}")
        tracker.create_issue(f"row {i}", run="alice", call=f"row {i}")
    store.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ENGINES:
        sys.exit(_fail(2, f"usage: workload.py ENGINE (one of {', '.join(ENGINES)})"))
    sys.exit(main(sys.argv[1]))
