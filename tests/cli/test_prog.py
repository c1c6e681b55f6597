"""Tests of crashsweep.cli.prog: the command a user typed, for the commands crashsweep prints."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from crashsweep.cli import prog
from tests.paths import ROOT


def test_the_launcher_as_typed_comes_first() -> None:
    """$CRASHSWEEP_PROG (set by bin/crashsweep) wins; then `PYTHON -m crashsweep`; then the installed name."""
    assert prog.typed({"CRASHSWEEP_PROG": "bin/crashsweep"}, module="/py") == ("bin/crashsweep",)
    assert prog.typed({}, module="/usr/bin/python3") == ("/usr/bin/python3", "-m", "crashsweep")
    assert prog.typed({}) == ("crashsweep",)
    assert prog.typed({"CRASHSWEEP_PROG": "  "}) == ("crashsweep",)
    assert prog.typed({"CRASHSWEEP_PROG": "two\nlines"}) == ("crashsweep",)


def test_anywhere_makes_a_relative_launcher_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bin/crashsweep becomes absolute (files are read later, elsewhere); a bare name stays a PATH lookup."""
    monkeypatch.chdir(tmp_path)
    assert prog.anywhere(("bin/crashsweep",)) == (os.path.join(tmp_path, "bin", "crashsweep"),)
    assert prog.anywhere(("crashsweep",)) == ("crashsweep",)
    assert prog.anywhere(("/opt/py", "-m", "crashsweep")) == ("/opt/py", "-m", "crashsweep")


def test_current_reads_the_root_context() -> None:
    """Inside a command, the program main() put in the root context; outside any, the installed name."""
    assert prog.current() == ("crashsweep",)

    @click.group()
    def root() -> None:
        pass

    seen: list[tuple[str, ...]] = []

    @root.command()
    def sub() -> None:
        seen.append(prog.current())

    root.main(["sub"], standalone_mode=False, obj=("bin/crashsweep",))
    assert seen == [("bin/crashsweep",)]


BARE_PATH = os.pathsep.join(
    d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if not (Path(d) / "crashsweep").exists()
)
"""The user's PATH without any crashsweep on it: a fresh checkout, where only bin/crashsweep runs it."""


def _shell(line: str, cwd: Path, path: str) -> subprocess.CompletedProcess[str]:
    """Run `line` as a user would paste it into a shell."""
    env = {k: v for k, v in os.environ.items() if k != prog.ENV} | {"PATH": path}
    return subprocess.run(
        ["/bin/sh", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _hints(out: str, prefix: str) -> list[str]:
    """What follows `prefix` on each line that has it (a prefix starting with a newline: at a line's start)."""
    return [part.split("\n", 1)[0] for part in out.split(prefix)[1:]]


@pytest.mark.parametrize(
    ("launcher", "where", "path"),
    [
        ("bin/crashsweep", "root", BARE_PATH),  # a fresh checkout, from its top
        ("../bin/crashsweep", "docs", BARE_PATH),  # the same, from a folder inside it
        ("crashsweep", "tmp", f"{ROOT / '.venv' / 'bin'}{os.pathsep}{BARE_PATH}"),  # installed: on PATH
        (f"{sys.executable} -m crashsweep", "root", BARE_PATH),
    ],
)
def test_every_printed_command_works_as_printed(launcher: str, where: str, path: str, tmp_path: Path) -> None:
    """explore's replay and pytest hints, and fuzz's replay line, pasted into a shell where they were printed."""
    assert shutil.which("crashsweep", path=BARE_PATH) is None
    cwd = {"root": ROOT, "docs": ROOT / "docs", "tmp": tmp_path}[where]
    done = _shell(f"{launcher} explore --variant save-after-reply --depth 1", cwd, path)
    assert done.returncode == 1, done.stderr
    fuzzed = _shell(f"{launcher} fuzz --variant save-after-reply --seed 0 --examples 20", cwd, path)
    assert fuzzed.returncode == 1, fuzzed.stderr
    (replay,) = _hints(done.stdout, " replay: ")
    (pytest_hint,) = _hints(done.stdout, " pytest: ")
    (fuzz_replay,) = [
        line.removeprefix("replay: ") for line in fuzzed.stdout.splitlines() if line.startswith("replay: ")
    ]
    for command in (replay, fuzz_replay):
        assert command.startswith(launcher if " -m " not in launcher else sys.executable)
        replayed = _shell(command, cwd, path)
        assert replayed.returncode == 1, replayed.stderr
        assert "VIOLATED no-duplicate after step" in replayed.stdout
    snippet = _shell(pytest_hint, cwd, path)
    assert snippet.returncode == 0, snippet.stderr  # the test was written: replay --pytest succeeded
    assert snippet.stdout.startswith('"""Replays crashsweep')


def test_a_page_written_from_the_checkout_works_from_elsewhere(tmp_path: Path) -> None:
    """The replay command in an --out directory's trace, run from another directory, replays the violation."""
    done = _shell(
        f"bin/crashsweep explore --variant save-after-reply --depth 1 --out {tmp_path / 'o'}", ROOT, BARE_PATH
    )
    assert done.returncode == 1, done.stderr
    trace = (tmp_path / "o" / "no-duplicate.trace.txt").read_text(encoding="utf-8")
    (command,) = [line.removeprefix("replay: ") for line in trace.splitlines() if line.startswith("replay: ")]
    replayed = _shell(command, tmp_path, BARE_PATH)
    assert replayed.returncode == 1, replayed.stderr
    assert "VIOLATED no-duplicate after step 10" in replayed.stdout
