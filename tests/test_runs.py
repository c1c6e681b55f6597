"""Tests of crashsweep.runs: choices from the command line become one design's exploration and row."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep import runs
from explorer.search import ExplorationInterrupted
from spec.job import TRIAGE, JobError
from spec.tracker import KEYED


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
