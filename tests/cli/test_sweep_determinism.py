"""`sweep --determinism` (crashsweep/cli/sweep_determinism.py): the verdict's text and JSON, the refusals."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from crashsweep.cli import sweep_determinism
from crashsweep.realsweep.api import Crash, Divergence, Run

SAME = Run(("start", "sent"), ('{"run": "r1"}',))
OTHER = Run(("start", "sent"), ('{"run": "r2"}',))


def test_holds_is_one_line_with_the_start_worlds_checked() -> None:
    text = sweep_determinism.render("loop:run", 6, None, ["crashsweep", "sweep"], "text")
    assert text == (
        "loop:run: deterministic holds (6 start worlds, each run twice: the same crash points and the same effects)\n"
    )


def test_a_divergence_shows_its_start_world_both_runs_and_the_command_again() -> None:
    """From the empty world, and from the world a crash left: both runs' points and effects, numbered."""
    empty = sweep_determinism.render("loop:run", 6, Divergence((), SAME, OTHER), ["crashsweep", "sweep"], "text")
    lines = empty.splitlines()
    assert lines[0] == "loop:run: deterministic VIOLATED from the empty world (two uninterrupted runs)"
    assert lines[1:7] == [
        "  first run, crash points of its last process (2):",
        "    1. start",
        "    2. sent",
        "  first run, effects at the tracker (1):",
        '    1. {"run": "r1"}',
        "  second run, crash points of its last process (2):",
    ]
    assert lines[-2] == '    1. {"run": "r2"}'
    assert shlex.split(lines[-1].removeprefix("  re-run: ")) == ["crashsweep", "sweep", "--determinism"]
    crashed = Divergence((Crash(0, "sent", 2),), SAME, OTHER)
    first = sweep_determinism.render("loop:run", 6, crashed, [], "text").splitlines()[0]
    assert first == "loop:run: deterministic VIOLATED from the world a crash at 'sent' (pass 2) leaves"


def test_json_gives_the_verdict_and_the_divergence() -> None:
    held = json.loads(sweep_determinism.render("loop:run", 6, None, [], "json"))
    assert held == {"target": "loop:run", "deterministic": True, "start_worlds": 6}
    data = json.loads(
        sweep_determinism.render("loop:run", 6, Divergence((Crash(0, "sent", 1),), SAME, OTHER), [], "json")
    )
    assert data["deterministic"] is False
    assert data["divergence"]["start"] == [{"point": "sent", "occurrence": 1}]
    assert data["divergence"]["second"] == {"points": ["start", "sent"], "effects": ['{"run": "r2"}']}


def test_a_replaying_frameworks_depth_1_sweep_checks_first_unless_told_not_to() -> None:
    """DBOS, pydantic-ai (on DBOS) and Temporal replay their history; other sweeps are not checked."""
    assert sweep_determinism.first("dbos", 1, False)
    assert sweep_determinism.first("temporal", 1, False, (), False, False)
    assert not sweep_determinism.first("dbos", 2, False)  # depth 1 only: a deeper sweep is left alone
    assert not sweep_determinism.first("dbos", 1, True)  # --no-determinism
    assert not sweep_determinism.first("langgraph", 1, False)  # LangGraph resumes from checkpoints
    assert not sweep_determinism.first(None, 1, False)  # the reference loop, your own program
    assert not sweep_determinism.first("dbos", 1, False, ("x",))  # --crash re-runs one scenario
    assert not sweep_determinism.first("dbos", 1, False, (), True)  # --list-points


def test_a_divergence_before_a_replaying_sweep_is_printed_instead_of_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check's divergence (stood in for here: the built-in agents do not diverge) ends the command, exit 1."""
    from crashsweep.cli.main import main
    from crashsweep.realsweep import api

    def diverged(*args: object, **kwargs: object) -> api.Checked:
        return api.Checked(21, Divergence((), SAME, OTHER), {})

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sweep ran after a divergence")

    monkeypatch.setattr(api, "determinism_runs", diverged)
    monkeypatch.setattr(api, "sweep", never)
    assert main(["sweep", "--framework", "dbos", "--depth", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("dbos, keys on, call IDs stable: deterministic VIOLATED from the empty world")
    assert out.rstrip().endswith("--determinism")


def test_the_check_before_a_kept_sweep_works_outside_the_kept_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--keep DIR: the check's runs are no scenarios; they must leave DIR empty for the sweep that keeps them."""
    from crashsweep.cli.main import main
    from crashsweep.realsweep import api

    given: list[api.SweepOptions] = []

    def held(target: object, check: object, options: api.SweepOptions, nemesis: object) -> api.Checked:
        given.append(options)
        return api.Checked(21, None, {})

    def swept(*args: object, **kwargs: object) -> None:
        raise SystemExit(0)  # the sweep was reached: what it does with --keep is test_sweep.py's

    monkeypatch.setattr(api, "determinism_runs", held)
    monkeypatch.setattr(api, "sweep", swept)
    with pytest.raises(SystemExit):
        main(["sweep", "--framework", "dbos", "--depth", "1", "--keep", str(tmp_path / "kept")])
    assert [(options.keep, options.root) for options in given] == [(False, None)]


@pytest.mark.parametrize(("keep", "taken"), [(False, True), (True, False)])
def test_a_sweep_of_every_scenario_takes_the_checks_second_round(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keep: bool, taken: bool
) -> None:
    """Temporal sweeps every scenario: its sweep gets the check's second round (SweepOptions.ran), unless kept.

    A kept sweep keeps each scenario's folder, which the check's runs, made in scratch folders,
    do not have: it runs them all again.
    """
    from crashsweep.cli.main import main
    from crashsweep.realsweep import api

    second_round: dict[object, object] = {(): "the second round's uninterrupted run"}  # the sweep is stood in for too
    swept: list[api.SweepOptions] = []

    def held(*args: object, **kwargs: object) -> api.Checked:
        return api.Checked(18, None, second_round)  # type: ignore[arg-type]

    def sweep(target: object, check: object, options: api.SweepOptions, *args: object) -> None:
        swept.append(options)
        raise SystemExit(0)

    monkeypatch.setattr(api, "determinism_runs", held)
    monkeypatch.setattr(api, "sweep", sweep)
    kept = ["--keep", str(tmp_path / "kept")] if keep else []
    with pytest.raises(SystemExit):
        main(["sweep", "--framework", "temporal", "--depth", "1", *kept])
    assert [(options.dedup, dict(options.ran)) for options in swept] == [(False, second_round if taken else {})]
