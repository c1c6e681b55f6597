"""Tests of benchmarks/points_rate.py: marked, auto and both, swept for real and compared in one run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "points_rate.py"), *args], capture_output=True, text=True, check=False
    )


def test_each_mode_is_a_row_and_both_modes_pass_the_points_of_each() -> None:
    """marked,auto passes exactly the marks and the effects: its points are the sum of the two rows'."""
    done = _run("--design", "save-after-reply", "--runs", "1", "--workers", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in lines[2:5]}
    assert set(rows) == {"marked", "auto", "marked,auto"}
    assert rows["marked"][0] == 34  # save-after-reply's crash points on triage (spec/SEMANTICS.md section 8)
    assert rows["marked,auto"][0] == rows["marked"][0] + rows["auto"][0]
    assert all(row[1] > 0 and row[2] > 0 for row in rows.values())
    assert lines[5].startswith("  auto / marked, processes per second: ")


def test_bad_options_are_one_line_and_exit_2() -> None:
    done = _run("--runs", "0")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "points_rate.py: --depth, --workers and --runs must be at least 1\n"
