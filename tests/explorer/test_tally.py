"""Tests of crashsweep.explorer.tally: figures of the state a step reaches, summed like any counter."""

from __future__ import annotations

from crashsweep.explorer.search import explore
from crashsweep.explorer.tally import Tallied
from tests.explorer.toys import Points, Toy


def _at_two(state: Toy) -> dict[str, int]:
    """1 "twos" whenever a step reaches point 2."""
    return {"twos": 1} if state[:2] == ("at", 2) else {}


def test_tally_is_summed_over_scenarios_and_leaves_the_graph_alone() -> None:
    """Points(3) at depth 1 reaches point 2 once uninterrupted and 5 times over its one-crash scenarios.

    Not durable: a crash at point 1, 2 or 3 restarts from point 1, so the three scenarios reach
    point 2 on 1 + 2 + 2 = 5 steps.
    """
    inner = explore(Points(3), 1)
    tallied = explore(Tallied(Points(3), _at_two), 1)
    assert tallied.counts.counters[0]["twos"] == 1
    assert tallied.counts.counters[1]["twos"] == 5
    assert tallied.counts.scenarios == inner.counts.scenarios
    assert tallied.graph.number_of_nodes() == inner.graph.number_of_nodes()
    assert tallied.counts.counters[1]["starts"] == inner.counts.counters[1]["starts"]


def test_wrapper_passes_the_inner_model_through() -> None:
    """States, actions, properties, measures and crash points are the inner model's."""
    inner = Points(2)
    model = Tallied(inner, _at_two)
    state = model.initial()
    assert state == inner.initial()
    assert model.actions(state) == inner.actions(state)
    assert model.properties == inner.properties
    assert model.measures.keys() == inner.measures.keys()
    after, deltas = model.step(state, model.actions(state)[0])
    assert deltas == {"starts": 1}
    assert model.crash_point(after) == inner.crash_point(after)
    assert not model.is_finished(after)
