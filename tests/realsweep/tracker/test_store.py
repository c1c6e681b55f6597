"""The tracker's SQLite store: records tagged with run and call, keys honoured or ignored."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from crashsweep.realsweep.tracker.store import Store, forget_keys


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[Store]:
    """A store that honours keys."""
    store = Store(tmp_path / "keyed.sqlite3", honours_keys=True)
    yield store
    store.close()


@pytest.fixture
def keyless(tmp_path: Path) -> Iterator[Store]:
    """A store that ignores keys."""
    store = Store(tmp_path / "keyless.sqlite3", honours_keys=False)
    yield store
    store.close()


def test_a_repeated_key_returns_the_first_answer_and_changes_nothing(keyed: Store) -> None:
    """Same key, same parameters: the stored answer, marked replayed, and still one record."""
    first = keyed.create_issue("disk full", "", "run-1", "create_a", "k1")
    again = keyed.create_issue("disk full", "", "run-1", "create_a", "k1")
    assert first == (201, {"number": 1, "kind": "issue", "title": "disk full"})
    assert again == (201, {**first[1], "replayed": True})
    assert len(keyed.records()) == 1


def test_a_key_reused_with_other_parameters_is_refused_with_422(keyed: Store) -> None:
    """Same key, other parameters: 422, and nothing is written."""
    keyed.create_issue("disk full", "", "run-1", "create_a", "k1")
    status, answer = keyed.create_issue("fan noise", "", "run-1", "create_a", "k1")
    assert status == 422
    assert "other parameters" in answer["error"]
    assert len(keyed.records()) == 1


def test_a_record_keeps_its_approval_which_is_no_parameter_of_its_key(keyed: Store) -> None:
    """A gated write's approval is kept on its record (CONVERSATIONS.md 2), and is no parameter.

    The same write under a later approval is the same request to its key: the first answer, nothing applied.
    """
    first = keyed.create_issue("refund", "", "run-1", "w", "k1", approval="w@1#1")
    again = keyed.create_issue("refund", "", "run-1", "w", "k1", approval="w@1#2")
    assert again == (201, {**first[1], "replayed": True})
    keyed.comment(1, "ok", "run-1", "c", None)
    assert [(r["call"], r["approval"]) for r in keyed.records()] == [("w", "w@1#1"), ("c", None)]


def test_a_keyless_store_applies_every_write(keyless: Store) -> None:
    """Keys are ignored: the same request twice makes two records."""
    keyless.create_issue("disk full", "", "run-1", "create_a", "k1")
    keyless.create_issue("disk full", "", "run-1", "create_a", "k1")
    assert [r["call"] for r in keyless.records()] == ["create_a", "create_a"]


def test_lookup_finds_the_first_record_of_a_call_in_a_run(keyless: Store) -> None:
    """Did call C of run R happen? The first record, and only for that run."""
    keyless.create_issue("a", "", "run-1", "create_a", None)
    keyless.create_issue("a", "", "run-1", "create_a", None)
    record = keyless.lookup("run-1", "create_a")
    assert record is not None
    assert record["number"] == 1
    assert keyless.lookup("run-2", "create_a") is None


def test_comments_need_an_issue_and_search_finds_issues(keyed: Store) -> None:
    """A comment on a missing issue is 404; search matches titles and bodies, literally."""
    assert keyed.comment(7, "hello", "run-1", "comment_a", None)[0] == 404
    number = keyed.create_issue("100% disk_full", "", "run-1", "create_a", None)[1]["number"]
    assert keyed.comment(number, "me too", "run-1", "comment_a", None)[0] == 201
    assert [i["title"] for i in keyed.search("100%")] == ["100% disk_full"]
    assert keyed.search("0_d") == []
    assert len(keyed.search("")) == 1


def test_the_database_is_in_wal_mode_and_outlives_the_store(tmp_path: Path) -> None:
    """Writes are committed: a new connection after close sees them; the journal is WAL."""
    path = tmp_path / "t.sqlite3"
    store = Store(path, honours_keys=True)
    store.create_issue("a", "", "run-1", "create_a", "k")
    store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 1
    db.close()


def test_forgotten_keys_leave_the_records_and_a_resend_is_applied_again(tmp_path: Path) -> None:
    """key-expiry (FAULTS.md 3): the keys go, the records stay; the same key is then new to the tracker."""
    path = tmp_path / "t.sqlite3"
    store = Store(path, honours_keys=True)
    store.create_issue("a", "", "run-1", "create_a", "k1")
    store.create_issue("b", "", "run-1", "create_b", "k2")
    store.close()
    assert forget_keys(path) == 2
    store = Store(path, honours_keys=True)
    try:
        assert [r["call"] for r in store.records()] == ["create_a", "create_b"]
        again = store.create_issue("a", "", "run-1", "create_a", "k1")
        assert again == (201, {"number": 3, "kind": "issue", "title": "a"})
        assert store.forget_keys() == 1
        assert store.forget_keys() == 0
    finally:
        store.close()


def test_each_lease_is_one_newer_and_older_tokens_are_fenced(keyed: Store) -> None:
    """FAULTS.md 7.1: tokens 1, 2, 3 in turn; after the third only 1 and 2 are older than the newest."""
    assert not keyed.fenced(1)  # no lease yet: nothing is older than the newest
    assert [keyed.grant_lease() for _ in range(3)] == [(201, {"token": n}) for n in (1, 2, 3)]
    assert [keyed.fenced(token) for token in (1, 2, 3, 4)] == [True, True, False, False]


def test_a_space_that_grants_no_lease_has_no_lease_table(tmp_path: Path) -> None:
    """The table is made at the first grant, so a sweep without leases sees the tables (and digests) it saw before."""
    path = tmp_path / "t.sqlite3"

    def tables() -> set[str]:
        with closing(sqlite3.connect(path)) as db:
            return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    store = Store(path, honours_keys=True)
    try:
        store.create_issue("a", "", "r", "c", None)
        assert "leases" not in tables()
        store.grant_lease()
        assert "leases" in tables()
    finally:
        store.close()
