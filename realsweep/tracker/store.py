"""The tracker's storage: issues and comments in SQLite (WAL mode), and idempotency keys.

One `Store` is one tracker database. Every write runs in one `BEGIN IMMEDIATE` transaction
that is committed (with synchronous=FULL, so fsynced) before the method returns, and so
before the HTTP layer sends the reply: an answer the loop received is never lost, whatever
happens to the loop. Issues and comments are records numbered from one sequence; each is
tagged with the run and call it came from, which is what the lookup "did call C of run R
happen?" reads. When the store honours keys, a write that carries an Idempotency-Key is
remembered with its answer and a fingerprint of its parameters: the same key again returns
the stored first answer and changes nothing; the same key with other parameters is refused
with 422, as Stripe's API does. A store that ignores keys applies every write.
`forget_keys` drops every remembered key and keeps the records: a tracker whose keys expired
(Stripe keeps them 24 hours), the sweep's `key-expiry` fault (spec/FAULTS.md section 3).
`grant_lease` hands out fencing tokens (one higher than any before) and remembers the newest,
in a table made at the first grant (a space that never grants one has none); `fenced` says
whether a token is older than it (spec/FAULTS.md 7.1, `lease+fencing`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('issue', 'comment')),
    issue INTEGER REFERENCES records(number),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    run TEXT NOT NULL,
    call TEXT NOT NULL,
    approval TEXT
);
CREATE INDEX IF NOT EXISTS records_by_call ON records (run, call);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    answer TEXT NOT NULL
);
"""

LEASES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS leases (space INTEGER PRIMARY KEY CHECK (space = 1), newest INTEGER NOT NULL)"
)
"""The newest fencing token granted in this space (one row), made at the first grant only: a
space that grants no lease keeps exactly the tables (and so the digests, realsweep/world.py) it had."""

KEYS_TABLE = "idempotency_keys"
"""The table of remembered keys."""

Answer = tuple[int, dict[str, Any]]
"""An HTTP status and a JSON body."""


class Store:
    """One tracker database; `lock` serialises its use by the server's threads."""

    def __init__(self, path: Path, *, honours_keys: bool) -> None:
        self.path = path
        self.honours_keys = honours_keys
        self.lock = threading.Lock()
        self.closed = False
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        """Close the database (a later use of this object is an error)."""
        self.closed = True
        self._db.close()

    def create_issue(
        self, title: str, body: str, run: str, call: str, key: str | None, approval: str | None = None
    ) -> Answer:
        """File an issue; 201 with its number. `approval`: what the record keeps of its approval (no parameter)."""
        params = {"op": "create_issue", "title": title, "body": body, "run": run, "call": call}

        def apply() -> Answer:
            number = self._insert("issue", None, title, body, run, call, approval)
            return 201, {"number": number, "kind": "issue", "title": title}

        return self._write(key, params, apply)

    def has_call(self, call: str) -> bool:
        """Whether any record of job call `call` is here, of any run."""
        return self._db.execute("SELECT 1 FROM records WHERE call = ? LIMIT 1", (call,)).fetchone() is not None

    def comment(
        self, issue: int, body: str, run: str, call: str, key: str | None, approval: str | None = None
    ) -> Answer:
        """Comment on issue `issue`; 201 with the comment's number, 404 if there is no such issue."""
        params = {"op": "comment", "issue": issue, "body": body, "run": run, "call": call}

        def apply() -> Answer:
            row = self._db.execute("SELECT 1 FROM records WHERE number = ? AND kind = 'issue'", (issue,)).fetchone()
            if row is None:
                return 404, {"error": f"no issue #{issue}"}
            number = self._insert("comment", issue, "", body, run, call, approval)
            return 201, {"number": number, "kind": "comment", "issue": issue}

        return self._write(key, params, apply)

    def search(self, text: str) -> list[dict[str, Any]]:
        """The issues whose title or body contains `text` (all issues for empty text)."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._db.execute(
            "SELECT * FROM records WHERE kind = 'issue' AND (title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\') "
            "ORDER BY number",
            (pattern, pattern),
        )
        return [dict(row) for row in rows]

    def lookup(self, run: str, call: str) -> dict[str, Any] | None:
        """The first record that call `call` of run `run` left, or None: "did it happen?"."""
        row = self._db.execute(
            "SELECT * FROM records WHERE run = ? AND call = ? ORDER BY number LIMIT 1", (run, call)
        ).fetchone()
        return dict(row) if row is not None else None

    def forget_keys(self) -> int:
        """Forget every remembered key (the records stay); how many there were."""
        with self._transaction():
            return int(self._db.execute(f"DELETE FROM {KEYS_TABLE}").rowcount)

    def grant_lease(self) -> Answer:
        """A lease: 201 with a fencing token one higher than any granted before, remembered as the newest."""
        with self._transaction():
            self._db.execute(LEASES_SCHEMA)
            token = self._newest() + 1
            self._db.execute("INSERT OR REPLACE INTO leases (space, newest) VALUES (1, ?)", (token,))
        return 201, {"token": token}

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One `BEGIN IMMEDIATE` transaction: committed when the block ends, rolled back when it raises."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def fenced(self, token: int) -> bool:
        """Whether `token` is older than the newest lease granted (its holder is refused)."""
        return token < self._newest()

    def _newest(self) -> int:
        """The newest fencing token granted, 0 for none."""
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'leases'").fetchone() is None:
            return 0
        row = self._db.execute("SELECT newest FROM leases WHERE space = 1").fetchone()
        return int(row["newest"]) if row is not None else 0

    def records(self) -> list[dict[str, Any]]:
        """Every record, in the order applied."""
        return [dict(row) for row in self._db.execute("SELECT * FROM records ORDER BY number")]

    def _insert(
        self, kind: str, issue: int | None, title: str, body: str, run: str, call: str, approval: str | None
    ) -> int:
        cursor = self._db.execute(
            "INSERT INTO records (kind, issue, title, body, run, call, approval) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, issue, title, body, run, call, approval),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _write(self, key: str | None, params: dict[str, Any], apply: Callable[[], Answer]) -> Answer:
        """Run one write in one transaction, honouring `key` when the store honours keys."""
        remember = key is not None and self.honours_keys
        fingerprint = hashlib.sha256(json.dumps(params, sort_keys=True).encode("utf-8")).hexdigest()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if remember:
                row = self._db.execute(
                    "SELECT fingerprint, status, answer FROM idempotency_keys WHERE key = ?", (key,)
                ).fetchone()
                if row is not None:
                    self._db.execute("ROLLBACK")
                    if row["fingerprint"] != fingerprint:
                        return 422, {"error": "Idempotency-Key already used with other parameters", "key": key}
                    return row["status"], {**json.loads(row["answer"]), "replayed": True}
            status, answer = apply()
            if remember and status < 400:
                self._db.execute(
                    "INSERT INTO idempotency_keys (key, fingerprint, status, answer) VALUES (?, ?, ?, ?)",
                    (key, fingerprint, status, json.dumps(answer)),
                )
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        return status, answer


def forget_keys(path: Path) -> int:
    """Make the tracker database at `path` forget every key (key-expiry on a saved world); how many it held."""
    store = Store(path, honours_keys=True)
    try:
        return store.forget_keys()
    finally:
        store.close()
