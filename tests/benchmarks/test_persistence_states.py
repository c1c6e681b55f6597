"""Tests of benchmarks/persistence_states.py: record_upgrade.c under alice, a cut's kill shared and not, in one run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import require_tool

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "persistence_states.py"), *args], capture_output=True, text=True, check=False
    )


def test_each_program_is_swept_shared_and_not_with_the_hand_counted_processes() -> None:
    """22 states without --wal, 36 with; a kill a state unshared, a kill a cut shared (4 and 7 cuts).

    Without --wal: 1 uninterrupted run + 6 crash scenarios x 2 = 13, then 22 x 2 = 57 unshared
    or 22 + 4 = 39 shared. With --wal: 1 + 11 x 2 = 23, then 36 x 2 = 95 or 36 + 7 = 66
    (docs/guide/power-loss.md derives the states of each cut).
    """
    require_tool("cc")
    done = _run("--runs", "1", "--workers", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "record_upgrade.c, alice, depth 1; 2 workers; best of 1"
    rows = [line.rsplit(maxsplit=6) for line in lines[2:6]]
    assert [(row[0].strip(), row[1], int(row[2]), int(row[3])) for row in rows] == [
        ("record_upgrade", "on", 22, 1 + 6 * 2 + 22 + 4),
        ("record_upgrade", "off", 22, 1 + 6 * 2 + 22 * 2),
        ("record_upgrade --wal", "on", 36, 1 + 11 * 2 + 36 + 7),
        ("record_upgrade --wal", "off", 36, 1 + 11 * 2 + 36 * 2),
    ]
    assert all(float(row[4]) > 0 and float(row[5]) > 0 and float(row[6]) > 0 for row in rows)
    assert lines[6].startswith("  states/s, shared over unshared: record_upgrade ")


def test_bad_options_are_one_line_and_exit_2() -> None:
    done = _run("--runs", "0")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "persistence_states.py: --workers and --runs must be at least 1\n"
