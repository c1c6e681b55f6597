"""`sweep --cassette`, swept for real: the scripted model plays a cassette in every swept process.

The cassette is the triage job's replies, built here from the job and script.arguments (not
by spec.cassette.to_job, which reads the other way), less a turn: the user's agent of
docs/examples (run from that folder, as its docstring says) then passes fewer points, so its
processes play the file the option names. The rows cassettes give, and their re-run lines, are
tests/fromtrace/real/test_cassette_sweeps.py's (cassettes derived from recorded runs, swept
offline). The commands run in this process (main, as the `crashsweep` script does); the
processes they sweep are real.
"""

from __future__ import annotations

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


def test_a_shorter_cassette_makes_the_users_agent_pass_fewer_points(run: Run, tmp_path: Path) -> None:
    """docs/examples/my_pydantic_agent.py: 13 points from the job; a cassette without the comment's turn, fewer.

    The swept processes do play the file the option names. (The rows a cassette gives, offline,
    and its re-run lines: tests/fromtrace/real/test_cassette_sweeps.py.)
    """
    short = tmp_path / "short.jsonl"
    cassette.write(short, Cassette((triage_cassette().asks[0], Ask((), "done"))))
    listing = ["sweep", *USER_AGENT, "--list-points"]
    assert ": 13 crash points in one uninterrupted run" in run(listing, EXAMPLES)[1]
    assert ": 13 crash points" not in run([*listing, "--cassette", str(short)], EXAMPLES)[1]
