"""Scenario counts and summed metrics by counting paths, never by enumerating them.

A scenario is a path from the root to a finished node; its crash count is that node's. One
forward pass in topological order carries, for every node, the number of paths that reach it
and the sum over those paths of each counter (a counter's delta on an edge is added once per
path through the edge). At a finished node the paths end: they add to the scenarios of its
crash count, and the node's measures count once per path. Integers are exact at any size.
A `Summed` measure is its counter summed along each path instead (explorer/model.py): the
counter is carried like any other and reported as the measure, never as a counter.

The pass runs over flat arrays of node numbers (`crashsweep.explorer.core`), with the topological order
found by Kahn's algorithm on the same arrays; `count_paths` does the same for any networkx
graph by numbering its nodes first.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import add, mul
from typing import TYPE_CHECKING, Any

from crashsweep.explorer.core import Column
from crashsweep.explorer.model import ModelDefinitionError, Summed, summed_counters

if TYPE_CHECKING:  # networkx is imported where a graph is built: the row needs only the arrays
    import networkx as nx


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


class CycleFound(Exception):
    """The arrays hold a cycle: no topological order exists (the caller names the cycle)."""


@dataclass(frozen=True)
class Arrays:
    """A graph as arrays: node n's out-edges are offsets[n]:offsets[n+1] into targets and deltas."""

    states: Sequence[Any]
    crashes: Sequence[int]
    finished: Sequence[int]
    offsets: Sequence[int]
    targets: Sequence[int]
    deltas: Sequence[Mapping[str, int]]


def cycle_error(graph: nx.MultiDiGraph) -> ModelDefinitionError:
    """The model error for a state graph with a cycle, naming one node on it."""
    import networkx as nx  # only to name a cycle, when there is one

    cycle = nx.find_cycle(graph)
    return ModelDefinitionError(
        f"the state graph has a cycle ({len(cycle)} edges, through node {cycle[0][0]}): path counting "
        "needs every step to make progress; record the progress in the state"
    )


def count_paths(graph: nx.MultiDiGraph, root: int, measures: Mapping[str, Callable[[Any], int]]) -> Counts:
    """Count root-to-finished paths per crash count of a networkx graph, summing counters and measures."""
    number = {node: n for n, node in enumerate(graph.nodes)}
    offsets, targets, deltas = [0], [], []
    for node in graph.nodes:
        for _, target, data in graph.out_edges(node, data=True):
            targets.append(number[target])
            summed = data.get("summed")
            deltas.append({**data["deltas"], **summed} if summed else data["deltas"])
        offsets.append(len(targets))
    data = [graph.nodes[node] for node in graph.nodes]
    states, crashes, finished = ([d[key] for d in data] for key in ("state", "crashes", "finished"))
    arrays = Arrays(states, crashes, finished, offsets, targets, deltas)
    try:
        return count_arrays(arrays, number[root], measures)
    except CycleFound:
        raise cycle_error(graph) from None


def count_arrays(graph: Arrays, root: int, measures: Mapping[str, Callable[[Any], int]]) -> Counts:
    """Count root-to-finished paths per crash count over arrays; CycleFound if there is a cycle.

    Kahn's algorithm: a node is counted once every edge into it has been, so the pass needs
    no separate topological sort, and a node's figures are dropped as soon as it is counted.
    """
    nodes = len(graph.states)
    offsets, targets = graph.offsets, graph.targets
    waiting = array("I", bytes(4 * nodes))  # edges into each node not yet counted
    for target in targets:
        waiting[target] += 1
    numbers, table = _numbered(graph.deltas)
    names = sorted({name for delta in table for name in delta})
    # Each distinct set of increments as a vector over `names` (None: no increments).
    vectors = [tuple(delta.get(name, 0) for name in names) if delta else None for delta in table]
    paths: list[int] = [0] * nodes
    lengths: list[int] = [0] * nodes  # summed lengths of the paths that reach a node
    sums: list[tuple[int, ...] | None] = [None] * nodes  # never changed in place, so shared freely
    paths[root], sums[root] = 1, (0,) * len(names)
    tally = _Tally(measures, names)
    ready = [node for node in range(nodes) if not waiting[node]]
    finished, crashes, states = graph.finished, graph.crashes, graph.states
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        reach, length, summed = paths[node], lengths[node], sums[node]
        paths[node] = lengths[node] = 0
        sums[node] = None
        if not reach or summed is None:  # no path reaches it (only in a graph built by hand): nothing passed on
            _pass_over(node, offsets, targets, waiting, ready)
            continue
        if finished[node]:
            tally.finish(crashes[node], states[node], reach, length, summed)
        longer = length + reach  # each path one edge longer
        for edge in range(offsets[node], offsets[node + 1]):
            target = targets[edge]
            left = waiting[target] - 1
            waiting[target] = left
            if not left:
                ready.append(target)
            paths[target] += reach
            lengths[target] += longer
            into, vector = sums[target], vectors[numbers[edge]]
            base = summed if into is None else tuple(map(add, into, summed))
            if vector is not None:  # base + reach * vector, element by element (all in C: the hot loop)
                base = tuple(map(add, base, map(mul, vector, repeat(reach, len(vector)))))
            sums[target] = base
    if done < nodes:
        raise CycleFound
    return tally.counts()


def _pass_over(
    node: int, offsets: Sequence[int], targets: Sequence[int], waiting: array[int], ready: list[int]
) -> None:
    """Count `node`'s out-edges as done without passing anything on (no path reaches it)."""
    for edge in range(offsets[node], offsets[node + 1]):
        target = targets[edge]
        waiting[target] -= 1
        if not waiting[target]:
            ready.append(target)


def _numbered(deltas: Sequence[Mapping[str, int]]) -> tuple[Sequence[int], list[Mapping[str, int]]]:
    """Each edge's deltas as a number into a table of the distinct mappings (by identity)."""
    if isinstance(deltas, Column):
        return deltas.numbers, deltas.table
    number: dict[int, int] = {}
    table: list[Mapping[str, int]] = []
    numbers = array("I")
    for delta in deltas:
        known = number.get(id(delta))
        if known is None:
            known = number[id(delta)] = len(table)
            table.append(delta)
        numbers.append(known)
    return numbers, table


class _Tally:
    """The figures of the paths that end at finished nodes, per crash count.

    `names` are the counters carried (in the order of the carried sums); a `Summed` measure's
    counter among them is reported as that measure, not as a counter.
    """

    def __init__(self, measures: Mapping[str, Callable[[Any], int]], names: list[str]) -> None:
        hidden = summed_counters(measures)
        self.measures = {name: m for name, m in measures.items() if not isinstance(m, Summed)}
        self.order = list(measures)  # the measures in the model's order, as reported
        # name of a summed measure -> the place of its counter among the carried sums (None: never incremented)
        self.summed = {
            name: (names.index(m.counter) if m.counter in names else None)
            for name, m in measures.items()
            if isinstance(m, Summed)
        }
        self.names = [name for name in names if name not in hidden]
        self.shown = [place for place, name in enumerate(names) if name not in hidden]
        self.scenarios: dict[int, int] = {}
        self.steps: dict[int, int] = {}
        self.measured: dict[int, dict[str, int]] = {}
        self.counters: dict[int, dict[str, int]] = {}

    def finish(self, k: int, state: Any, reach: int, length: int, carried: tuple[int, ...]) -> None:
        """`reach` paths of summed length `length` and summed counters `carried` end at `state`."""
        self.scenarios[k] = self.scenarios.get(k, 0) + reach
        self.steps[k] = self.steps.get(k, 0) + length
        totals = self.measured.setdefault(k, dict.fromkeys(self.order, 0))
        for name, measure in self.measures.items():
            totals[name] += reach * measure(state)
        for name, place in self.summed.items():
            if place is not None:
                totals[name] += carried[place]
        summed = self.counters.setdefault(k, dict.fromkeys(self.names, 0))
        for name, place in zip(self.names, self.shown, strict=True):
            summed[name] += carried[place]

    def counts(self) -> Counts:
        """The figures, in order of crash count."""
        return Counts(
            dict(sorted(self.scenarios.items())),
            dict(sorted(self.measured.items())),
            dict(sorted(self.counters.items())),
            dict(sorted(self.steps.items())),
        )
