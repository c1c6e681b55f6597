"""The tracker's spaces: one SQLite database per space, opened on demand, one user at a time.

A space is `<root>/<name>.sqlite3`. A write opens (and creates) its database; a read of a space
that has no database yet is answered from an empty view and creates nothing, so that a client
that only looks leaves no file behind. At most `limit` databases are open at once (the least
recently used is closed). Each store is used by one request at a time, under its lock; the
service takes that lock only once the request has been read whole, so a slow client never
holds it. After `close`, every use is refused with `SpacesClosed`, so that a request still in
flight when the service stops does not open a database again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crashsweep.realsweep.tracker.store import Store


class SpacesClosed(RuntimeError):
    """The service is stopping: its databases are closed."""


class Spaces:
    """The open databases, one per space, at most `limit` open at once (least recently used closed)."""

    def __init__(self, root: Path, *, honours_keys: bool, limit: int = 32) -> None:
        self.root = root
        self.honours_keys = honours_keys
        self.limit = limit
        self._open: OrderedDict[str, Store] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    def path(self, name: str) -> Path:
        """The database file of space `name`."""
        return self.root / f"{name}.sqlite3"

    @contextmanager
    def use(self, name: str, *, create: bool) -> Iterator[Store | None]:
        """The store of space `name`, held for the caller alone; None if it has no database and not `create`."""
        while True:
            store = self._store(name, create)
            if store is None:
                yield None
                return
            with store.lock:
                if store.closed:  # closed by an eviction between our lookup and our lock: open it again
                    continue
                yield store
                return

    def close(self) -> None:
        """Close every open database, after the request using each one is done; refuse any later use."""
        with self._lock:
            self._closed = True
            stores, self._open = list(self._open.values()), OrderedDict()
        for store in stores:
            with store.lock:
                store.close()

    def _store(self, name: str, create: bool) -> Store | None:
        """The open store of `name`, opened (or created, if `create`) now if need be, evicting the oldest."""
        victims: list[Store] = []
        with self._lock:
            if self._closed:
                raise SpacesClosed("the tracker is stopping")
            store = self._open.get(name)
            if store is None:
                if not create and not self.path(name).exists():
                    return None
                store = Store(self.path(name), honours_keys=self.honours_keys)
                self._open[name] = store
                while len(self._open) > self.limit:
                    victims.append(self._open.popitem(last=False)[1])
            self._open.move_to_end(name)
        for victim in victims:
            with victim.lock:
                victim.close()
        return store
