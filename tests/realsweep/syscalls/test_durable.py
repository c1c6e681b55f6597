"""The power-cut model (spec/POINTS.md section 4) against hand derivations of small traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crashsweep.realsweep.syscalls import durable


def write(file: str, data: bytes, offset: int = 0) -> dict[str, Any]:
    return {"op": "write", "file": file, "offset": offset, "data": data.hex()}


def op(name: str, file: str, **more: Any) -> dict[str, Any]:
    return {"op": name, "file": file, **more}


SAVE = [op("create", "s.tmp"), write("s.tmp", b"new"), op("rename", "s.tmp", to="s")]
"""A save with no fsync: write the temp file, rename it over the checkpoint."""


def test_an_unsynced_rename_is_undone_and_the_old_file_comes_back() -> None:
    """Rule 3: the rename changed only live entries of "."; rule 4: the cut keeps the durable ones.

    Durable before: s -> the start's node ("old"). The temp file's create and the rename were
    never made durable (no fsync of "."), so s still names the old node, whose content was
    never touched: "old". The temp file's entry was never durable: gone. Not an empty s: that
    needs the rename durable (a folder fsync) with the data not (next test).
    """
    disk = durable.replay({"s": b"old"}, SAVE)
    assert disk.files() == {"s": b"new"}  # what a crash leaves
    assert disk.after_cut() == {"s": b"old"}


def test_a_durable_rename_of_unsynced_data_leaves_an_empty_file() -> None:
    """Rule 2: a new node's durable content is empty until its fsync; the folder's fsync made s name it."""
    disk = durable.replay({"s": b"old"}, [*SAVE, op("fsync", ".")])
    assert disk.after_cut() == {"s": b""}


def test_the_full_save_is_durable() -> None:
    """Write, fsync the file, rename, fsync the folder: the cut leaves what a crash leaves."""
    steps = [*SAVE[:2], op("fsync", "s.tmp"), SAVE[2], op("fsync", ".")]
    disk = durable.replay({"s": b"old"}, steps)
    assert disk.after_cut() == disk.files() == {"s": b"new"}


def test_a_synced_temp_file_without_its_folder_fsync_is_lost_too() -> None:
    """The temp file's data is durable, its entry (created) is not: the cut leaves the start alone."""
    disk = durable.replay({}, [op("create", "s.tmp"), write("s.tmp", b"new"), op("fsync", "s.tmp")])
    assert disk.after_cut() == {}


def test_appends_and_partial_writes_are_lost_whole() -> None:
    """An unsynced append leaves the durable content, not a prefix; a synced one stays."""
    steps = [write("log", b"b", offset=1), op("fsync", "log"), write("log", b"cd", offset=2)]
    disk = durable.replay({"log": b"a"}, steps)
    assert disk.files() == {"log": b"abcd"}
    assert disk.after_cut() == {"log": b"ab"}


def test_unlink_mkdir_and_truncate_follow_the_folder_and_file_rules() -> None:
    """An unlink is undone without a folder fsync; a mkdir is kept with one; a file in an undone folder is gone."""
    steps = [op("unlink", "a"), op("mkdir", "d"), op("create", "d/f"), write("d/f", b"x"), op("fsync", "d/f")]
    steps += [op("fsync", "d"), op("truncate", "b", length=1), op("fsync", "b")]
    assert durable.replay({"a": b"1", "b": b"22"}, steps).after_cut() == {"a": b"1", "b": b"2"}
    assert durable.replay({"a": b"1", "b": b"22"}, [*steps, op("fsync", ".")]).after_cut() == {
        "b": b"2",
        "d": None,
        "d/f": b"x",
    }


def test_cut_rewrites_the_work_folder_from_the_start_copy_and_the_journal(tmp_path: Path) -> None:
    """The folder a crash left (the renamed save) becomes the start's; a second cut changes nothing."""
    work, journal = tmp_path / "work", tmp_path / "journal.jsonl"
    start = Path(str(journal) + ".start")
    start.mkdir()
    (start / "s").write_text("old", encoding="utf-8")
    work.mkdir()
    (work / "s").write_text("new", encoding="utf-8")
    journal.write_text("".join(json.dumps(entry) + "\n" for entry in SAVE), encoding="utf-8")
    assert durable.traced(journal)
    assert durable.cut(work, journal)
    assert durable.read(work) == {"s": b"old"}
    assert not durable.cut(work, journal)
    assert not durable.traced(tmp_path / "other.jsonl")


def test_a_renamed_folder_takes_its_durable_entries_with_it() -> None:
    """Rule 3: a folder's entries are its node's, so a rename of the folder moves them.

    The set-up of a database made in a folder of its own: d/f written and fsynced, d fsynced
    (f's entry durable in d's node), then d renamed to e. Before "." is fsynced the rename is
    undone and the durable d holds f; after, e holds it: the entry made durable in d's node is
    not lost by the node's new name (a file system keeps entries in the folder, not by path).
    """
    steps = [op("mkdir", "d"), op("create", "d/f"), write("d/f", b"x"), op("fsync", "d/f"), op("fsync", "d")]
    steps += [op("fsync", "."), op("rename", "d", to="e")]
    assert durable.replay({}, steps).after_cut() == {"d": None, "d/f": b"x"}
    assert durable.replay({}, [*steps, op("fsync", ".")]).after_cut() == {"e": None, "e/f": b"x"}
    later = [*steps, op("fsync", "."), op("create", "e/g"), write("e/g", b"y"), op("fsync", "e/g")]
    assert durable.replay({}, later).after_cut() == {"e": None, "e/f": b"x"}  # g's entry: e never fsynced since
