"""Tests of crashsweep.explorer.core: the arrays the search fills, and the networkx graph built from them."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings

from crashsweep.explorer.core import Core, Parents
from crashsweep.explorer.counting import count_paths
from crashsweep.explorer.model import Action
from crashsweep.explorer.search import explore
from crashsweep.spec.job import Job
from crashsweep.spec.tracker import KEYLESS
from crashsweep.variants import model
from tests.explorer.toys import CRASH, NEXT, START, Points
from tests.strategies import jobs


def test_edges_are_numbered_in_runs_per_node() -> None:
    """Node 0 with two edges, node 1 with none, node 2 with one: choices index each run."""
    core: Core[str] = Core()
    for name in ("a", "b", "c"):
        core.add_node(name, 0, name == "b", 0, 0)
    core.add_edge(1, START, {"n": 1})
    core.add_edge(2, CRASH, {})
    core.close()
    core.close()
    core.add_edge(1, NEXT, {"n": 1})
    core.close()
    assert (core.nodes, core.edges) == (3, 3)
    assert list(core.out_edges(0)) == [0, 1]
    assert list(core.out_edges(1)) == []
    assert core.edge(2, 0) == 2
    assert core.deltas[0] is core.deltas[2]  # equal increments are one shared mapping


def test_actions_and_deltas_are_numbers_into_tables_of_distinct_values() -> None:
    """Each edge keeps 4-byte numbers; equal actions (even distinct objects) and equal deltas share one entry."""
    core: Core[str] = Core()
    core.add_node("a", 0, False, 0, 0)
    core.add_edge(0, START, {"n": 1})
    core.add_edge(0, Action(START.kind, START.label), {"n": 1})
    core.add_edge(0, CRASH, {})
    core.close()
    assert core.actions.numbers.itemsize == core.deltas.numbers.itemsize == 4
    assert list(core.actions) == [START, START, CRASH]
    assert core.actions[0:2] == [START, START]
    assert len(core.actions.table) == 2
    assert list(core.deltas) == [{"n": 1}, {"n": 1}, {}]
    assert list(core.deltas.numbers) == [1, 1, 0]  # 0: no increments


def test_graph_has_the_attributes_of_every_node_and_edge() -> None:
    """The built graph carries state, crashes, finished, point; edges keyed by choice with action, deltas."""
    exploration = explore(Points(2), 1)
    graph = exploration.graph
    assert graph is exploration.graph  # built once
    assert graph.number_of_nodes() == exploration.states == 2 * (2 + 2)
    assert graph.number_of_edges() == exploration.edges
    assert graph.nodes[0] == {"state": ("init", 0, 0), "crashes": 0, "finished": False, "point": None}
    assert graph.nodes[1]["point"] == "p1"
    start: Action = graph.edges[0, 1, 0]["action"]
    assert start == START
    assert graph.edges[0, 1, 0]["deltas"] == {"starts": 1}
    for node in graph.nodes:
        for _, target, choice in graph.out_edges(node, keys=True):
            assert exploration.step(node, choice) == (graph.edges[node, target, choice]["action"], target)


def test_parents_is_the_bfs_tree_without_the_root() -> None:
    """Every node but the root has a parent edge, which leads to it."""
    exploration = explore(Points(3), 1)
    parents = exploration.parents
    assert isinstance(parents, Parents)
    assert len(parents) == exploration.states - 1
    assert exploration.root not in parents
    for node, (parent, choice) in parents.items():
        assert exploration.step(parent, choice)[1] == node


@settings(max_examples=15, deadline=None)
@given(jobs(max_turns=3, max_calls=2))
def test_counts_over_arrays_equal_counts_over_the_graph(job: Job) -> None:
    """The search's array counting agrees with counting the networkx graph it builds, figure for figure."""
    loop = model("save-after-reply", job, KEYLESS)
    exploration = explore(loop, 2)
    graph = exploration.graph
    assert nx.is_directed_acyclic_graph(graph)
    assert count_paths(graph, exploration.root, loop.measures) == exploration.counts


def _enumerate(graph: nx.MultiDiGraph, node: int, length: int, found: dict[int, list[int]]) -> None:
    """Walk every path from `node` one by one: found[k] gets [paths, summed lengths] of each crash count."""
    data = graph.nodes[node]
    if data["finished"]:
        tally = found.setdefault(data["crashes"], [0, 0])
        tally[0] += 1
        tally[1] += length
    for _, target in graph.out_edges(node):
        _enumerate(graph, target, length + 1, found)


@settings(max_examples=10, deadline=None)
@given(jobs(max_turns=2, max_calls=2))
def test_counts_equal_paths_walked_one_by_one(job: Job) -> None:
    """Scenarios and summed lengths per crash count equal a walk of every path of the built graph."""
    exploration = explore(model("keys-and-markers", job, KEYLESS), 1)
    found: dict[int, list[int]] = {}
    _enumerate(exploration.graph, exploration.root, 0, found)
    assert {k: n for k, (n, _) in found.items()} == exploration.counts.scenarios
    assert {k: steps for k, (_, steps) in found.items()} == exploration.counts.steps
