"""Tests of tests/conftest.py: a required program skips the test locally and fails it under CI=true.

Each case runs pytest for real, in a fresh process, on a small test file that requires `dot`
(by the mark and by the function) and a test that skips itself, with PATH set to a folder that has no `dot` in it, or a
stand-in `dot` that the test runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TINY = """\
import subprocess

import pytest

from tests.conftest import require_tool


@pytest.mark.requires_tool("dot")
def test_marked() -> None:
    assert subprocess.run(["dot"], capture_output=True, text=True, check=True).stdout == "drawn\\n"


def test_calls() -> None:
    assert require_tool("chromium", "dot").endswith("/dot")


def test_skips() -> None:
    pytest.skip("a reason of its own")
"""


def run_tiny(tmp_path: Path, path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    """Run pytest on the tiny test file with this PATH and CI variable."""
    test_file = tmp_path / "test_tiny.py"
    test_file.write_text(TINY, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the project's settings
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
    env.update(PATH=str(path), PYTHONPATH=str(ROOT), **({"CI": ci} if ci is not None else {}))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "tests.conftest", str(test_file)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture
def no_dot(tmp_path: Path) -> Path:
    """An empty folder: a PATH without `dot` (or anything else)."""
    folder = tmp_path / "empty-bin"
    folder.mkdir()
    return folder


@pytest.fixture
def fake_dot(tmp_path: Path) -> Path:
    """A folder with a stand-in `dot` program that prints one line."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "dot"
    program.write_text("#!/bin/sh\necho drawn\n", encoding="utf-8")
    program.chmod(0o755)
    return folder


def test_a_missing_program_skips_outside_ci(tmp_path: Path, no_dot: Path) -> None:
    done = run_tiny(tmp_path, no_dot, ci=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b3 skipped\b", done.stdout), done.stdout
    assert "dot is not installed (apt-get install graphviz" in done.stdout
    assert "chromium or dot is not installed (apt-get install chromium graphviz" in done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_a_missing_program_fails_under_ci(tmp_path: Path, no_dot: Path, ci: str) -> None:
    done = run_tiny(tmp_path, no_dot, ci=ci)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"\b2 failed\b.*\b1 error\b", done.stdout), done.stdout  # the mark fails in setup
    assert not re.search(r"\b\d+ skipped\b", done.stdout), done.stdout
    assert done.stdout.count("CI=true and dot is not installed") == 1
    assert done.stdout.count("CI=true and chromium or dot is not installed") == 1
    assert "CI=true and the test skipped: Skipped: a reason of its own" in done.stdout


def test_ci_false_is_not_ci(tmp_path: Path, no_dot: Path) -> None:
    done = run_tiny(tmp_path, no_dot, ci="false")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b3 skipped\b", done.stdout), done.stdout


def test_a_present_program_runs_the_test_under_ci(tmp_path: Path, fake_dot: Path) -> None:
    done = run_tiny(tmp_path, fake_dot, ci="true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"\b2 passed\b", done.stdout), done.stdout
    assert re.search(r"\b1 failed\b", done.stdout), done.stdout  # test_skips, under CI=true
