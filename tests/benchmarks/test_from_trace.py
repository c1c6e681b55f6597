"""Tests of benchmarks/from_trace.py: its generated trace, and one small run as a user runs it."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

from crashsweep.fromtrace import derive
from crashsweep.fromtrace.recording import read

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
bench: Any = importlib.import_module("from_trace")


def test_the_trace_is_one_run_of_turns_of_two_writes(tmp_path: Path) -> None:
    """3 turns: the agent span, a start save, 7 spans a turn, the final reply and its save: 1 + 1 + 21 + 2 = 25.

    Each save passes 2 points: start, 3 * (reply, 2 results, turn), final = 14 saves, 28 points.
    """
    path = tmp_path / "t.jsonl"
    assert bench.write(path, 3) == 25
    recording = read(path)
    job = derive.job(recording)
    assert [[c.id for c in turn] for turn in job.turns] == [["c1a", "c1b"], ["c2a", "c2b"], ["c3a", "c3b"]]
    assert job.writes == ("c1a", "c1b", "c2a", "c2b", "c3a", "c3b")
    assert len(derive.points(recording)) == 28


def test_a_small_run_prints_each_size_and_the_ratio(tmp_path: Path) -> None:
    """30 spans asked: ceil(26 / 7) = 4 turns, 4 + 4 * 7 = 32 spans; 60: ceil(56 / 7) = 8 turns, 60 spans."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / "from_trace.py"), "--spans", "30,60"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[1] for line in lines[:2]] == ["spans", "spans"]
    assert lines[2].startswith("32 -> 60 spans: time x")
    assert len(lines) == 3  # no size reaches the target's 500 spans: no verdict on it


def test_bad_sizes_are_refused_in_one_line() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "from_trace.py"), "--spans", "x"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "expected comma-separated whole numbers" in done.stderr
