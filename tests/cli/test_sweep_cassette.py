"""crashsweep.cli.sweep_cassette: `sweep --cassette FILE`, refused in one line or passed to every process.

No sweep runs here (tests/realsweep/adapters/test_pydantic_ai.py sweeps with a cassette for
real): a refusal comes before any process, and a good cassette reaches the source as its
absolute path in $CRASHSWEEP_CASSETTE and as `--cassette FILE` in the command that names it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crashsweep.cli import sweep_cassette, sweep_modes
from crashsweep.cli.main import main
from crashsweep.cli.sweep import sweep
from crashsweep.cli.sweep_plan import SweepRequest, plan
from crashsweep.realsweep import api
from crashsweep.spec import cassette
from crashsweep.spec.cassette import Ask, Cassette, CassetteCall

PLAYED = Cassette((Ask((CassetteCall("create_a", "create_issue", (("title", "issue create_a"),)),)), Ask((), "done")))


def _nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make starting any real run an error of the test: a refusal comes before any process."""

    def no_run(*_: object, **__: object) -> None:
        raise AssertionError("a real run started")

    for name in ("sweep", "replay", "reference_run", "list_points", "determinism_runs"):
        monkeypatch.setattr(api, name, no_run)


def _planned(*args: str) -> SweepRequest:
    return plan(**sweep.make_context("sweep", list(args)).params)


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        (None, "{path}: cannot read cassette: No such file or directory"),
        (['{"crashsweep_cassette": 1}', "{"], "{path}:2: not JSON (Expecting property name enclosed in double quotes"),
        (['{"crashsweep_cassette": 1}', '{"ask": 2, "calls": []}'], "{path}:2: ask 2: expected ask 1"),
    ],
    ids=["missing", "not JSON", "ask numbers"],
)
def test_a_bad_cassette_is_one_line_and_exit_2_before_any_process(
    lines: list[str] | None,
    why: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _nothing_runs(monkeypatch)
    path = tmp_path / "c.jsonl"
    if lines is not None:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["sweep", "--framework", "pydantic-ai", "--cassette", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"crashsweep: error: Invalid value for '--cassette': {why.format(path=path)}")
    assert err.count("\n") == 1


def test_the_reference_loop_takes_no_cassette(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused by the rule, before the file is even read: the reference loop plays its --job."""
    _nothing_runs(monkeypatch)
    for source in (["--variant", "agent-loop"], ["--design", "docs/my-design.toml"]):
        assert main(["sweep", *source, "--cassette", "no-such-file.jsonl"]) == 2
        assert capsys.readouterr() == ("", f"crashsweep: error: {sweep_cassette.WITH_REFERENCE_LOOP}\n")


def test_the_request_holds_the_cassettes_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given as typed, relative to here; the swept processes, each in its own folder, get it absolute."""
    cassette.write(tmp_path / "c.jsonl", PLAYED)
    monkeypatch.chdir(tmp_path)
    request = _planned("--framework", "pydantic-ai", "--cassette", "c.jsonl")
    assert (request.cassette, request.given.cassette) == (tmp_path / "c.jsonl", Path("c.jsonl"))
    assert _planned("--framework", "pydantic-ai").cassette is None


@pytest.mark.parametrize(
    "source",
    [
        ["--framework", "pydantic-ai"],
        ["--target", "cs_cassette:run", "--check", "cs_cassette:check", "--upgrade-to", "cs_cassette:again"],
    ],
    ids=["framework", "target with an upgrade"],
)
def test_every_process_gets_the_cassette_and_the_command_names_it_again(
    source: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$CRASHSWEEP_CASSETTE in the target's environment and its upgrade's; `--cassette FILE` as typed in its command."""
    cassette.write(tmp_path / "c.jsonl", PLAYED)
    (tmp_path / "cs_cassette.py").write_text("def run(): pass\ndef again(): pass\ndef check(scenario): pass\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    made = sweep_modes.make_source(_planned(*source, "--cassette", "c.jsonl"))
    assert made.target.env[cassette.VARIABLE] == str(tmp_path / "c.jsonl")
    if made.target.upgrade is not None:
        assert made.target.upgrade.env[cassette.VARIABLE] == str(tmp_path / "c.jsonl")
    at = made.command.index("--cassette")
    assert made.command[at + 1] == "c.jsonl"
    assert made.command[at + 2 :] == ["--spawn", "fork"]  # the options every mode keeps follow
    plain = sweep_modes.make_source(_planned(*source))
    assert cassette.VARIABLE not in plain.target.env
    assert "--cassette" not in plain.command


def test_the_option_says_what_it_does() -> None:
    option = next(p for p in sweep.params if p.name == "cassette")
    assert option.help == sweep_cassette.HELP
    assert "--target or --framework" in sweep_cassette.HELP
