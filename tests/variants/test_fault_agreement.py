"""Under faults the explorer agrees with the replay oracle, which implements spec/FAULTS.md on its own.

The oracle replays every scenario (a sequence of moves at numbered chances) from scratch; the
explorer counts paths with fault edges. Agreement is checked figure for figure per number of
moves, the tally of each kind and the summed path lengths included: every design of the
registry and every preset, on every tracker, on the triage job and the situation jobs, at
depths 1 and 2; and random policies on generated jobs.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.spec import metrics
from crashsweep.spec.design import Design, Env
from crashsweep.spec.faults import FAULTS, fault_counter
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import Policy, all_policies
from crashsweep.spec.process import paused
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel
from tests.replay_oracle import Environment, policy_of, sweep
from tests.variants.test_presets import jobs_with_situations

ROOT = Path(__file__).resolve().parents[2]
SITUATIONS = (load_job(ROOT / "examples" / "triage-fails.toml"), load_job(ROOT / "examples" / "triage-approval.toml"))
# `pause` runs two processes at once; its agreement with the oracle is tests/variants/test_pause_agreement.py.
ONE_PROCESS = tuple(kind for kind in FAULTS if kind != "pause")
ENVIRONMENTS = {
    **{kind: Environment((kind,)) for kind in ONE_PROCESS},
    "fresh": Environment(fresh_ids=True),
    "all": Environment(ONE_PROCESS, fresh_ids=True),
}
COUNTERS = (metrics.ASKS, metrics.LOOKUPS, metrics.RERUNS, metrics.MODEL_CALLS)
Figures = tuple[int, int, dict[int, tuple[int, ...]]]


def explorer_figures(design: Design, job: Job, tracker: str, env: Environment, depth: int) -> Figures:
    """Summed path length, crash points, and per number of moves every figure, from the explorer."""
    model = LoopModel(design, Env(job, TRACKERS[tracker], env.faults, env.fresh_ids))
    ex = explore(model, depth)
    counts = ex.counts
    per_k = {}
    for k in range(1, depth + 1):
        measures, counters = counts.measures.get(k, {}), counts.counters.get(k, {})
        per_k[k] = (
            counts.scenarios.get(k, 0),
            *(measures.get(name, 0) for name in ("with_dups", "dups", "missing")),
            *(counters.get(name, 0) for name in COUNTERS),
            *(counters.get(fault_counter(kind), 0) for kind in ONE_PROCESS),
        )
    points = 0
    world, _ = model.step(model.initial(), model.actions(model.initial())[0])
    while not model.is_finished(world):  # the uninterrupted run, taking no move
        points += world.process is not None and not paused(world)  # a pause is no crash point
        world, _ = model.step(world, model.actions(world)[0])
    return sum(counts.steps.values()), points, per_k


def oracle_figures(policy: Policy | str, job: Job, tracker: str, env: Environment, depth: int) -> Figures:
    """The same figures from the replay oracle (a design named by the registry, or its policy)."""
    return _oracle_figures(policy_of(policy), job, tracker, env, depth)


@functools.cache
def _oracle_figures(policy: Policy, job: Job, tracker: str, env: Environment, depth: int) -> Figures:
    """One sweep per policy, job, tracker, environment and depth in this module.

    The presets' test sweeps the built-in designs' policies on triage under every fault at
    depth 2, as the registry's test does: the same replays, made once (they are the same
    whenever they are made).
    """
    result = sweep(policy, job, tracker, depth, env)
    per_k = {
        k: (
            tally.scenarios,
            tally.with_dups,
            tally.dups,
            tally.missing,
            tally.asks,
            tally.lookups,
            tally.reruns,
            tally.model_calls,
            *(tally.moves[kind] for kind in ONE_PROCESS),
        )
        for k, tally in result.by_crashes.items()
    }
    return result.steps, result.crash_points, per_k


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("env", list(ENVIRONMENTS))
@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("design", list(variants.DESIGNS))
def test_registry_agrees_on_triage(design: str, tracker: str, env: str, depth: int) -> None:
    """Every design of the registry, on the triage job, under each fault alone, fresh IDs, and all."""
    environment = ENVIRONMENTS[env]
    got = explorer_figures(variants.design(design), TRIAGE, tracker, environment, depth)
    assert got == oracle_figures(design, TRIAGE, tracker, environment, depth)


@pytest.mark.parametrize("job", SITUATIONS, ids=lambda job: job.name)
@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("design", list(variants.DESIGNS))
def test_registry_agrees_on_the_situation_jobs(design: str, tracker: str, job: Job) -> None:
    """A failing write and a gated write meet every fault (depth 2)."""
    environment = ENVIRONMENTS["all"]
    got = explorer_figures(variants.design(design), job, tracker, environment, 2)
    assert got == oracle_figures(design, job, tracker, environment, 2)


@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("name", list(variants.PRESETS))
def test_presets_agree_on_triage(name: str, tracker: str) -> None:
    """Every preset (built-in designs and framework loops, as policy records) under every fault."""
    policy = variants.PRESETS[name].policy
    environment = ENVIRONMENTS["all"]
    got = explorer_figures(compose(name, "", policy), TRIAGE, tracker, environment, 2)
    assert got == oracle_figures(policy, TRIAGE, tracker, environment, 2)


@settings(max_examples=30, deadline=None)
@given(
    policy=st.sampled_from(all_policies()),
    job=jobs_with_situations(),
    tracker=st.sampled_from(list(TRACKERS)),
    env=st.sampled_from(list(ENVIRONMENTS)),
    depth=st.integers(1, 2),
)
def test_random_policies_agree_on_generated_jobs(policy: Policy, job: Job, tracker: str, env: str, depth: int) -> None:
    """Any policy, any job with the situations' options, any environment."""
    environment = ENVIRONMENTS[env]
    got = explorer_figures(compose("p", "", policy), job, tracker, environment, depth)
    assert got == oracle_figures(policy, job, tracker, environment, depth)
