"""The explorer agrees with the naive replay oracle count for count, per crash count."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest
from hypothesis import given, settings

from crashsweep import variants
from crashsweep.explorer import Exploration, explore
from crashsweep.reports.summary import summarize
from crashsweep.spec import metrics
from crashsweep.spec.job import TRIAGE, Job
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from tests.replay_oracle import OracleResult, sweep
from tests.strategies import jobs

SEEDS = ("save-once-per-turn", "save-after-reply", "idempotency-keys", "attempt-markers", "keys-and-markers")
CASES = [
    *[(design, tracker) for design in SEEDS for tracker in ("keyed", "keyless")],
    *[("agent-loop", tracker) for tracker in ("keyed", "keyless", "keyless-lookup")],
]
FIGURES = ("scenarios", "with_dups", "dups", "missing", "asks", "lookups", "reruns", "model_calls")


@dataclass(frozen=True)
class Figures:
    """Crash points, scenarios per crash count, totals of the summary row, every figure per crash count."""

    crash_points: int
    scenarios: dict[int, int]
    totals: tuple[int, ...]  # with_dups, dups, missing, asks, lookups, reruns, calls_plus
    per_k: dict[int, dict[str, int]]


SHARED = (TRIAGE, "keyed", 2)
"""The path-length test explores and sweeps the seed designs here, as the triage agreement does."""


@functools.cache
def _shared_exploration(design: str) -> Exploration[World]:
    """One exploration per design of triage, keyed, depth 2 in this module (the same whenever it is made)."""
    return explore(variants.model(design, TRIAGE, TRACKERS["keyed"]), 2)


@functools.cache
def _shared_sweep(design: str) -> OracleResult:
    """One oracle sweep per design of triage, keyed, depth 2 in this module (read only, as above)."""
    return sweep(design, TRIAGE, "keyed", 2)


def _exploration(design: str, job: Job, tracker: str, depth: int) -> Exploration[World]:
    if (job, tracker, depth) == SHARED:
        return _shared_exploration(design)
    return explore(variants.model(design, job, TRACKERS[tracker]), depth)


def _sweep(design: str, job: Job, tracker: str, depth: int) -> OracleResult:
    if (job, tracker, depth) == SHARED:
        return _shared_sweep(design)
    return sweep(design, job, tracker, depth)


def explorer_figures(design: str, job: Job, tracker: str, depth: int) -> Figures:
    """The explorer's figures for one design, job, tracker and depth."""
    ex = _exploration(design, job, tracker, depth)
    row = summarize(ex, variant=design, job=job.name, tracker=tracker)
    counts = ex.counts
    per_k: dict[int, dict[str, int]] = {}
    for k in range(1, depth + 1):
        measures = counts.measures.get(k, {})
        counters = counts.counters.get(k, {})
        per_k[k] = {
            "scenarios": counts.scenarios.get(k, 0),
            "with_dups": measures.get("with_dups", 0),
            "dups": measures.get("dups", 0),
            "missing": measures.get("missing", 0),
            "asks": counters.get(metrics.ASKS, 0),
            "lookups": counters.get(metrics.LOOKUPS, 0),
            "reruns": counters.get(metrics.RERUNS, 0),
            "model_calls": counters.get(metrics.MODEL_CALLS, 0),
        }
    totals = (row.with_dups, row.dups, row.missing, row.asks, row.lookups, row.reruns, row.calls_plus)
    return Figures(row.crash_points, row.scenarios, totals, per_k)


def oracle_figures(design: str, job: Job, tracker: str, depth: int) -> Figures:
    """The oracle's figures, in the same shape as explorer_figures."""
    result = _sweep(design, job, tracker, depth)
    per_k = {k: {name: getattr(tally, name) for name in FIGURES} for k, tally in result.by_crashes.items()}
    names = ("with_dups", "dups", "missing", "asks", "lookups", "reruns", "calls_plus")
    scenarios = {k: tally.scenarios for k, tally in result.by_crashes.items()}
    return Figures(result.crash_points, scenarios, tuple(result.total(name) for name in names), per_k)


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(("design", "tracker"), CASES)
def test_triage_agrees(design: str, tracker: str, depth: int) -> None:
    """On the triage job the explorer's figures equal the oracle's at depths 1 and 2."""
    assert explorer_figures(design, TRIAGE, tracker, depth) == oracle_figures(design, TRIAGE, tracker, depth)


@pytest.mark.parametrize(("design", "tracker"), CASES)
@settings(max_examples=25, deadline=None)
@given(job=jobs())
def test_generated_jobs_agree_at_depth_one(design: str, tracker: str, job: Job) -> None:
    """On generated jobs the explorer's figures equal the oracle's at depth 1."""
    assert explorer_figures(design, job, tracker, 1) == oracle_figures(design, job, tracker, 1)


# The oracle replays every scenario from scratch (about 0.25 s a job at depth 2), so fewer examples here.
@pytest.mark.parametrize(("design", "tracker"), CASES)
@settings(max_examples=8, deadline=None)
@given(job=jobs())
def test_generated_jobs_agree_at_depth_two(design: str, tracker: str, job: Job) -> None:
    """On generated jobs the explorer's figures equal the oracle's at depth 2."""
    assert explorer_figures(design, job, tracker, 2) == oracle_figures(design, job, tracker, 2)


@pytest.mark.parametrize(("design", "tracker"), CASES)
def test_triage_depth_three_agrees(design: str, tracker: str) -> None:
    """On the triage job the explorer's figures equal the oracle's at depth 3."""
    assert explorer_figures(design, TRIAGE, tracker, 3) == oracle_figures(design, TRIAGE, tracker, 3)


@pytest.mark.parametrize("name", [d.name for d in variants.SEED_DESIGNS])
def test_replay_work_equals_summed_path_lengths(name: str) -> None:
    """The oracle's step count (starts plus points passed, over every replay) is the explorer's summed path length."""
    exploration = _exploration(name, TRIAGE, "keyed", 2)
    oracle = _sweep(name, TRIAGE, "keyed", 2)
    assert sum(exploration.counts.steps.values()) == oracle.steps
