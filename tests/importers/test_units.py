"""What one audit reads (importers/units.py): files named together, folders of kept histories or of records.

Each fixture is a real record of its kind, written small: a History JSONL, a ledger CSV, the
reference loop's checkpoint as the loop's own save writes it (realsweep/probe/checkpoint.py), an
SQLite database of another schema. The units expected follow spec/HISTORY.md 7 ("Units").
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from crashsweep.importers.base import Unusable
from crashsweep.importers.units import Unit, units
from crashsweep.realsweep.probe import checkpoint
from crashsweep.realsweep.tracker.store import Store
from crashsweep.spec.history import Event, History, write

KINDS = "spans, history, otlp, openai-session, langgraph, dbos, temporal, reference, ledger"
"""The kinds, in the registry's order (spec/HISTORY.md 7's table; crashsweep's own two at their places)."""


def kept(path: Path, run: str) -> Path:
    """A History JSONL of one effect of create_a in `run`, as `sweep --keep` writes one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write(History((Event(run, 0, 1, "ok", "effect", call="create_a", effect_id="#1"),), expected=("create_a",)), path)
    return path


def ledger(path: Path) -> Path:
    """A ledger CSV of one record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("effect_id,call,run\n#1,create_a,r1\n", encoding="utf-8")
    return path


def saved(path: Path, run: str = "r1") -> Path:
    """The reference loop's checkpoint of a finished run, saved by the loop's own two-step save."""
    path.parent.mkdir(parents=True, exist_ok=True)
    turn = {"index": 1, "results": {"create_a": "#1"}, "marked": [], "complete": True}
    checkpoint.save(path, {"run": run, "done": True, "turns": [turn]})
    return path


def summary(found: list[Unit]) -> list[tuple[str, list[tuple[Path, str]]]]:
    """Each unit's name and its sources' paths and kinds."""
    return [(unit.name, [(source.path, source.kind) for source in unit.sources]) for unit in found]


def test_files_named_together_are_one_unit_named_by_them_all(tmp_path: Path) -> None:
    """Two files named: one unit "A + B", their sources in the order named, each read by its kind."""
    first = ledger(tmp_path / "effects.csv")
    second = saved(tmp_path / "checkpoint.json")
    found = units([first, second])
    assert summary(found) == [(f"{first} + {second}", [(first, "ledger"), (second, "reference")])]
    # The ledger's one record, the checkpoint's one turn (model call, call, result) and its end (model call, status).
    assert [len(source.histories[0].events) for source in found[0].sources] == [1, 5]


def test_a_missing_path_is_one_unusable_line(tmp_path: Path) -> None:
    """A path that is not there is refused by name, though a good file was named before it."""
    missing = tmp_path / "nowhere.csv"
    with pytest.raises(Unusable) as refused:
        units([ledger(tmp_path / "effects.csv"), missing])
    assert str(refused.value) == f"{missing}: no such file or folder"


def test_the_files_unit_comes_before_the_folders(tmp_path: Path) -> None:
    """A folder named first and a file named after it: the files' unit first, then the folder's."""
    folder = tmp_path / "sweep"
    history = kept(folder / "p1" / "history.jsonl", "r1")
    file = ledger(tmp_path / "effects.csv")
    assert summary(units([folder, file])) == [(str(file), [(file, "ledger")]), (str(history), [(history, "history")])]


def test_a_kept_sweep_without_records_in_its_work_folders_gives_each_history_as_a_unit_sorted(
    tmp_path: Path,
) -> None:
    """Three history.jsonl at several depths, no record in a work folder: one unit each, by path.

    Sorted paths: kept/history.jsonl, kept/processes/p10/..., kept/processes/p2/... ("p10" sorts
    before "p2"). p2's work folder holds a program's log only, which is no record; the ledger
    outside any work folder is not read (a kept sweep's units are its worlds).
    """
    folder = tmp_path / "kept"
    p2 = kept(folder / "processes" / "p2" / "history.jsonl", "r2")
    p10 = kept(folder / "processes" / "p10" / "history.jsonl", "r10")
    top = kept(folder / "history.jsonl", "r0")
    (folder / "processes" / "p2" / "work").mkdir()
    (folder / "processes" / "p2" / "work" / "output.txt").write_text("done\n", encoding="utf-8")
    ledger(folder / "elsewhere" / "effects.csv")
    found = units([folder])
    assert summary(found) == [(str(path), [(path, "history")]) for path in (top, p10, p2)]
    assert [unit.sources[0].histories[0].events[0].run for unit in found] == ["r0", "r10", "r2"]
    assert {(unit.expected, unit.gated) for unit in found} == {((), ())}


def test_a_kept_world_with_records_is_its_work_folder_and_tracker_under_the_sweeps_job(tmp_path: Path) -> None:
    """p1: a checkpoint in work/ and tracker/p1.sqlite3; p2: a checkpoint, no tracker database.

    Each world is one unit named by its process folder: its work folder's records (file-name
    order), then its tracker's database; the job's calls are its kept history's header
    (expected create_a, gated create_b), its events are not read again. p2's process never
    wrote to its space, so the tracker made no database for it: its ledger is empty (the
    receiver applied nothing, which is evidence of a loss), not missing.
    """
    folder = tmp_path / "kept"
    header = History(expected=("create_a",), gated=("create_b",))
    for process in ("p1", "p2"):
        (folder / "processes" / process).mkdir(parents=True)
        write(header, folder / "processes" / process / "history.jsonl")
    check1 = saved(folder / "processes" / "p1" / "work" / "checkpoint.json", "r1")
    check2 = saved(folder / "processes" / "p2" / "work" / "checkpoint.json", "r2")
    (folder / "tracker").mkdir()
    database = folder / "tracker" / "p1.sqlite3"
    store = Store(database, honours_keys=False)
    store.create_issue("A", "", "r1", "create_a", None)
    store.close()
    found = units([folder])
    assert summary(found) == [
        (str(folder / "processes" / "p1"), [(check1, "reference"), (database, "ledger")]),
        (str(folder / "processes" / "p2"), [(check2, "reference"), (folder / "tracker" / "p2.sqlite3", "ledger")]),
    ]
    assert [(unit.expected, unit.gated) for unit in found] == [(("create_a",), ("create_b",))] * 2
    (empty,) = found[1].sources[1].histories
    assert empty.events == ()
    assert "effects" in empty.facts


def test_a_folder_without_kept_histories_gives_a_unit_per_folder_of_records(tmp_path: Path) -> None:
    """run1 holds a checkpoint, a ledger and a log; run2 a checkpoint; logs only text: two units.

    Files no kind recognises (output.txt, notes.md) are not records and are skipped; a folder
    holding only such files gives no unit. Within a folder the sources are in file-name order.
    """
    folder = tmp_path / "records"
    check1 = saved(folder / "run1" / "checkpoint.json", "r1")
    effects = ledger(folder / "run1" / "effects.csv")
    (folder / "run1" / "output.txt").write_text("started\ncrashed\n", encoding="utf-8")
    check2 = saved(folder / "run2" / "checkpoint.json", "r2")
    (folder / "logs").mkdir()
    (folder / "logs" / "notes.md").write_text("# notes\n", encoding="utf-8")
    assert summary(units([folder])) == [
        (str(folder / "run1"), [(check1, "reference"), (effects, "ledger")]),
        (str(folder / "run2"), [(check2, "reference")]),
    ]


def test_a_saves_temp_file_beside_the_checkpoint_is_not_a_record(tmp_path: Path) -> None:
    """A crash between a save's write and its rename leaves checkpoint.json.tmp (the final save: done).

    The loop never loads the temp file (realsweep/reference/parts.py, probe/checkpoint.py): the
    run's record is checkpoint.json, not done. Read as a second checkpoint of the same run, the
    temp file would add a `finished` the run never made durable.
    """
    folder = tmp_path / "crashed"
    check = saved(folder / "checkpoint.json", "r1")
    memory = json.loads(check.read_text(encoding="utf-8")) | {"done": False}
    checkpoint.save(check, memory)  # the committed checkpoint: turn 1 done, the run not yet
    checkpoint.write_tmp(check, memory | {"done": True})  # the final save, written, never renamed
    assert summary(units([folder])) == [(str(folder), [(check, "reference")])]


def test_a_folder_with_no_record_at_all_is_unusable(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    (folder / "deeper").mkdir(parents=True)
    (folder / "deeper" / "output.txt").write_text("hello\n", encoding="utf-8")
    with pytest.raises(Unusable) as refused:
        units([folder])
    assert str(refused.value) == f"{folder}: no record audit reads in this folder (nor a history.jsonl of a kept sweep)"


def test_a_bad_record_in_a_folder_stops_the_reading_with_its_line(tmp_path: Path) -> None:
    """A kept history whose second line is not JSON: refused naming FILE:2, no unit given."""
    folder = tmp_path / "kept"
    kept(folder / "p1" / "history.jsonl", "r1")
    bad = folder / "p2" / "history.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"crashsweep_history": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(Unusable) as refused:
        units([folder])
    assert str(refused.value).startswith(f"{bad}:2: not JSON")


def test_an_sqlite_database_of_another_schema_named_explicitly_names_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE users (id INTEGER)")
        db.execute("CREATE TABLE orders (id INTEGER)")
        db.commit()
    with pytest.raises(Unusable) as refused:
        units([path])
    # Its tables, sorted by name.
    assert str(refused.value) == f"{path}: an SQLite database of no kind audit reads (its tables: orders, users)"


def test_an_empty_file_named_explicitly_says_empty(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"")
    with pytest.raises(Unusable) as refused:
        units([path])
    assert str(refused.value) == f"{path}: empty: no record to audit"


def test_other_text_named_explicitly_lists_the_kinds(tmp_path: Path) -> None:
    path = tmp_path / "output.txt"
    path.write_text("the agent started\n", encoding="utf-8")
    with pytest.raises(Unusable) as refused:
        units([path])
    assert str(refused.value) == f"{path}: not a record audit reads (the kinds: {KINDS})"
