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
from hypothesis.stateful import invariant, run_state_machine_as_test

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.explorer.path import shortest_path
from crashsweep.explorer.stateful import ModelMachine
from crashsweep.reports.summary import summarize
from crashsweep.spec.design import Design, Env
from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.loop_model import LoopModel
from crashsweep.variants.presets import BUILT_IN
from tests.published import SEED_TABLE
from tests.strategies import jobs

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


def _seed_row(design: Design) -> tuple[int, ...]:
    ex = explore(LoopModel(design, Env(TRIAGE, TRACKERS["keyed"])), 2)
    row = summarize(ex, variant=design.name, job=TRIAGE.name, tracker="keyed")
    return (row.scenarios[1], row.scenarios[2], row.with_dups, row.dups, row.missing, row.asks, row.calls_plus)


@pytest.mark.parametrize(
    ("framework", "seed"),
    [("langgraph-async", "save-once-per-turn"), ("dbos", "save-after-reply")],
)
def test_framework_presets_without_tool_errors_are_seed_designs(framework: str, seed: str) -> None:
    """On triage no tool fails, so on_tool_error never acts: the seed's rows.

    langgraph-async saves as save-once-per-turn does (start, turns, final), dbos as
    save-after-reply does (start, replies, each result, turns, final).
    """
    assert _seed_row(variants.PRESETS[framework].design) == SEED_TABLE[seed]


@pytest.mark.parametrize(("framework", "points"), [("langgraph-sync", 22), ("langgraph-exit", 12)])
def test_langgraph_crash_points(framework: str, points: int) -> None:
    """LangGraph's crash points on triage, counted from save-once-per-turn's 18.

    sync: plus the two reply saves (2 each) = 22; exit: less the startup save (2) and the two
    turn saves (2 each) = 12.
    """
    ex = explore(LoopModel(variants.PRESETS[framework].design, Env(TRIAGE, TRACKERS["keyed"])), 1)
    assert ex.counts.scenarios[1] == points


def test_the_registry_holds_built_in_then_framework_presets() -> None:
    assert list(variants.PRESETS) == [
        *variants.DESIGNS,
        "langgraph-sync",
        "langgraph-async",
        "langgraph-exit",
        "dbos",
    ]


STATEFUL_EXCLUDED: dict[str, str] = {}
"""Registry entries the stateful cross-check leaves out, each with the reason (none)."""
STATEFUL = {
    **{f"{name} (module)": design for name, design in variants.DESIGNS.items()},
    **{f"{name} (preset)": preset.design for name, preset in variants.PRESETS.items()},
}


def test_the_stateful_cross_check_covers_the_registry() -> None:
    assert len(STATEFUL) + len(STATEFUL_EXCLUDED) == len(variants.DESIGNS) + len(variants.PRESETS)


@pytest.mark.parametrize("name", sorted(set(STATEFUL) - set(STATEFUL_EXCLUDED)))
def test_random_runs_stay_in_the_bfs_graph(name: str) -> None:
    """Random runs (hypothesis, up to 2 crashes) on the job with a failing write only reach BFS nodes (by key)."""
    loop = LoopModel(STATEFUL[name], Env(SITUATIONS[0], TRACKERS["keyed"]))
    key = loop.key  # a node stands for every world with its state key (spec/key.py)
    nodes = {(key(data["state"]), data["crashes"]) for _, data in explore(loop, 2).graph.nodes(data=True)}
    visited: set[tuple[World, int]] = set()

    class CrossChecked(ModelMachine[World]):
        model = loop
        crash_budget = 2
        checked = 0

        @invariant(check_during_init=True)
        def in_the_bfs_graph(self) -> None:
            for step in self.path.steps[self.checked :]:
                visited.add((step.state, step.crashes))
                assert (key(step.state), step.crashes) in nodes, self.path.code
            self.checked = len(self.path.steps)

        @invariant()
        def properties_hold(self) -> None:
            """Violations are welcome here: the BFS graph has them too."""

    quick = settings(CrossChecked.TestCase.settings, max_examples=15, database=None, derandomize=True)
    run_state_machine_as_test(CrossChecked, settings=quick)
    assert max(crashes for _, crashes in visited) == 2


# Every preset by name (issue 24): a framework preset's name resolves like a built-in design's.


@pytest.mark.parametrize("name", list(variants.PRESETS))
def test_every_preset_is_a_design_by_name(name: str) -> None:
    """`design(name)` resolves every preset; a framework preset to its composed policy, a built-in to its module."""
    found = variants.design(name)
    assert found.name == name
    assert found.summary == variants.PRESETS[name].summary
    if name in variants.DESIGNS:
        assert found is variants.DESIGNS[name]
        assert not variants.is_preset(name)
    else:
        assert_same_exploration(variants.PRESETS[name].design, found, TRIAGE, "keyed", 1)
        assert variants.is_preset(name)


def test_names_lists_the_designs_then_the_framework_presets() -> None:
    assert variants.names() == (*variants.DESIGNS, "langgraph-sync", "langgraph-async", "langgraph-exit", "dbos")
    known = r"\(known: save-once-per-turn, .*, langgraph-sync, .*dbos\)"
    with pytest.raises(variants.UnknownVariantError, match=known):
        variants.design("nope")
