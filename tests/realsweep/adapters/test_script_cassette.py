"""`sweep --cassette`, swept for real: the scripted model plays a cassette in every swept process.

The cassette is the triage job's replies, built here from the job and script.arguments (not
by spec.cassette.to_job, which reads the other way): a sweep that plays it must give the row a
sweep of the job gives, for the user's agent of docs/examples (run from that folder, as its
docstring says). The built-in agents, and cassettes derived from recorded runs, are swept offline
by tests/fromtrace/real/test_cassette_sweeps.py. The commands run in this process
(main, as the `crashsweep` script does); the processes they sweep are real.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.cli.prog import ENV as PROG_ENV
from crashsweep.realsweep.adapters import script
from crashsweep.spec import cassette
from crashsweep.spec.cassette import Ask, Cassette, CassetteCall
from crashsweep.spec.job import TRIAGE
from tests.paths import ROOT

EXAMPLES = ROOT / "docs" / "examples"
USER_AGENT = ["--target", "my_pydantic_agent:run", "--check", "my_pydantic_agent:check"]
Run = Callable[[list[str], Path], tuple[int, str]]


def triage_cassette() -> Cassette:
    """The triage job's replies as a recorded run would hold them: its turns, then the final answer."""
    turns = tuple(
        Ask(tuple(CassetteCall(c.id, script.tool_name(c), tuple(script.arguments(TRIAGE, c).items())) for c in turn))
        for turn in TRIAGE.turns
    )
    return Cassette((*turns, Ask((), "done: 2 tool turn(s)")))


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run `crashsweep ARGS` in this process from `cwd`: (status, stdout); printed commands start with crashsweep."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(PROG_ENV, raising=False)

    def ran(args: list[str], cwd: Path) -> tuple[int, str]:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        status = main(args)
        out, err = capsys.readouterr()
        assert status in (0, 1), err
        return status, out

    return ran


def _row(out: str) -> list[str]:
    """The row's figures and verdicts: the time a sweep took and its re-run commands left out."""
    return [re.sub(r" in [\d.]+ s", " in <s> s", line) for line in out.splitlines() if "re-run (" not in line]


def _reruns(out: str) -> list[list[str]]:
    return [shlex.split(line.partition("):  ")[2]) for line in out.splitlines() if "re-run (" in line]


def test_the_users_agent_playing_the_cassette_gives_the_same_row_and_re_runs_as_printed(
    run: Run, tmp_path: Path
) -> None:
    """docs/examples/my_pydantic_agent.py, keys off: the same row; its re-run line names the cassette and works.

    The row is the one tests/realsweep/adapters/test_pydantic_ai.py derives: 13 points, 18
    duplicates. A cassette without the comment's turn makes the uninterrupted run pass fewer
    points (--list-points): the swept processes do play the file the option names.
    """
    path = tmp_path / "triage.jsonl"
    cassette.write(path, triage_cassette())
    sweep = ["sweep", *USER_AGENT, "--depth", "1", "--arg", "keys=off"]
    plain = run(sweep, EXAMPLES)
    played = run([*sweep, "--cassette", str(path)], EXAMPLES)
    assert played[0] == plain[0] == 1
    assert _row(played[1]) == _row(plain[1])
    assert "with_dups 9   dups 18   missing 0" in played[1]
    again, before = _reruns(played[1])[0], _reruns(plain[1])[0]
    assert again[again.index("--cassette") + 1] == str(path)
    assert [arg for arg in again if arg not in ("--cassette", str(path))] == before
    assert run(again[1:], EXAMPLES) == run(before[1:], EXAMPLES)

    short = tmp_path / "short.jsonl"
    cassette.write(short, Cassette((triage_cassette().asks[0], Ask((), "done"))))
    listing = ["sweep", *USER_AGENT, "--list-points"]
    assert ": 13 crash points in one uninterrupted run" in run(listing, EXAMPLES)[1]
    assert ": 13 crash points" not in run([*listing, "--cassette", str(short)], EXAMPLES)[1]
