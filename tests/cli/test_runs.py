"""Tests of crashsweep.cli.runs: choices from the command line become one design's exploration and row."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.cli import runs
from crashsweep.explorer.search import ExplorationInterrupted
from crashsweep.spec.job import TRIAGE, JobError
from crashsweep.spec.tracker import KEYED


def test_default_job_is_triage() -> None:
    """No --job: the built-in triage job, named as built in."""
    assert runs.read_job(None) == (TRIAGE, "triage (built in)")


def test_bad_job_file_is_a_job_error(tmp_path: Path) -> None:
    """A job file that cannot be read is a JobError for the CLI to print."""
    with pytest.raises(JobError):
        runs.read_job(tmp_path / "absent.toml")


def test_run_gives_the_row() -> None:
    """run() explores and summarizes: keys-and-markers at depth 1 has 43 one-crash scenarios."""
    _, row = runs.run("keys-and-markers", runs.Choices(TRIAGE, "triage", KEYED, 1, 10_000))
    assert row.scenarios == {1: 43}
    assert row.holds


def test_ctrl_c_becomes_interrupted_with_the_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C inside the search is re-raised as Interrupted (not a KeyboardInterrupt) naming the design."""

    def interrupted(*args: object, **kwargs: object) -> None:
        raise ExplorationInterrupted(3, 2, 1)

    monkeypatch.setattr(runs, "explore", interrupted)
    with pytest.raises(runs.Interrupted, match="keys-and-markers: interrupted after 3 states and 2 edges"):
        runs.run("keys-and-markers", runs.Choices(TRIAGE, "triage", KEYED, 1, 10_000))
    assert not issubclass(runs.Interrupted, KeyboardInterrupt)


def test_an_interrupted_search_says_nothing_was_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The message is complete as it is: the CLI prints it as is."""

    def interrupted(*args: object, **kwargs: object) -> None:
        raise ExplorationInterrupted(3, 2, 1)

    monkeypatch.setattr(runs, "explore", interrupted)
    with pytest.raises(runs.Interrupted, match=r"; nothing was written$"):
        runs.run("keys-and-markers", runs.Choices(TRIAGE, "triage", KEYED, 1, 10_000))


def test_status_lines_where_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """Silent unless asked; asked, the first report at once, then one per PROGRESS_EVERY seconds."""
    clock = [100.0]
    runs.StatusLine("quiet", clock=lambda: clock[0]).show("1 state")
    line = runs.StatusLine("design", lines=True, clock=lambda: clock[0])
    for seconds, text in ((0.0, "first"), (1.0, "too soon"), (runs.PROGRESS_EVERY, "due"), (0.5, "too soon")):
        clock[0] += seconds
        line.show(text)
    line.done()
    assert capsys.readouterr().err == "crashsweep: design: first\ncrashsweep: design: due\n"


def test_a_long_exploration_shows_its_progress_unasked(capsys: pytest.CaptureFixture[str]) -> None:
    """Not asked: nothing for PROGRESS_AFTER seconds, then lines every PROGRESS_EVERY (issue 41, item 12)."""
    clock = [0.0]
    line = runs.StatusLine("design", after=runs.PROGRESS_AFTER, clock=lambda: clock[0])
    for seconds, text in (
        (1.0, "soon"),
        (runs.PROGRESS_AFTER, "late"),
        (1.0, "too soon"),
        (runs.PROGRESS_EVERY, "due"),
    ):
        clock[0] += seconds
        line.show(text)
    assert capsys.readouterr().err == "crashsweep: design: late\ncrashsweep: design: due\n"


def test_the_progress_line_says_states_to_visit_not_frontier_and_states_per_second(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The search's queue is "to visit": "frontier" is the name of a command that means something else."""
    clock = [10.0]
    progress = runs._Progress("design", lines=True, clock=lambda: clock[0])
    progress(0, 1, 0)  # no time passed yet: no rate
    clock[0] += runs.PROGRESS_EVERY
    progress(120, 35, 2)
    assert capsys.readouterr().err == (
        "crashsweep: design: 0 states, 1 to visit, up to 0 crashes\n"
        "crashsweep: design: 120 states, 35 to visit, up to 2 crashes, 24 states/s\n"
    )
