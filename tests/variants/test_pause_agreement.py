"""With a second live process, the explorer agrees with tests/pause_oracle.py, written from FAULTS.md section 7.

The oracle runs the processes as threads and replays every scenario (a move at a numbered
chance, and for a pause every wake-up point) from scratch; the explorer counts paths through
a graph whose worlds hold both processes. Agreement is checked figure for figure per number
of moves, the tally of crashes and pauses included: agent-loop under each of the four lock
policies on every tracker at depth 1 on the triage job, at depth 2 on the one-write job,
random policies with every lock on the one-write job at depths 1 and 2, agent-loop with the
fsyncs of each fsync policy on the one-write job, and the situation jobs (a failing write, a
gated write) with a pause beside lost replies and wrong answers.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.spec import metrics
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import PAUSE_LOCKS, Fsync, Lock, Policy, all_policies
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel
from tests import pause_oracle
from tests.replay_oracle import Environment

ONE_WRITE = load_job(Path(__file__).resolve().parents[2] / "examples" / "one-write.toml")
AGENT_LOOP = variants.PRESETS["agent-loop"].policy
PAUSE = Environment(("pause",))
KINDS = ("crash", "pause")
Figures = dict[int, tuple[int, ...]]


def explorer_figures(policy: Policy, job: Job, tracker: str, env: Environment, depth: int) -> Figures:
    """Per number of moves: scenarios, with_dups, dups, missing, asks, lookups, reruns, model calls, moves per kind."""
    model = LoopModel(compose("p", "", policy), Env(job, TRACKERS[tracker], env.faults, env.fresh_ids))
    counts = explore(model, depth).counts
    figures = {}
    for k in range(1, depth + 1):
        measures, counters = counts.measures.get(k, {}), counts.counters.get(k, {})
        figures[k] = (
            counts.scenarios.get(k, 0),
            *(measures.get(name, 0) for name in ("with_dups", "dups", "missing")),
            *(counters.get(name, 0) for name in (metrics.ASKS, metrics.LOOKUPS, metrics.RERUNS, metrics.MODEL_CALLS)),
            counters.get(fault_counter("pause"), 0),
        )
    return figures


def oracle_figures(policy: Policy, job: Job, tracker: str, env: Environment, depth: int) -> Figures:
    """The same figures from the pause oracle."""
    result = pause_oracle.sweep(policy, job, tracker, depth, env)
    return {
        k: (
            tally.scenarios,
            tally.with_dups,
            tally.dups,
            tally.missing,
            tally.asks,
            tally.lookups,
            tally.reruns,
            tally.model_calls,
            tally.moves["pause"],
        )
        for k, tally in result.by_crashes.items()
    }


@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("lock", PAUSE_LOCKS)
def test_agent_loop_agrees_on_triage_at_depth_1(lock: Lock, tracker: str) -> None:
    """agent-loop with each lock, on the triage job, one move (a crash or a pause)."""
    policy = replace(AGENT_LOOP, lock=lock)
    assert explorer_figures(policy, TRIAGE, tracker, PAUSE, 1) == oracle_figures(policy, TRIAGE, tracker, PAUSE, 1)


@pytest.mark.parametrize("lock", PAUSE_LOCKS)
def test_agent_loop_agrees_on_one_write_at_depth_2(lock: Lock) -> None:
    """Two moves: a pause then a crash (of either process), a crash then a pause, two pauses, two crashes."""
    policy = replace(AGENT_LOOP, lock=lock)
    assert explorer_figures(policy, ONE_WRITE, "keyed", PAUSE, 2) == oracle_figures(
        policy, ONE_WRITE, "keyed", PAUSE, 2
    )


def test_pause_with_lost_replies_agrees() -> None:
    """The other faults strike either process: a lost reply beside a pause (one-write job, depth 2)."""
    env = Environment(("lost-reply", "pause"))
    policy = replace(AGENT_LOOP, lock="lease+fencing")
    assert explorer_figures(policy, ONE_WRITE, "keyed", env, 2) == oracle_figures(policy, ONE_WRITE, "keyed", env, 2)


@settings(max_examples=25, deadline=None)
@given(
    policy=st.sampled_from(all_policies(PAUSE_LOCKS)),
    tracker=st.sampled_from(list(TRACKERS)),
    depth=st.integers(1, 2),
)
def test_random_policies_agree_on_one_write(policy: Policy, tracker: str, depth: int) -> None:
    """Any policy of the whole space (every lock), any tracker."""
    assert explorer_figures(policy, ONE_WRITE, tracker, PAUSE, depth) == oracle_figures(
        policy, ONE_WRITE, tracker, PAUSE, depth
    )


SITUATIONS = tuple(
    load_job(Path(__file__).resolve().parents[2] / "examples" / name)
    for name in ("triage-fails.toml", "triage-approval.toml")
)


@pytest.mark.parametrize("job", SITUATIONS, ids=lambda job: job.name)
@pytest.mark.parametrize("design", ["agent-loop", "attempt-markers", "error-to-model"])
def test_pause_beside_the_other_faults_on_the_situation_jobs(design: str, job: Job) -> None:
    """A failing write, a gated write; a pause with lost replies and wrong answers (tracker with a lookup)."""
    env = Environment(("lost-reply", "wrong-answer", "pause"))
    policy = variants.PRESETS[design].policy
    assert explorer_figures(policy, job, "keyless-lookup", env, 1) == oracle_figures(
        policy, job, "keyless-lookup", env, 1
    )


@pytest.mark.parametrize("fsync", ["no-dir-fsync", "full"])
@pytest.mark.parametrize("lock", PAUSE_LOCKS)
def test_fsync_points_beside_a_pause_agree_on_one_write(lock: Lock, fsync: Fsync) -> None:
    """agent-loop with fsyncs: an fsync of a temp file the other process renamed does nothing (FAULTS.md 7 rule 5)."""
    policy = replace(AGENT_LOOP, lock=lock, fsync=fsync)
    assert explorer_figures(policy, ONE_WRITE, "keyed", PAUSE, 1) == oracle_figures(
        policy, ONE_WRITE, "keyed", PAUSE, 1
    )
