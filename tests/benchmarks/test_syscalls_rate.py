"""Tests of benchmarks/syscalls_rate.py: a `--points syscalls` sweep's CPU per process, measured as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "syscalls_rate.py"), *args], capture_output=True, text=True, check=False
    )


def test_a_sweep_is_a_row_of_its_processes_and_their_cpu() -> None:
    """record_upgrade.c under power loss: the guide's sweep, its processes and a CPU per process that adds up."""
    done = _run("--sweeps", "record_upgrade", "--workers", "2")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split()[:2] == ["sweep", "processes"]
    name, figures = row[:42].strip(), [float(x) for x in row[42:].split()]
    assert name == "record_upgrade.c, power loss (alice)"
    processes, wall, cpu, per_process = figures
    assert processes > 1
    assert wall > 0
    assert cpu > 0
    assert abs(per_process - 1000 * cpu / processes) <= 0.1 + 1000 * 0.05 / processes  # rounded to 0.1 s and 0.1 ms


def test_bad_options_are_one_line_and_exit_2() -> None:
    for args, said in (
        (("--workers", "0"), "syscalls_rate.py: --workers and --runs must be at least 1\n"),
        (("--sweeps", "nope"), "syscalls_rate.py: unknown sweep 'nope' (choose from my_loop, record_upgrade, alice)\n"),
    ):
        done = _run(*args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", said)
