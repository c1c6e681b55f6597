"""Tests of benchmarks/audit_scale.py: its generated history, and one small run as a user runs it."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

from crashsweep.spec import anomalies
from crashsweep.spec.auditing import audit
from crashsweep.spec.history import read

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
scale: Any = importlib.import_module("audit_scale")


def test_every_tenth_run_applies_a_write_twice_after_a_crash(tmp_path: Path) -> None:
    """Runs of 16 turns of 6 events and a status (97 events); runs 0 and 10 have 4 more (101).

    20 runs hold 2 * 101 + 18 * 97 = 1,948 events, 21 runs (runs 0, 10, 20 doubled) 3 * 101 +
    18 * 97 = 2,049: 2,000 asked writes 21. The doubled runs applied call-0 twice (a definite
    duplicate-effect) and left its first attempt of unknown outcome, never settled by a keyed
    retry (a possible unknown-never-settled).
    """
    path = tmp_path / "h.jsonl"
    assert scale.write(path, 2_000) == 3 * 101 + 18 * 97
    runs = audit("h", [read(path)])
    assert len(runs) == 21
    assert [len(run.joined.history.events) for run in runs[:2]] == [101, 97]
    doubled = [(run.run, [(a.name, a.definite) for a in run.found]) for run in runs if run.found]
    found = [("duplicate-effect", True), ("unknown-never-settled", False)]
    assert doubled == [("run-0000000", found), ("run-0000010", found), ("run-0000020", found)]
    assert {a.call for run in runs for a in run.found} == {"call-0"}
    assert all(isinstance(a, anomalies.Anomaly) for run in runs for a in run.found)


def test_a_small_run_prints_each_size_and_the_ratio_target(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "audit_scale.py"), "--events", "1000,10000", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["events", "seconds", "peak", "MB", "exit"]
    written = [int(line.split()[0].replace(",", "")) for line in lines[1:3]]
    assert 1_000 <= written[0] < 1_000 + 101
    assert 10_000 <= written[1] < 10_000 + 101  # whole runs, until the count is reached
    assert [line.split()[-1] for line in lines[1:3]] == ["1", "1"]  # each history holds duplicates: exit 1
    ratio = written[1] / written[0]
    assert lines[3].startswith(f"target: {ratio:.1f}x the events in at most {1.2 * ratio:.1f}x the time: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history-1000.jsonl", "history-10000.jsonl"]


def test_bad_event_counts_are_one_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "audit_scale.py"), "--events", "many"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "--events 'many': expected whole numbers separated by commas" in done.stderr
