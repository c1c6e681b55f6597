"""Each built-in preset reaches the very same worlds as its hand-written design.

Same graph node for node (the BFS numbers every state in the order it is found, so equal state
sequences and equal edge lists mean the same graph), the same counts and verdicts, and the same
counterexample paths, on the triage job, the situation jobs and generated jobs, depths 1-3.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import variants
from explorer import explore
from explorer.path import shortest_path
from spec.design import Design, Env
from spec.job import TRIAGE, Call, Job, load_job
from spec.tracker import TRACKERS
from tests.strategies import jobs
from variants.loop_model import LoopModel
from variants.presets import BUILT_IN

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SITUATIONS = (load_job(EXAMPLES / "triage-fails.toml"), load_job(EXAMPLES / "triage-approval.toml"))
PRESETS = {preset.name: preset for preset in BUILT_IN}


def assert_same_exploration(hand: Design, composed: Design, job: Job, tracker: str, depth: int) -> None:
    """Explore both designs and compare graph, counts, verdicts and counterexample paths."""
    env = Env(job, TRACKERS[tracker])
    one, two = explore(LoopModel(hand, env), depth), explore(LoopModel(composed, env), depth)
    assert one.graph.number_of_nodes() == two.graph.number_of_nodes()
    assert [one.state(n) for n in one.graph.nodes] == [two.state(n) for n in two.graph.nodes]
    assert list(one.graph.edges(keys=True, data=True)) == list(two.graph.edges(keys=True, data=True))
    assert one.counts == two.counts
    assert one.verdicts == two.verdicts
    for verdict in one.verdicts.values():
        if verdict.node is not None:
            path_one, path_two = shortest_path(one, verdict.node), shortest_path(two, verdict.node)
            assert path_one.code == path_two.code
            assert path_one.end == path_two.end


def test_every_built_in_design_has_a_preset() -> None:
    assert list(PRESETS) == list(variants.DESIGNS)
    for name, preset in PRESETS.items():
        assert preset.summary == variants.DESIGNS[name].summary


@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("depth", [1, 2])
def test_triage_and_situations(name: str, tracker: str, depth: int) -> None:
    for job in (TRIAGE, *SITUATIONS):
        assert_same_exploration(variants.DESIGNS[name], PRESETS[name].design, job, tracker, depth)


@pytest.mark.slow
@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("name", list(PRESETS))
def test_triage_depth_three(name: str, tracker: str) -> None:
    assert_same_exploration(variants.DESIGNS[name], PRESETS[name].design, TRIAGE, tracker, 3)


@st.composite
def jobs_with_situations(draw: st.DrawFn) -> Job:
    """A generated job whose writes may fail after accept or wait for approval."""
    job = draw(jobs(max_turns=3, max_calls=2))

    def options(call: Call) -> Call:
        if not call.writes:
            return call
        return Call(call.id, call.tool, True, draw(st.booleans()), draw(st.booleans()))

    return Job(job.name, tuple(tuple(options(call) for call in turn) for turn in job.turns))


@pytest.mark.parametrize("name", list(PRESETS))
@settings(max_examples=15, deadline=None)
@given(job=jobs_with_situations(), tracker=st.sampled_from(list(TRACKERS)), depth=st.integers(1, 2))
def test_generated_jobs(name: str, job: Job, tracker: str, depth: int) -> None:
    assert_same_exploration(variants.DESIGNS[name], PRESETS[name].design, job, tracker, depth)
