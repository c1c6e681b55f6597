"""Scenario counts and summed metrics by counting paths, never by enumerating them.

A scenario is a path from the root to a finished node; its crash count is that node's. One
forward pass in topological order carries, for every node, the number of paths that reach it
and the sum over those paths of each counter (a counter's delta on an edge is added once per
path through the edge). At a finished node the paths end: they add to the scenarios of its
crash count, and the node's measures count once per path. Integers are exact at any size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from explorer.model import ModelDefinitionError


@dataclass(frozen=True)
class Counts:
    """Per crash count k: scenarios, summed measures of final states, summed edge counters.

    `steps` is the summed length of the scenarios' paths: the step-function calls a sweep that
    replays every scenario from scratch would make.
    """

    scenarios: dict[int, int] = field(default_factory=dict)
    measures: dict[int, dict[str, int]] = field(default_factory=dict)
    counters: dict[int, dict[str, int]] = field(default_factory=dict)
    steps: dict[int, int] = field(default_factory=dict)

    def total(self, name: str, crashes: range) -> int:
        """A measure or counter summed over the given crash counts (0 where absent)."""
        result = 0
        for k in crashes:
            result += self.measures.get(k, {}).get(name, 0) + self.counters.get(k, {}).get(name, 0)
        return result


def count_paths(graph: nx.MultiDiGraph, root: int, measures: Mapping[str, Callable[[Any], int]]) -> Counts:
    """Count root-to-finished paths per crash count, summing counters and measures."""
    try:
        order = list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(graph)
        raise ModelDefinitionError(
            f"the state graph has a cycle ({len(cycle)} edges, through node {cycle[0][0]}): path counting "
            "needs every step to make progress; record the progress in the state"
        ) from None
    names = sorted({name for _, _, deltas in graph.edges(data="deltas") for name in deltas})
    paths: dict[int, int] = {root: 1}
    lengths: dict[int, int] = {root: 0}  # summed lengths of the paths that reach a node
    sums: dict[int, list[int]] = {root: [0] * len(names)}
    counts = Counts()
    for node in order:
        reach = paths.pop(node, 0)
        length = lengths.pop(node, 0)
        carried = sums.pop(node, None)
        if not reach or carried is None:
            continue
        data = graph.nodes[node]
        if data["finished"]:
            k = data["crashes"]
            counts.scenarios[k] = counts.scenarios.get(k, 0) + reach
            counts.steps[k] = counts.steps.get(k, 0) + length
            totals = counts.measures.setdefault(k, {name: 0 for name in measures})
            for name, measure in measures.items():
                totals[name] += reach * measure(data["state"])
            summed = counts.counters.setdefault(k, {name: 0 for name in names})
            for name, value in zip(names, carried, strict=True):
                summed[name] += value
        for _, target, deltas in graph.out_edges(node, data="deltas"):
            paths[target] = paths.get(target, 0) + reach
            lengths[target] = lengths.get(target, 0) + length + reach
            into = sums.setdefault(target, [0] * len(names))
            for i, name in enumerate(names):
                into[i] += carried[i] + deltas.get(name, 0) * reach
    return counts
