"""Tests of benchmarks/cli_start.py: one run of each command and floor, as a user runs it, and a bad --repeat."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_one_run_prints_every_command_then_the_floors() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "cli_start.py"), "--repeat", "1"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "least CPU seconds of 1 run(s) each, every run a process of its own"
    labels = [line.split(" s  ", 1)[1] for line in lines[1:]]
    assert labels == [
        "crashsweep --version",
        "crashsweep explore --variant save-after-reply --depth 1",
        "crashsweep compare --depth 1",
        "crashsweep sweep --help",
        "crashsweep --help",
        "the interpreter alone",
        "the model side's imports alone",
    ]
    assert all(float(line.split()[0]) > 0 for line in lines[1:])


def test_a_repeat_out_of_bounds_is_one_line_and_exit_2() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "cli_start.py"), "--repeat", "0"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith("error: --repeat must be 1 to 1000")
