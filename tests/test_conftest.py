"""Tests of tests/conftest.py: the tiers by place; a required program skips the test locally, fails it under CI=true.

Each case runs pytest for real, in a fresh process, on a small test file that requires `dot`
(by the mark and by the function) and a test that skips itself, with PATH set to a folder that has no `dot` in it, or a
stand-in `dot` that the test runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import conftest

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
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the tiny suite needs tests.conftest alone (-p): 1 s less a run
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


# The tiers (tests/conftest.py's SLOW and its collection hook).

MODEL_SIDE_AND_UNITS = ("spec", "explorer", "variants", "reports", "realsweep/probe", "realsweep/tracker")
"""Places whose tests must all run in the fast tier: the model side and the real side's unit tests."""


@pytest.mark.parametrize("place", conftest.SLOW)
def test_every_place_of_the_slow_tier_exists(place: str) -> None:
    """Each entry names a folder of tests or a test module under tests/ (a moved or renamed one fails here)."""
    path = conftest.TESTS / place
    assert path.is_dir() or (path.is_file() and path.suffix == ".py"), f"tests/{place} does not exist"
    assert path.is_file() or any(path.rglob("test_*.py")), f"tests/{place} holds no test module"


def test_the_slow_tier_leaves_the_model_side_and_the_unit_tests_in_the_fast_tier() -> None:
    """No place of SLOW is, or is inside, or holds, a place the fast tier must run whole."""
    for place in conftest.SLOW:
        for kept in MODEL_SIDE_AND_UNITS:
            assert place != kept
            assert not place.startswith(f"{kept}/"), (place, kept)
            assert not kept.startswith(f"{place}/"), (place, kept)
    for kept in MODEL_SIDE_AND_UNITS:
        module = next((conftest.TESTS / kept).glob("test_*.py"))
        assert not conftest.in_slow_tier(module), module


@dataclass
class _Item:
    """What the hook reads of a collected test (its file) and does to it (marks)."""

    path: Path
    marks: list[str] = field(default_factory=list)

    def add_marker(self, mark: pytest.MarkDecorator) -> None:
        self.marks.append(mark.name)


def test_the_hook_marks_slow_the_tests_of_each_place_and_no_other() -> None:
    """A test in a SLOW folder (or module) is marked slow; one beside it, or outside tests/, is not."""
    tests = conftest.TESTS
    items = [
        _Item(tests / "realsweep" / "engines" / "test_ray.py"),
        _Item(tests / "cli" / "test_sweep.py"),
        _Item(tests / "cli" / "test_sweep_engines.py"),  # a module whose name starts like one of SLOW: not in it
        _Item(tests / "realsweep" / "test_sweep.py"),
        _Item(tests / "spec" / "test_job.py"),
        _Item(tests.parent / "realsweep" / "process" / "test_x.py"),  # not under tests/
    ]
    conftest.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.marks for item in items] == [["slow"], ["slow"], [], [], [], []]


DECORATED_SLOW = re.compile(r"^\s*(@pytest\.mark\.slow\b|pytestmark\s*=.*\bmark\.slow\b)", re.MULTILINE)
"""A test or module that marks itself slow (not a mark chosen per parameter by what it runs, as tests/docs chooses)."""


def test_no_test_outside_the_slow_tier_marks_itself_slow() -> None:
    """The tier is chosen by place: a `slow` decorator outside SLOW would leave a test out of the fast tier unseen."""
    marked = [
        str(path.relative_to(conftest.TESTS))
        for path in sorted(conftest.TESTS.rglob("test_*.py"))
        if not conftest.in_slow_tier(path) and DECORATED_SLOW.search(path.read_text(encoding="utf-8"))
    ]
    assert marked == []


@dataclass
class _Config:
    """The one thing pytest_ignore_collect reads of a pytest config: the -m expression."""

    markexpr: str

    def getoption(self, name: str, default: object = None) -> object:
        return self.markexpr if name == "markexpr" else default


@pytest.mark.parametrize(
    ("markexpr", "ignored"), [("not slow", True), (" not slow ", True), ("", None), ("slow", None)]
)
def test_the_fast_tier_leaves_the_slow_places_unimported(markexpr: str, ignored: bool | None) -> None:
    """Under -m "not slow" a slow place is not collected at all; otherwise, and for any other place, pytest decides."""
    config: Any = _Config(markexpr)
    tests = Path(conftest.__file__).parent
    assert conftest.pytest_ignore_collect(tests / "realsweep" / "adapters", config) is ignored
    assert conftest.pytest_ignore_collect(tests / "cli" / "test_sweep.py", config) is ignored
    assert conftest.pytest_ignore_collect(tests / "spec" / "test_job.py", config) is None
    assert conftest.pytest_ignore_collect(tests / "realsweep" / "tracker", config) is None
