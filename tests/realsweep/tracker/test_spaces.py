"""The tracker's spaces: a database per space, created by a write only, closed on eviction and at the stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.tracker.spaces import Spaces, SpacesClosed


def test_a_read_of_a_space_without_a_database_creates_nothing(tmp_path: Path) -> None:
    """use(create=False) of an unknown space yields None and leaves the folder empty; a write creates the file."""
    spaces = Spaces(tmp_path, honours_keys=True)
    with spaces.use("ghost", create=False) as store:
        assert store is None
    assert list(tmp_path.iterdir()) == []
    with spaces.use("ghost", create=True) as store:
        assert store is not None
        store.create_issue("disk full", "", "r", "c", None)
    with spaces.use("ghost", create=False) as store:
        assert store is not None
        assert len(store.records()) == 1
    spaces.close()
    assert spaces.path("ghost") == tmp_path / "ghost.sqlite3"
    assert spaces.path("ghost").exists()


def test_a_database_on_disk_is_read_after_a_restart(tmp_path: Path) -> None:
    """A space whose file exists is opened by a read, though this Spaces never wrote it."""
    first = Spaces(tmp_path, honours_keys=False)
    with first.use("s", create=True) as store:
        assert store is not None
        store.create_issue("a", "", "r", "c", None)
    first.close()
    again = Spaces(tmp_path, honours_keys=False)
    with again.use("s", create=False) as store:
        assert store is not None
        assert [r["call"] for r in store.records()] == ["c"]
    again.close()


def test_the_least_recently_used_space_is_closed_past_the_limit_and_reopened_on_use(tmp_path: Path) -> None:
    """With limit 2, a third space closes the oldest; using it again opens it again with its records."""
    spaces = Spaces(tmp_path, honours_keys=True, limit=2)
    opened = []
    for name in ("a", "b", "c"):
        with spaces.use(name, create=True) as store:
            assert store is not None
            store.create_issue(name, "", "r", name, None)
            opened.append(store)
    assert [store.closed for store in opened] == [True, False, False]
    with spaces.use("a", create=False) as store:
        assert store is not None
        assert store is not opened[0]
        assert [r["title"] for r in store.records()] == ["a"]
    assert opened[1].closed
    spaces.close()


def test_a_store_is_held_under_its_lock_and_only_while_used(tmp_path: Path) -> None:
    """Inside use() the space's lock is held (so a second user waits); other spaces and the end release it."""
    spaces = Spaces(tmp_path, honours_keys=True)
    with spaces.use("s", create=True) as held:
        assert held is not None
        assert held.lock.locked()
        with spaces.use("t", create=True) as other:
            assert other is not None
            assert other.lock.locked()
        assert not other.lock.locked()
        assert held.lock.locked()
    assert not held.lock.locked()
    spaces.close()


def test_after_close_every_use_is_refused(tmp_path: Path) -> None:
    """A request still in flight when the service stops cannot open a database again."""
    spaces = Spaces(tmp_path, honours_keys=True)
    with spaces.use("s", create=True) as store:
        assert store is not None
    spaces.close()
    assert store.closed
    for create in (False, True):
        with pytest.raises(SpacesClosed, match="stopping"), spaces.use("s", create=create):
            pass
