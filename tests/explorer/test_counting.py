"""Tests of crashsweep.explorer.counting: path counts and summed metrics on hand-built graphs."""

from __future__ import annotations

import networkx as nx
import pytest

from crashsweep.explorer.counting import Counts, count_paths


def _diamond() -> nx.MultiDiGraph:
    """root -> a, root -> b, a -> end, b -> end, plus a parallel edge b -> end; end finished."""
    graph = nx.MultiDiGraph()
    for node, finished in (("root", False), ("a", False), ("b", False), ("end", True)):
        graph.add_node(node, state=node, crashes=0, finished=finished)
    graph.add_edge("root", "a", key=0, deltas={"cost": 1})
    graph.add_edge("root", "b", key=1, deltas={})
    graph.add_edge("a", "end", key=0, deltas={"cost": 10})
    graph.add_edge("b", "end", key=0, deltas={"cost": 100})
    graph.add_edge("b", "end", key=1, deltas={})
    return graph


def test_paths_through_parallel_edges_are_counted() -> None:
    """root-a-end, root-b-end twice: three paths, with costs 11, 100 and 0."""
    counts = count_paths(_diamond(), "root", {"size": len})  # type: ignore[arg-type]
    assert counts.scenarios == {0: 3}
    assert counts.counters[0]["cost"] == 11 + 100 + 0
    assert counts.measures[0]["size"] == 3 * len("end")
    assert counts.steps[0] == 3 * 2


def test_finished_nodes_split_by_crash_count() -> None:
    """Paths ending in finished nodes of different crash counts are counted apart."""
    graph = nx.MultiDiGraph()
    graph.add_node(0, state=0, crashes=0, finished=False)
    graph.add_node(1, state=1, crashes=0, finished=True)
    graph.add_node(2, state=2, crashes=1, finished=False)
    graph.add_node(3, state=3, crashes=1, finished=True)
    graph.add_edge(0, 1, key=0, deltas={})
    graph.add_edge(0, 2, key=1, deltas={"n": 2})
    graph.add_edge(2, 3, key=0, deltas={"n": 3})
    counts = count_paths(graph, 0, {})
    assert counts.scenarios == {0: 1, 1: 1}
    assert counts.counters[1]["n"] == 5
    assert counts.counters[0]["n"] == 0


def test_total_sums_measures_and_counters_over_crash_counts() -> None:
    """Counts.total adds a figure over the chosen crash counts, 0 where absent."""
    counts = Counts({1: 2, 2: 3}, {1: {"m": 4}, 2: {"m": 5}}, {1: {"c": 1}})
    assert counts.total("m", range(1, 3)) == 9
    assert counts.total("c", range(1, 3)) == 1
    assert counts.total("absent", range(0, 5)) == 0


def test_exact_integers_beyond_floats() -> None:
    """A chain of 80 binary diamonds has 2**80 paths, counted exactly."""
    graph = nx.MultiDiGraph()
    graph.add_node(0, state=0, crashes=0, finished=False)
    for i in range(80):
        graph.add_node(i + 1, state=i + 1, crashes=0, finished=i == 79)
        graph.add_edge(i, i + 1, key=0, deltas={"x": 1})
        graph.add_edge(i, i + 1, key=1, deltas={})
    counts = count_paths(graph, 0, {})
    assert counts.scenarios[0] == 2**80
    # Each of the 80 positions takes the "x" edge in half of the paths.
    assert counts.counters[0]["x"] == 80 * 2**79


def test_unreachable_nodes_do_not_count() -> None:
    """A finished node no path reaches adds no scenario."""
    graph = nx.MultiDiGraph()
    graph.add_node(0, state=0, crashes=0, finished=True)
    graph.add_node(1, state=1, crashes=0, finished=True)
    assert count_paths(graph, 0, {}).scenarios == {0: 1}


@pytest.mark.parametrize("root", [0])
def test_single_finished_root_is_one_scenario(root: int) -> None:
    """A root that is already finished is one scenario with zero crashes."""
    graph = nx.MultiDiGraph()
    graph.add_node(root, state=root, crashes=0, finished=True)
    assert count_paths(graph, root, {"one": lambda s: 1}).measures == {0: {"one": 1}}
