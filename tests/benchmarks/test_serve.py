"""Tests of benchmarks/serve.py: its job files, one small run in real Chromium as a user runs it, bad options.

In the slow tier with every benchmark (tests/conftest.py's SLOW: "benchmarks"): the run starts
two servers and a browser.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crashsweep.spec.job import load_job

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
serve: Any = importlib.import_module("serve")
scaling: Any = importlib.import_module("scaling")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "serve.py"), *args], capture_output=True, text=True, check=False
    )


def test_the_job_file_reads_back_as_the_generated_job(tmp_path: Path) -> None:
    """The TOML the benchmark writes is the generated job, call for call."""
    job = scaling.generated(10, 4)
    path = tmp_path / "job.toml"
    path.write_text(serve.job_toml(job), encoding="utf-8")
    assert load_job(path) == job


def test_the_quantile_is_the_nearest_rank() -> None:
    """p95 of 1..100 is 95; of one value, that value; of 1..20, the 19th."""
    assert serve.percentile([float(n) for n in range(100, 0, -1)], 0.95) == 95
    assert serve.percentile([7.0], 0.95) == 7
    assert serve.percentile([float(n) for n in range(1, 21)], 0.95) == 19


@pytest.mark.requires_tool("chromium")
@pytest.mark.requires_tool("chromedriver")
def test_a_small_run_prints_each_figure_and_its_target() -> None:
    """A few clicks and a short long path: the four figures, each with its target, exit 0."""
    done = _run("--calls", "10", "--depth", "2", "--clicks", "12", "--long-calls", "10", "--long-steps", "30")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("save-after-reply, generated 10-call job, depth 2, ")
    for figure, target in (
        (r"first page load\s+\d+\.\d\d s", "< 1 s"),
        (r"p95 click to drawn \(12 clicks\)\s+\d+ ms", "< 200 ms"),
        (r"server peak resident memory \(VmHWM\)\s+\d+ MB", "< 400 MB"),
        (r"30-step path drawn \(10 calls\)\s+\d+\.\d\d s", "< 2 s"),
    ):
        assert any(re.match(rf"{figure}\s+target {re.escape(target)}\s+(met|NOT MET)$", line) for line in lines), (
            figure,
            done.stdout,
        )


@pytest.mark.parametrize(
    "args", [("--design", "no-such-design"), ("--clicks", "0"), ("--calls", "ten"), ("--depth", "-1")]
)
def test_bad_options_exit_2_with_one_line(args: tuple[str, str]) -> None:
    """A bad value: one line on stderr naming the script, exit 2, before any browser starts."""
    done = _run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("serve.py: ")
    assert done.stderr.count("\n") == 1
