"""The state graph as GraphML: networkx reads back the same graph, with its attributes."""

from __future__ import annotations

import io
from typing import Any

import networkx as nx

from crashsweep.explorer.search import Exploration, explore
from crashsweep.reports import graphml
from crashsweep.reports.counterexample import Counterexample, path_nodes
from crashsweep.reports.summary import summarize


def _read(exploration: Exploration[Any], cx: Counterexample) -> nx.Graph:
    summary = summarize(exploration, variant=cx.variant, job=cx.job, tracker=cx.tracker)
    text = graphml.to_graphml(exploration, summary, [cx])
    return nx.read_graphml(io.BytesIO(text.encode("utf-8")))


def test_networkx_reads_back_as_many_nodes_and_edges_as_the_exploration_found(
    sar: Exploration[Any], sar_cx: Counterexample
) -> None:
    """Every node and every edge (parallel ones kept) survives the round trip."""
    read = _read(sar, sar_cx)
    assert (read.number_of_nodes(), read.number_of_edges()) == (sar.states, sar.edges)


def test_nodes_edges_and_the_graph_carry_their_attributes(small: Exploration[Any], small_cx: Counterexample) -> None:
    """Node: state, crashes, violations, the counterexample's path; edge: action, kind, choice, counters."""
    read = _read(small, small_cx)
    assert read.graph["variant"] == "save-once-per-turn"
    assert read.graph["verdict:no-duplicate"] == "violated"
    assert read.graph["path:no-duplicate"] == small_cx.code
    assert read.graph["depth"] == 1
    assert read.graph["projection"] is small.projected
    root = read.nodes[str(small.root)]
    assert root["root"] is True
    assert root["crashes"] == 0
    assert "checkpoint" in root["state"]
    end = path_nodes(small, small_cx.choices)[-1]
    assert "no-duplicate" in read.nodes[str(end)]["violates"]
    on_path = {node for node, data in read.nodes(data=True) if data["counterexample"]}
    assert on_path == {str(node) for node in path_nodes(small, small_cx.choices)}
    edges = list(read.edges(data=True))
    kinds = {data["kind"] for _, _, data in edges}
    assert {"step", "crash", "restart"} <= kinds
    assert all(isinstance(data["choice"], int) and data["label"] == data["action"] for _, _, data in edges)
    counted = [data for _, _, data in edges if data["counters"]]
    assert counted
    assert all(
        data[name.split("=")[0]] == int(name.split("=")[1]) for data in counted for name in data["counters"].split(", ")
    )


def test_the_graph_says_whether_it_is_merged_by_the_state_key(
    small: Exploration[Any], small_cx: Counterexample
) -> None:
    """Merged or full (--no-projection), the graph attribute `projection` says which graph it is."""
    full = explore(small.model, small.depth, projection=False)
    assert _read(full, small_cx).graph["projection"] is False
    assert _read(small, small_cx).graph["projection"] is small.projected
