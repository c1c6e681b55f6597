"""Tests of benchmarks/alice/workload.py: each engine holds what it is given; the restart's checks fail as stated."""

from __future__ import annotations

import importlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[3] / "benchmarks" / "alice"
sys.path.insert(0, str(FOLDER))  # a folder of scripts, not a package: the check beside it imports it so too
workload = importlib.import_module("workload")


class Rows:
    """A store that is only its rows: what `held` reads, for the checks' own cases."""

    def __init__(self, rows: list[tuple[bytes, bytes]]) -> None:
        self._rows = rows

    def put(self, k: bytes, v: bytes) -> None:
        self._rows.append((k, v))

    def rows(self) -> Iterator[tuple[bytes, bytes]]:
        yield from self._rows

    def close(self) -> None:
        pass


@pytest.mark.parametrize("engine", sorted(workload.ENGINES))
def test_the_set_up_puts_the_initial_rows_in_place_and_a_reopened_store_holds_them(
    engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    workload.set_up(engine)
    assert (tmp_path / workload.FILES[engine]).exists()
    store = workload.ENGINES[engine](str(tmp_path))
    assert workload.held(store) == workload.INIT
    store.put(workload.key(workload.INIT), workload.value(workload.INIT))
    store.close()
    store = workload.ENGINES[engine](str(tmp_path))
    assert workload.held(store) == workload.INIT + 1
    store.close()


def test_a_value_spans_several_sectors_so_that_an_insert_can_tear() -> None:
    assert len(workload.value(0)) == workload.VALUE > 2 * 512
    assert workload.value(0) != workload.value(1)


def test_a_row_out_of_order_or_corrupt_fails_the_restart_with_its_words(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as out_of_order:
        workload.held(Rows([(workload.key(1), workload.value(1))]))
    assert out_of_order.value.code == 3
    assert capsys.readouterr().err.startswith("out of order: row 0 of 1 is b'row-0001'")
    with pytest.raises(SystemExit) as corrupt:
        workload.held(Rows([(workload.key(0), workload.value(0)[:-1] + b"\0")]))
    assert corrupt.value.code == 3
    assert capsys.readouterr().err.startswith("corrupt: row 0's value is not the one inserted")
    assert workload.held(Rows([(workload.key(i), workload.value(i)) for i in range(3)])) == 3


def test_sqlite_runs_in_the_journal_mode_its_name_says(tmp_path: Path) -> None:
    for engine, mode in (("sqlite-rollback", "delete"), ("sqlite-wal", "wal")):
        folder = tmp_path / engine
        folder.mkdir()
        workload.ENGINES[engine](str(folder)).close()
        with sqlite3.connect(folder / "kv.db") as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == mode


def test_the_versions_name_every_engine() -> None:
    found = workload.versions()
    assert set(found) == {"SQLite", "LMDB", "LevelDB", "GDBM"}
    assert all(version[0].isdigit() for version in found.values())


def test_an_unknown_engine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    script = FOLDER / "workload.py"
    done = subprocess.run(
        [sys.executable, str(script), "nope"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "CRASHSWEEP_TRACKER_URL": "http://127.0.0.1:9"},
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "usage: workload.py ENGINE (one of sqlite-rollback, sqlite-wal, lmdb, leveldb, gdbm)\n"
