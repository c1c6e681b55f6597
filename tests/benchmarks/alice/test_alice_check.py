"""Tests of benchmarks/alice/alice_check.py: the rows the final database holds are the writes applied."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from crashsweep import Scenario

FOLDER = Path(__file__).resolve().parents[3] / "benchmarks" / "alice"
sys.path.insert(0, str(FOLDER))  # a folder of scripts, as `--check alice_check:check` finds it from there
workload = importlib.import_module("workload")
alice_check = importlib.import_module("alice_check")


def _check(workdir: Path) -> tuple[int, int]:
    outcome = alice_check.check(Scenario(crashes=(), workdir=workdir, tracker=None))
    return outcome.applied, outcome.missing


@pytest.mark.parametrize("engine", ["gdbm", "leveldb", "lmdb", "sqlite-wal"])
def test_each_row_the_database_holds_is_applied_and_the_rest_missing(
    engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    workload.set_up(engine)
    assert _check(tmp_path) == (workload.INIT, workload.ROWS - workload.INIT)


def test_no_database_is_no_row_and_a_corrupt_one_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check(tmp_path) == (0, workload.ROWS)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kv.gdbm").write_bytes(b"not a gdbm file" * 100)
    assert _check(tmp_path) == (0, workload.ROWS)
