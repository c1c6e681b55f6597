"""Tests of benchmarks/alice_table.py: its rows' words and figures, and its refusals.

Its sweeps run where the docs show one (docs/alice.md's block, run by tests/docs/test_blocks.py,
its figures derived by hand beside it): one engine swept under one model is the cost of a test.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
_spec = importlib.util.spec_from_file_location("alice_table", BENCHMARKS / "alice_table.py")
assert _spec is not None
assert _spec.loader is not None
alice_table = sys.modules["alice_table"] = importlib.util.module_from_spec(_spec)  # its dataclass looks itself up
_spec.loader.exec_module(alice_table)  # a script, loaded from its file: no folder of scripts on sys.path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "alice_table.py"), *args], capture_output=True, text=True, check=False
    )


def test_a_call_is_the_point_without_its_pass_or_its_state() -> None:
    assert alice_table.call("power-loss at fsync kv.gdbm#3 / state 2") == "fsync kv.gdbm"
    assert alice_table.call("power-loss at unlink kv.db-journal") == "unlink kv.db-journal"
    assert alice_table.call("crash at write kv.leveldb/000006.log#2") == "write kv.leveldb/000006.log"
    assert alice_table.call("power-loss at exit") == "exit"


def test_a_consequence_is_the_restart_s_first_words() -> None:
    assert alice_table.consequence("lost: row 2 was inserted (set up, or said at the tracker)") == "lost"
    assert alice_table.consequence("cannot open: Error: Corruption: checksum mismatch") == "cannot open"
    assert alice_table.consequence("the restart exited with status 4: lost: row 2 was inserted") == "lost"
    assert alice_table.consequence("the restart exited with status 3: failed write: row 3: OSError") == "failed write"
    assert alice_table.consequence("") == "failed"


def test_a_row_counts_vulnerabilities_by_consequence_beside_alice_s_figure() -> None:
    found = (("exit", "lost"), ("fsync .", "lost"), ("write x", "corrupt"))
    row = alice_table.Row("sqlite-rollback", "strict", 20, 60, 13, 2, found, 1.0)
    lines = alice_table.table([row]).splitlines()
    assert lines[0].startswith("| engine | model | crash states | failing: crashes + cuts | vulnerabilities |")
    assert lines[2] == "| sqlite-rollback | strict | 20 | 2 + 11 | 3 | corrupt 1, lost 2 | Sqlite-Roll: 1 |"


def test_an_unknown_engine_or_model_or_no_worker_is_one_line_and_exit_2() -> None:
    for args, message in (
        (("--engines", "bdb"), "alice_table: unknown engine 'bdb' (choose from sqlite-rollback, sqlite-wal, lmdb, "),
        (("--models", "ext4"), "alice_table: unknown persistence model 'ext4' (choose from strict, ordered, "),
        (("--workers", "0"), "alice_table: --workers must be at least 1, got 0"),
    ):
        done = _run(*args)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.startswith(message)
        assert done.stderr.count("\n") == 1
