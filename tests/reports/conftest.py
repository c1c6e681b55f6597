"""Shared fixtures of the report tests: explorations and their shortest counterexamples."""

from __future__ import annotations

from typing import Any

import pytest

from crashsweep.explorer.search import Exploration, explore
from crashsweep.reports.counterexample import Counterexample, shortest
from crashsweep.spec.job import TRIAGE, Call, Job
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model

ONE_WRITE = Job("one", ((Call("w", "create_issue", True),),))
"""A job with a single write: its graphs are small enough to draw whole."""


def counterexample_of(exploration: Exploration[Any], variant: str, job: Job) -> Counterexample:
    """The first violated invariant's shortest counterexample."""
    found = shortest(exploration, variant=variant, job=job.name, job_file=None, tracker="keyed")
    assert found, f"{variant} violates nothing"
    return found[0]


@pytest.fixture(scope="session")
def sar() -> Exploration[Any]:
    """save-after-reply on the triage job at depth 2 (516 states merged by the state key, 752 in the full graph)."""
    return explore(model("save-after-reply", TRIAGE, KEYED), 2)


@pytest.fixture(scope="session")
def sar_cx(sar: Exploration[Any]) -> Counterexample:
    """The shortest no-duplicate counterexample of save-after-reply at depth 2."""
    return counterexample_of(sar, "save-after-reply", TRIAGE)


@pytest.fixture(scope="session")
def small() -> Exploration[Any]:
    """save-once-per-turn on a one-write job at depth 1 (54 states)."""
    return explore(model("save-once-per-turn", ONE_WRITE, KEYED), 1)


@pytest.fixture(scope="session")
def small_cx(small: Exploration[Any]) -> Counterexample:
    """The shortest no-duplicate counterexample of the small graph."""
    return counterexample_of(small, "save-once-per-turn", ONE_WRITE)


@pytest.fixture(scope="session")
def pause_cx() -> Counterexample:
    """agent-loop on the triage job with `pause`, depth 1: two live processes duplicate create_a (18 steps)."""
    exploration = explore(model("agent-loop", TRIAGE, KEYED, faults=("pause",)), 1)
    return counterexample_of(exploration, "agent-loop", TRIAGE)
