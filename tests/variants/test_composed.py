"""The composed loop agrees with the replay oracle, which implements POLICIES.md independently.

Every one of the 512 policies on a small job that has a failing write, a gated write and a
read, on every tracker; random policies on generated jobs with those options; every preset
(and the example design file) on the triage job and the situation jobs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.reports.summary import summarize
from crashsweep.spec import metrics
from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.policy import Policy, all_policies
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.composed import compose
from crashsweep.variants.design_file import load_design
from tests import replay_oracle as oracle
from tests.replay_oracle import sweep
from tests.variants.test_presets import jobs_with_situations

ROOT = Path(__file__).resolve().parents[2]
SITUATIONS = (load_job(ROOT / "examples" / "triage-fails.toml"), load_job(ROOT / "examples" / "triage-approval.toml"))
SMALL = Job(
    "small",
    (
        (Call("w1", "create_issue", True, fails_after_accept=True), Call("r1", "search_issues", False)),
        (Call("w2", "comment", True, approval=True),),
    ),
)
FIGURES = ("with_dups", "dups", "missing", "asks", "lookups", "reruns", "model_calls")


def explorer_figures(policy: Policy, job: Job, tracker: str, depth: int) -> tuple[int, dict[int, tuple[int, ...]]]:
    """Crash points and, per crash count, scenarios and every counted figure, from the explorer."""
    ex = explore(variants.model(compose("p", "", policy), job, TRACKERS[tracker]), depth)
    row = summarize(ex, variant="p", job=job.name, tracker=tracker)
    per_k = {}
    for k in range(1, depth + 1):
        measures, counters = ex.counts.measures.get(k, {}), ex.counts.counters.get(k, {})
        per_k[k] = (
            ex.counts.scenarios.get(k, 0),
            *(measures.get(name, 0) for name in ("with_dups", "dups", "missing")),
            *(counters.get(name, 0) for name in (metrics.ASKS, metrics.LOOKUPS, metrics.RERUNS, metrics.MODEL_CALLS)),
        )
    return row.crash_points, per_k


def oracle_figures(policy: Policy, job: Job, tracker: str, depth: int) -> tuple[int, dict[int, tuple[int, ...]]]:
    """The same figures from the replay oracle."""
    result = sweep(policy, job, tracker, depth)
    per_k = {
        k: (tally.scenarios, *(getattr(tally, name) for name in FIGURES)) for k, tally in result.by_crashes.items()
    }
    return result.crash_points, per_k


def assert_agree(policy: Policy, job: Job, tracker: str, depth: int) -> None:
    assert explorer_figures(policy, job, tracker, depth) == oracle_figures(policy, job, tracker, depth), policy.label


@pytest.mark.parametrize("tracker", list(TRACKERS))
def test_every_policy_agrees_on_a_job_with_every_option(tracker: str) -> None:
    for policy in all_policies():
        assert_agree(policy, SMALL, tracker, 1)


CHECKED = {**variants.PRESETS, "my-design (docs)": load_design(ROOT / "docs" / "my-design.toml")}


@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("name", list(CHECKED))
def test_presets_agree_on_triage_and_situations(name: str, tracker: str) -> None:
    policy = CHECKED[name].policy
    assert_agree(policy, TRIAGE, tracker, 2)
    for job in SITUATIONS:
        assert_agree(policy, job, tracker, 1)


@settings(max_examples=40, deadline=None)
@given(
    policy=st.sampled_from(all_policies()),
    job=jobs_with_situations(),
    tracker=st.sampled_from(list(TRACKERS)),
    depth=st.integers(1, 2),
)
def test_random_policies_agree_on_generated_jobs(policy: Policy, job: Job, tracker: str, depth: int) -> None:
    assert_agree(policy, job, tracker, depth)


def test_the_oracle_reads_the_built_in_designs_as_the_presets_do() -> None:
    """Two readings of SEMANTICS.md sections 7 and 9 and SITUATIONS.md section 4 give the same policies."""
    oracle_designs = {**oracle.DESIGNS, **oracle.NAIVE}
    assert {name: variants.PRESETS[name].policy for name in variants.DESIGNS} == oracle_designs
