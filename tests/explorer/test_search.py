"""Tests of crashsweep.explorer.search: BFS, deduplication, verdicts, limits, on hand-counted toy models."""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytest

from crashsweep.explorer.model import Action, ModelDefinitionError, Property
from crashsweep.explorer.path import replay, shortest_path
from crashsweep.explorer.search import ExplorationInterrupted, StateLimitExceeded, enabled, explore
from tests.explorer.toys import NEXT, Points, Tagged, Toy


@pytest.mark.parametrize(("n", "depth"), [(1, 0), (3, 1), (4, 2), (5, 3)])
def test_scenarios_without_durable_state_are_n_to_the_k(n: int, depth: int) -> None:
    """A restart that begins again reaches all n points, so k crashes give n**k scenarios."""
    counts = explore(Points(n), depth).counts
    assert counts.scenarios == {k: n**k for k in range(depth + 1)}


@pytest.mark.parametrize(("n", "depth"), [(3, 1), (4, 2), (5, 3)])
def test_states_are_deduplicated_per_crash_count(n: int, depth: int) -> None:
    """Each crash count holds n point states, one finished state and one entry state: (depth+1)(n+2)."""
    graph = explore(Points(n), depth).graph
    assert graph.number_of_nodes() == (depth + 1) * (n + 2)


@pytest.mark.parametrize(("n", "depth"), [(3, 1), (4, 2), (5, 3)])
def test_a_state_reached_with_several_crash_counts_is_stored_once(n: int, depth: int) -> None:
    """Equal states at several crash counts are one stored object, shared by their nodes.

    The nodes are (state, crashes) pairs, (depth+1)(n+2) of them (above): at 0 crashes the
    entry state is "init", at 1 or more it is "down"; the n points and "done" recur at every
    crash count. So the distinct states are n + 3, and the search keeps one object for each.
    """
    exploration = explore(Points(n), depth)
    stored = [exploration.state(node) for node in range(exploration.states)]
    assert len(stored) == (depth + 1) * (n + 2)
    assert len(set(stored)) == n + 3
    assert len({id(state) for state in stored}) == n + 3
    pairs = {(exploration.state(node), exploration.crashes(node)) for node in range(exploration.states)}
    assert len(pairs) == exploration.states  # still one node per (state, crashes)


def test_resuming_process_has_triangular_two_crash_count() -> None:
    """Resuming at the crashed point: crash at i leaves n-i+1 points, so 2 crashes give n(n+1)/2."""
    n = 6
    counts = explore(Points(n, durable=True), 2).counts
    assert counts.scenarios[1] == n
    assert counts.scenarios[2] == n * (n + 1) // 2


def test_edge_counters_sum_per_path() -> None:
    """Every scenario with k crashes starts k+1 processes, so starts sum to (k+1) * n**k."""
    n, depth = 4, 3
    counts = explore(Points(n), depth).counts
    for k in range(depth + 1):
        assert counts.counters[k]["starts"] == (k + 1) * n**k
        assert counts.measures[k]["one"] == n**k
    # One crash at point i: start, i-1 nexts, crash, restart, n nexts = n + i + 2 steps.
    assert counts.steps[1] == sum(n + i + 2 for i in range(1, n + 1))


def test_crashes_only_below_depth() -> None:
    """A crash action is enabled only while the path's crash count is below the depth."""
    model = Points(2)
    assert [a.kind for a in enabled(model, ("at", 1, 0), 0, 1)] == ["step", "crash"]
    assert [a.kind for a in enabled(model, ("at", 1, 0), 1, 1)] == ["step"]


def test_invariant_violation_is_found_at_shortest_distance() -> None:
    """The first violating node BFS meets is the one nearest the root."""
    model = Points(5, invariant=lambda s: not (s[0] == "at" and s[1] >= 3))
    exploration = explore(model, 1)
    verdict = exploration.verdicts["inv"]
    assert not verdict.holds
    assert verdict.node is not None
    assert exploration.state(verdict.node) == ("at", 3, 0)
    assert not exploration.holds


def test_witness_never_seen_fails_loudly() -> None:
    """An unexercised sometimes property makes the exploration fail even though the invariant holds."""
    exploration = explore(Points(2, witness=lambda s: False), 1)
    assert exploration.verdicts["inv"].holds
    assert not exploration.verdicts["seen"].holds
    assert not exploration.holds


def test_state_limit_stops_with_figures() -> None:
    """Beyond max_states the search stops with how far it got."""
    with pytest.raises(StateLimitExceeded, match="state limit reached: 10 states") as caught:
        explore(Points(20), 2, max_states=10)
    assert caught.value.states == 10


def test_progress_reports_growth() -> None:
    """The progress callback is called with growing state counts."""
    seen: list[int] = []
    explore(Points(10), 2, progress=lambda states, frontier, crashes: seen.append(states), progress_every=5)
    assert seen
    assert seen == sorted(seen)


class _Interrupting(Points):
    def step(self, state: Toy, action: Action) -> tuple[Toy, Mapping[str, int]]:
        if state == ("at", 3, 0):
            raise KeyboardInterrupt
        return super().step(state, action)


def test_ctrl_c_reports_partial_figures() -> None:
    """Ctrl-C inside the search becomes ExplorationInterrupted with the states seen so far."""
    # BFS order: init, p1, p2, down (crash at p1), p3, p1 after restart; expanding p3 is interrupted.
    with pytest.raises(ExplorationInterrupted, match="interrupted after 6 states and 6 edges"):
        explore(_Interrupting(5), 1)


class _Stuck(Points):
    def actions(self, state: Toy) -> tuple[Action, ...]:
        return () if state[0] == "at" and state[1] == 2 else tuple(super().actions(state))


def test_stuck_state_is_a_model_error() -> None:
    """A state that is neither finished nor has an action is reported, not silently dropped."""
    with pytest.raises(ModelDefinitionError, match="neither finished nor has an enabled action"):
        explore(_Stuck(3), 0)


class _Live(Points):
    """Points(3), durable, where a crash at p2 leaves a world no restart can leave: stuck."""

    def actions(self, state: Toy) -> Sequence[Action]:
        return () if state == ("down", 0, 2) else super().actions(state)

    @property
    def properties(self) -> Sequence[Property[Toy]]:
        return (
            *super().properties,
            Property.can_finish("can-finish", lambda s: s != ("down", 0, 2), witness="seen"),
        )


def test_a_stuck_state_ends_its_scenarios_and_fails_can_finish() -> None:
    """With a live property a stuck state is an end: counted, measured, never finished.

    Depth 1: the run with no crash finishes (1 scenario); a crash at p1, p2 or p3 gives 3 more,
    the one at p2 stuck for good. The shortest counterexample is start, next (to p2), crash.
    """
    exploration = explore(_Live(3, durable=True), 1)
    assert exploration.counts.scenarios == {0: 1, 1: 3}
    assert exploration.counts.measures[1]["one"] == 3  # the stuck scenario is measured too
    verdict = exploration.verdicts["can-finish"]
    assert not verdict.holds
    assert verdict.node is not None
    assert exploration.stuck(verdict.node)
    assert not exploration.finished(verdict.node)
    path = shortest_path(exploration, verdict.node)
    assert [step.action.label for step in path.steps[1:] if step.action is not None] == ["start", "next", "crash"]
    assert explore(_Live(3, durable=True), 0).verdicts["can-finish"].holds  # no crash: nothing sticks


class _Cycle(Points):
    def step(self, state: Toy, action: Action) -> tuple[Toy, Mapping[str, int]]:
        if state == ("at", 2, 0) and action.kind == "step":
            return ("at", 1, 0), {}
        return super().step(state, action)


def test_cycle_is_a_model_error() -> None:
    """Path counting refuses a graph with a cycle, naming what to fix."""
    with pytest.raises(ModelDefinitionError, match="cycle"):
        explore(_Cycle(3), 0)


def test_negative_depth_is_refused() -> None:
    """Depth below zero is a usage error."""
    with pytest.raises(ValueError, match="depth"):
        explore(Points(2), -1)


def test_collector_is_back_as_it_was_after_a_search() -> None:
    """The search pauses the cyclic garbage collector and restores it, even when it fails."""
    assert gc.isenabled()
    explore(Points(3), 1)
    assert gc.isenabled()
    with pytest.raises(ModelDefinitionError):
        explore(_Stuck(3), 0)
    assert gc.isenabled()
    gc.disable()
    try:
        explore(Points(3), 1)
        assert not gc.isenabled()
    finally:
        gc.enable()


GLITCH = Action("fault", "glitch")


@dataclass(frozen=True)
class GlitchingPoints(Points):
    """Points whose every point also offers a fault, a glitch that moves on like `next` but is a move."""

    def actions(self, state: Toy) -> Sequence[Action]:
        """Next, crash or glitch at a point; otherwise as Points."""
        offered = super().actions(state)
        return (*offered, GLITCH) if state[0] == "at" else offered

    def step(self, state: Toy, action: Action) -> tuple[Toy, Mapping[str, int]]:
        """A glitch does what `next` does, and counts itself."""
        if action.kind == "fault":
            after, _ = super().step(state, NEXT)
            return after, {"glitches": 1}
        return super().step(state, action)


def test_faults_are_moves_bounded_with_crashes() -> None:
    """Crashes and faults share the depth; scenarios are counted by moves.

    Hand count for 2 points, non-durable (x marks a move): a process that finishes passes 2
    points choosing next or glitch, F = (1 + x)^2; one that crashes does so at point 1 or at
    point 2 after a next or glitch, C = x + x(1 + x) = 2x + x^2. Scenarios are C^m F: the
    coefficient of x is 2 (F) + 2 (C F) = 4; of x^2, 1 (F) + 4 + 1 (C F) + 4 (C^2 F) = 10.
    At depth 1 no path holds both a crash and a glitch: 2 glitches (one per point) and 2 crashes.
    """
    one = explore(GlitchingPoints(2), 1)
    assert one.counts.scenarios == {0: 1, 1: 4}
    assert one.counts.counters[1]["glitches"] == 2
    two = explore(GlitchingPoints(2), 2)
    assert two.counts.scenarios == {0: 1, 1: 4, 2: 10}
    assert all(action.kind != "fault" for action in enabled(GlitchingPoints(2), ("at", 1, 0), 1, 1))


@pytest.mark.parametrize(("n", "depth"), [(3, 1), (4, 2), (2, 3)])
def test_a_state_key_merges_states_with_the_same_future(n: int, depth: int) -> None:
    """Tagged(n): the tag makes n copies of every state after a crash; the key merges them.

    Full graph, by hand: n + 2 nodes with no crash (init, n points, done), then per crash
    count n tags times (down, n points, done). Merged: Points's (depth + 1)(n + 2). The
    scenarios are Points's n**k either way, and so are the verdict and its path's length.
    """
    full = explore(Tagged(n), depth, projection=False)
    merged = explore(Tagged(n), depth)
    assert (full.projected, merged.projected) == (False, True)
    assert full.states == (n + 2) + depth * n * (n + 2)
    assert merged.states == (depth + 1) * (n + 2)
    assert merged.counts == full.counts
    assert merged.counts.scenarios == {k: n**k for k in range(depth + 1)}
    for name in ("before-last", "seen"):
        one, two = full.verdicts[name], merged.verdicts[name]
        assert one.holds == two.holds
        assert one.node is not None
        assert two.node is not None
        assert len(shortest_path(merged, two.node).steps) == len(shortest_path(full, one.node).steps)


def test_every_node_of_a_merged_search_keeps_a_real_run() -> None:
    """Each node's state is its parent's state stepped by the tree edge: paths replay to their states."""
    model = Tagged(3)
    merged = explore(model, 2)
    for node in range(merged.states):
        path = shortest_path(merged, node)
        assert replay(model, 2, path.code).end == merged.state(node)


def test_a_model_without_a_key_is_not_projected() -> None:
    """No key: one node per state, and the exploration says so."""
    assert not explore(Points(3), 1).projected


def test_a_key_that_is_not_a_function_is_refused() -> None:
    """A model whose key is neither a function nor None: a ModelDefinitionError that says so."""

    @dataclass(frozen=True)
    class Bad(Points):
        key: object = 3

    with pytest.raises(ModelDefinitionError, match="key"):
        explore(Bad(2), 1)
