"""The commands of the docs' blocks: where each runs, its words, and running it as tests/docs/test_blocks.py does.

A crashsweep command shown as the checkout's launcher (`bin/crashsweep ...`, or
`cd DIR && ../../bin/crashsweep ...`) runs in this process, through crashsweep's main, as the
launcher's script does once it has set up .venv: from the folder it names, with
$CRASHSWEEP_PROG set as the launcher sets it ("$0", as typed), so that the commands it prints
are the ones the page shows. That saves a Python start and crashsweep's imports per command
and changes nothing that is compared (stdout and the exit status); what the launcher itself
does is tests/cli/test_prog.py's and test_blocks.py's launcher check. `frontier` (a pool of
forked workers) and every other line (python, rm, cc, a line with a shell operator) run
through bash from the top of the checkout.

A crashsweep command that writes nothing and reads the checkout's files only runs once for
every block that shows it (README.md repeats a few of the guides' commands): what it printed
is compared with each block.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import ROOT

LAUNCHER = ROOT / "bin" / "crashsweep"
OWN_PROCESS = ("frontier",)
"""crashsweep commands that run as their own process even so: frontier forks a pool of workers."""
SHELL_SYNTAX = re.compile(r"&&|\|\||[|;<>`$]")
"""A shell operator, a redirection or an expansion: bash must run such a line."""
LEAVES_SOMETHING = ("--out", "--keep", "--scenarios")
"""Options whose command writes files: run each time it is shown, since a block may read what it wrote."""


def where_and_words(line: str) -> tuple[Path, list[str]]:
    """The folder a command runs in (after a leading `cd DIR &&`) and its words, without VAR=value prefixes."""
    words = shlex.split(line, comments=True)
    where = ROOT
    if words[:1] == ["cd"] and words[2:3] == ["&&"]:
        where, words = ROOT / words[1], words[3:]
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words = words[1:]
    return where, words


def runs_crashsweep(line: str) -> bool:
    """Whether `line` starts crashsweep (by whatever path)."""
    _, words = where_and_words(line)
    return bool(words) and words[0].endswith("crashsweep")


def _after_cd(line: str) -> str:
    """`line` without a leading `cd DIR &&`."""
    words = shlex.split(line, comments=True)
    return line.split("&&", 1)[1] if words[:1] == ["cd"] and words[2:3] == ["&&"] else line


def in_process(line: str) -> bool:
    """Whether `line` runs in this process: the checkout's launcher, no VAR=value, no shell syntax, not OWN_PROCESS."""
    where, words = where_and_words(line)
    rest = _after_cd(line)
    return (
        len(words) > 1
        and shlex.split(rest)[0] == words[0]  # no VAR=value before the launcher
        and (where / words[0]).resolve() == LAUNCHER
        and not SHELL_SYNTAX.search(rest)
        and words[1] not in OWN_PROCESS
    )


def writes(words: list[str]) -> bool:
    """Whether a command's words hold an option of LEAVES_SOMETHING (as `--out DIR` or `--out=DIR`)."""
    return any(word.split("=")[0] in LEAVES_SOMETHING for word in words)


def reusable(line: str) -> bool:
    """Whether one run of `line` stands for every block that shows it.

    A crashsweep command that writes nothing and reads the checkout's files only (no absolute
    path: a file another command of a block may write), with no shell operator but `cd DIR &&`.
    """
    _, words = where_and_words(line)
    return (
        runs_crashsweep(line)
        and not SHELL_SYNTAX.search(_after_cd(line))
        and not writes(words)
        and not any(word.startswith("/") for word in words)
    )


@dataclass(frozen=True)
class Printed:
    """What one command printed: its exit status, stdout and stderr."""

    status: int
    out: str
    err: str


REUSED: dict[str, Printed] = {}
"""What each `reusable` command printed, by its line, for the next block that shows it."""


def run_shown(line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Printed:
    """Run one command of a block (see the module's docstring): in this process, or through bash from the top."""
    if line in REUSED:
        return REUSED[line]
    if in_process(line):
        from crashsweep.cli.main import main
        from crashsweep.cli.prog import ENV

        where, words = where_and_words(line)
        monkeypatch.chdir(where)
        monkeypatch.setattr(sys, "path", list(sys.path))  # a --target's folder goes on it for the command
        monkeypatch.setenv(ENV, words[0])
        capsys.readouterr()
        status = main(words[1:])
        out, err = capsys.readouterr()
        done = Printed(status, out, err)
    else:
        ran = subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True, check=False, timeout=900)
        done = Printed(ran.returncode, ran.stdout, ran.stderr)
    if reusable(line):
        REUSED[line] = done
    return done
