"""Tests of benchmarks/unprojected.py: one cell run as a user runs it, a cell that differs, bad options."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
unprojected: Any = importlib.import_module("unprojected")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "unprojected.py"), *args], capture_output=True, text=True, check=False
    )


def test_a_small_cell_agrees_and_says_so() -> None:
    """save-after-reply, 10 calls, depth 1: one line, `agree`, exit 0."""
    done = _run("--cells", "save-after-reply:10:1")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("save-after-reply 10 calls depth 1: agree, ")


def test_a_cell_whose_figures_differ_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merged search that loses a scenario (figures made to differ): DIFFER and both figures."""
    real = unprojected.figures
    calls = iter(range(2))
    monkeypatch.setattr(unprojected, "figures", lambda e: (real(e), next(calls, 1)))
    same, line = unprojected.cell("idempotency-keys", 10, 1)
    assert not same
    assert "DIFFER" in line
    assert "\n  merged: " in line
    assert "\n  full:   " in line


@pytest.mark.parametrize("cells", ["no-such-design:10:1", "save-after-reply:ten:1", "save-after-reply:10"])
def test_a_bad_cell_is_refused_in_one_line(cells: str) -> None:
    done = _run("--cells", cells)
    assert done.returncode == 2
    assert done.stderr.startswith("unprojected.py: --cells ")
    assert done.stderr.count("\n") == 1
