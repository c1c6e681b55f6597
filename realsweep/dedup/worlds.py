"""The graph of real worlds as data: its nodes and edges, and the scenarios read off it.

graph.py builds it; here are what it holds and how a result is read from it. A node is a
world a process starts from, keyed by (digest, moves); a finished node is a final world
with the check's outcome. An edge carries the counters of its process (with one
`fault.<kind>` per fault move), the crash that ended it (if any) and its faults' labels.
Scenarios are root-to-finished paths: `scenarios` gives one per finished node (its source's
representative path, the one with the smallest crash indices, then fault labels), `every`
each path; the figures themselves are counted by paths (crashsweep.explorer.count_paths).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crashsweep.realsweep.values import Crash, Outcome, ScenarioResult

if TYPE_CHECKING:
    import networkx as nx


def _new_graph() -> nx.MultiDiGraph:
    """An empty graph; networkx is imported when a merging sweep starts, not with the CLI."""
    import networkx as nx

    return nx.MultiDiGraph()


MEASURES: Mapping[str, Callable[[Outcome], int]] = {
    "with_dups": lambda o: int(o.dups > 0),
    "dups": lambda o: o.dups,
    "missing": lambda o: o.missing,
    "applied": lambda o: o.applied,
    "never_finish": lambda o: int(bool(o.stuck)),
}
"""What `count_paths` sums over the scenarios' final worlds."""


@dataclass
class Node:
    """A world to start processes from, the path it was first reached by, and what is still to run."""

    id: int
    digest: str
    moves: int
    world: Any
    """The engine's handle of the saved world (`values.Workers`' W: a folder, or an archive under Ray); None until
    a leg that saved it is in."""
    path: tuple[Crash, ...]
    pending: int = 1
    points: tuple[str, ...] = ()


@dataclass
class Graph:
    """The graph being built (networkx), its nodes by (digest, moves), and the unreached attempts."""

    graph: nx.MultiDiGraph = field(default_factory=_new_graph)
    nodes: dict[tuple[str, int], Node] = field(default_factory=dict)
    by_id: dict[int, Node] = field(default_factory=dict)
    unreached: list[tuple[int, tuple[str, ...], Crash]] = field(default_factory=list)
    reached: int = 1
    saved: dict[int, set[str]] = field(default_factory=dict)
    """The digests of the nodes whose world is saved, by moves."""

    def add(self, key: tuple[str, int], world: Any, path: tuple[Crash, ...]) -> Node:
        node = Node(self.graph.number_of_nodes(), key[0], key[1], world, path)
        self.graph.add_node(node.id, finished=False, crashes=key[1], state=None)
        self.nodes[key] = self.by_id[node.id] = node
        return node


def scenarios(g: Graph) -> list[ScenarioResult]:
    """One scenario per final world: its source's representative path, then the finishing process's faults."""
    best = representatives(g)
    results = []
    for source, end, data in g.graph.edges(data=True):
        if g.graph.nodes[end]["finished"]:
            path, faults, counters = best[source]
            final = add(counters, data["deltas"])
            state, points = g.graph.nodes[end]["state"], g.by_id[source].points
            results.append(ScenarioResult(path, state, final, points, faults=faults + data["faults"]))
    return results


def unreached(g: Graph) -> list[ScenarioResult]:
    """The attempted crashes whose process ended before its point, each after its node's representative path."""
    best = representatives(g)
    return [
        ScenarioResult((*best[i][0], c), Outcome(), {}, (), unreached=len(best[i][0]) + 1, faults=best[i][1] + f)
        for i, f, c in g.unreached
    ]


_Path = tuple[tuple[Crash, ...], tuple[str, ...], dict[str, int]]
"""A path to a node: its crashes, its faults' labels, the counters summed along it."""


def representatives(g: Graph) -> dict[int, _Path]:
    """Each node's path with the smallest crash indices (then fault labels), and the counters summed along it.

    Edges go from k moves to more, so taking the nodes by moves settles every node's parents
    before the node.
    """
    best: dict[int, _Path] = {0: ((), (), {})}
    for node in sorted(g.by_id.values(), key=lambda n: n.moves):
        path, faults, counters = best[node.id]
        for _, child, data in g.graph.out_edges(node.id, data=True):
            if g.graph.nodes[child]["finished"]:
                continue
            crash = data.get("crash")
            candidate = ((*path, crash) if crash is not None else path, faults + data["faults"])
            known = best.get(child)
            if known is None or _order(*candidate) < _order(known[0], known[1]):
                best[child] = (*candidate, add(counters, data["deltas"]))
    return best


def _order(path: tuple[Crash, ...], faults: tuple[str, ...]) -> tuple[list[int], tuple[str, ...]]:
    return [c.index for c in path], faults


def every(g: Graph) -> Iterator[ScenarioResult]:
    """Every scenario: each path from the root to a final world, with the counters summed along it."""
    stack: list[tuple[int, tuple[Crash, ...], tuple[str, ...], dict[str, int]]] = [(0, (), (), {})]
    while stack:
        node, path, faults, counters = stack.pop()
        for _, target, data in g.graph.out_edges(node, data=True):
            summed = add(counters, data["deltas"])
            moved = faults + data["faults"]
            if g.graph.nodes[target]["finished"]:
                state = g.graph.nodes[target]["state"]
                yield ScenarioResult(path, state, summed, g.by_id[node].points, faults=moved)
            else:
                crash = data.get("crash")
                stack.append((target, (*path, crash) if crash is not None else path, moved, summed))


def most(g: Graph, counter: str) -> int:
    """The most of `counter` summed along any one path from the empty world to a final world (a worst scenario).

    Edges go from k moves to more, so taking the nodes by moves settles a node's best before
    its edges are followed (as `representatives`); the baseline's path is one of the paths.
    """
    best: dict[int, int] = {0: 0}
    top = 0
    for node in sorted(g.by_id.values(), key=lambda n: n.moves):
        here = best.get(node.id)
        if here is None:
            continue
        for _, child, data in g.graph.out_edges(node.id, data=True):
            total = here + data["deltas"].get(counter, 0)
            if g.graph.nodes[child]["finished"]:
                top = max(top, total)
            elif total > best.get(child, -1):
                best[child] = total
    return top


def add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {name: a.get(name, 0) + b.get(name, 0) for name in sorted({*a, *b})}
