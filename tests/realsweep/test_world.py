"""A real world as a value: files and tracker tables saved, laid out again, and digested."""

from __future__ import annotations

from pathlib import Path

from crashsweep.realsweep.tracker.store import Store
from crashsweep.realsweep.world import (
    TRACKER_FILE,
    LiveTables,
    World,
    capture,
    copy_files,
    digest,
    read_world,
    restore,
    save,
)


def _world(tmp_path: Path, name: str, *, issue: str = "disk full", note: bytes = b"one") -> Path:
    """A work directory with two files, a tracker database with an issue under a key; saved to a folder."""
    work = tmp_path / f"{name}-work"
    (work / "sub").mkdir(parents=True)
    (work / "note.txt").write_bytes(note)
    (work / "sub" / "more.json").write_text("{}")
    store = Store(tmp_path / f"{name}.sqlite3", honours_keys=True)
    store.create_issue(issue, "", "run", "create_a", "key-1")
    save(work, store.path, tmp_path / name)  # the store is still open, as the service keeps it
    store.close()
    return tmp_path / name


def test_the_same_files_and_records_give_the_same_digest_wherever_they_are(tmp_path: Path) -> None:
    first, second = read_world(_world(tmp_path, "a")), read_world(_world(tmp_path, "b"))
    assert first == second
    assert digest(first) == digest(second)
    assert [path for path, _ in first.files] == ["note.txt", "sub/more.json"]
    tables = dict(first.tables)
    assert len(tables["records"]) == 1
    assert len(tables["idempotency_keys"]) == 1


def test_a_changed_byte_or_record_is_another_world(tmp_path: Path) -> None:
    base = digest(read_world(_world(tmp_path, "a")))
    assert digest(read_world(_world(tmp_path, "b", note=b"two"))) != base
    assert digest(read_world(_world(tmp_path, "c", issue="disk empty"))) != base
    assert digest(World()) != base


def test_a_saved_world_is_laid_out_again_as_it_was(tmp_path: Path) -> None:
    """restore: the files and a database the service can open, holding the same rows."""
    saved = _world(tmp_path, "a")
    work, space = tmp_path / "again", tmp_path / "again.sqlite3"
    restore(saved, work, space)
    assert (work / "note.txt").read_bytes() == b"one"
    again = tmp_path / "again-saved"
    save(work, space, again)
    assert read_world(again) == read_world(saved)
    store = Store(space, honours_keys=True)  # the remembered key still answers: nothing new is applied
    status, answer = store.create_issue("disk full", "", "run", "create_a", "key-1")
    assert (status, answer.get("replayed")) == (201, True)
    store.close()


def test_without_a_tracker_the_world_is_its_files(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "f").write_text("x")
    save(work, None, tmp_path / "saved")
    assert not (tmp_path / "saved" / TRACKER_FILE).exists()
    assert read_world(tmp_path / "saved") == World((("f", b"x"),), ())


def test_with_file_replaces_one_file_for_a_state_key() -> None:
    world = World((("a", b"1"), ("b", b"2")))
    assert world.with_file("b", b"0") == World((("a", b"1"), ("b", b"0")))
    assert world.file("c") is None


def test_copy_files_copies_bytes_folders_and_links_and_capture_reads_them_back(tmp_path: Path) -> None:
    """The lean copy: every file's bytes, nested folders, a link as a link; the copy is the same world."""
    source = tmp_path / "source"
    (source / "a" / "b").mkdir(parents=True)
    (source / "top.txt").write_bytes(b"1")
    (source / "a" / "b" / "deep.bin").write_bytes(bytes(range(256)))
    (source / "link").symlink_to("top.txt")
    copy_files(source, tmp_path / "copy")
    assert (tmp_path / "copy" / "link").readlink() == Path("top.txt")
    assert capture(tmp_path / "copy", None) == capture(source, None)
    assert [path for path, _ in capture(source, None).files] == ["a/b/deep.bin", "link", "top.txt"]


def test_live_tables_read_what_capture_reads_each_time_over_one_connection(tmp_path: Path) -> None:
    """Nothing before the database exists; then each read sees the writes committed since, as `capture` would."""
    path = tmp_path / "live.sqlite3"
    live = LiveTables(path)
    try:
        assert live.read() == ()
        store = Store(path, honours_keys=True)
        store.create_issue("disk full", "", "run", "create_a", "key-1")
        first = live.read()
        assert first == capture(tmp_path / "none", path).tables
        assert len(dict(first)["records"]) == 1
        store.create_issue("fan noise", "", "run", "create_b", "key-2")
        assert live.read() == capture(tmp_path / "none", path).tables
        assert len(dict(live.read())["records"]) == 2
        store.close()
    finally:
        live.close()
