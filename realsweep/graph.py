"""The deduplicating real sweep: the graph of real worlds, counted by paths with the explorer's counting.

A node is (digest of a world, crashes so far): the world a process will start from. From a
node the sweep runs one process to the end (its final world is a finished node of its own,
whose outcome the check reads, and the points it passes are the node's crash points) and, below
the depth, one process killed for real at each of those points; the world a killed process
leaves is saved (digest.save) and named by its digest. A world already seen with the same
number of crashes is a node already known: the edge joins it and nothing more is run, as the
model's explorer merges histories that reach the same state. Every edge carries the counters
of its process; `crashsweep.explorer.count_paths` then counts the scenarios (root-to-finished paths) per
crash count and sums their counters and outcomes, exactly as a sweep of every scenario would.

The representative of a final world is its path with the smallest crash indices, so the
counterexample is the one a sweep of every scenario names first. Where worlds never repeat
(a program that writes timestamps, with no state key), the graph is a tree and the sweep runs
every scenario, still with fewer processes (a shared prefix is run once).

The graph stays in the calling process; the processes are units of work (legs.py) that a
`Workers` runs (workers.py: threads here, or Ray actors across a cluster) and that report
the worlds they left, so the graph and its counts do not depend on where they ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from crashsweep.explorer.counting import count_paths
from crashsweep.realsweep import digest
from crashsweep.realsweep.legs import Child, Leg, Unit, code
from crashsweep.realsweep.scenarios import (
    Crash,
    Outcome,
    Progress,
    ScenarioResult,
    SweepError,
    SweepOptions,
    SweepResult,
)
from crashsweep.realsweep.workers import Workers

MEASURES: Mapping[str, Callable[[Outcome], int]] = {
    "with_dups": lambda o: int(o.dups > 0),
    "dups": lambda o: o.dups,
    "missing": lambda o: o.missing,
    "applied": lambda o: o.applied,
}
"""What `count_paths` sums over the scenarios' final worlds."""


@dataclass
class _Node:
    """A world to start processes from, the path it was first reached by, and what is still to run."""

    id: int
    digest: str
    crashes: int
    path: tuple[Crash, ...]
    world: Any = None
    """The engine's handle of the saved world (workers.py); None until a leg that saved it is in."""
    pending: int = 1
    points: tuple[str, ...] = ()


@dataclass
class _Graph:
    """The graph being built (networkx), its nodes by (digest, crashes), and the unreached attempts."""

    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    nodes: dict[tuple[str, int], _Node] = field(default_factory=dict)
    by_id: dict[int, _Node] = field(default_factory=dict)
    unreached: list[tuple[int, Crash]] = field(default_factory=list)
    reached: int = 1
    saved: dict[int, set[str]] = field(default_factory=dict)
    """The digests of the nodes whose world is saved, by crash count."""

    def add(self, key: tuple[str, int], path: tuple[Crash, ...]) -> _Node:
        node = _Node(self.graph.number_of_nodes(), key[0], key[1], path)
        self.graph.add_node(node.id, finished=False, crashes=key[1], state=None)
        self.nodes[key] = self.by_id[node.id] = node
        return node


class _Sweep:
    """Builds the graph from the legs the workers run (legs.py); see the module docstring.

    Only this (the calling) thread touches the graph: the workers report, it joins.
    """

    def __init__(self, workers: Workers[Any], options: SweepOptions, progress: Progress | None) -> None:
        self.workers, self.options, self.progress, self.depth = workers, options, progress, options.depth
        self.g = _Graph()
        self.done = self.known = 0
        self.pending: dict[Future[Leg[Any]], tuple[_Node, Crash | None]] = {}

    def run(self) -> None:
        node = self.g.add((digest.digest(digest.World()), 0), ())
        self._saved(node, self.workers.empty())
        try:
            while self.pending:
                finished, _ = wait(self.pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    node, crash = self.pending.pop(future)
                    leg = future.result()
                    if crash is None:
                        self._end(node, leg)
                    else:
                        self._crash(node, crash, leg)
                    self.done += 1
                    if self.progress is not None:
                        self.progress(self.done, self.known)
        except BaseException:
            self.workers.stop()
            for future in self.pending:
                future.cancel()
            raise

    def _submit(self, node: _Node, crash: Crash | None) -> None:
        """Start a process from `node`: to the end (`crash` None), or killed at `crash`."""
        snapshots = crash is None and node.crashes < self.depth and self.options.snapshots
        unit = Unit(node.id, node.digest, node.path, node.world, crash, snapshots)
        known = self.g.saved.setdefault(node.crashes + 1, set())
        self.known += 1
        self.pending[self.workers.leg(unit, known)] = (node, crash)

    def _saved(self, node: _Node, world: object) -> None:
        """The world of `node` is saved: start the process to the end from it."""
        node.world = world
        self.g.saved.setdefault(node.crashes, set()).add(node.digest)
        self._submit(node, None)

    def _end(self, node: _Node, leg: Leg[Any]) -> None:
        """The process from `node` to the end: the finished node, its edge, and the crashed worlds.

        With snapshots, the crashed worlds are those it had at its points; else (or when the
        program did not pause at its points: its own crash point code, another language) a
        process per point is killed there.
        """
        if leg.snapshots not in (0, len(leg.points)):
            raise SweepError(f"scenario {code(node.path)}: paused at {leg.snapshots} of {len(leg.points)} points")
        below = node.crashes < self.depth
        crashes = [Crash(i, p, leg.points[:i].count(p)) for i, p in enumerate(leg.points, start=1)]
        kills = crashes if below and not leg.snapshots else []
        node.points = leg.points
        end = self.g.graph.number_of_nodes()
        self.g.graph.add_node(end, finished=True, crashes=node.crashes, state=leg.outcome)
        self.g.graph.add_edge(node.id, end, deltas=dict(leg.counters or {}))
        node.pending += len(kills) - 1
        for child in leg.children:
            self._join(node, child)
        for crash in kills:
            self._submit(node, crash)
        self._release(node)

    def _crash(self, node: _Node, crash: Crash, leg: Leg[Any]) -> None:
        """A process from `node` killed for real at `crash`: the world it left joins the graph."""
        if leg.unreached:
            self.g.unreached.append((node.id, crash))
        for child in leg.children:
            self._join(node, child)
        node.pending -= 1
        self._release(node)

    def _join(self, node: _Node, child: Child[Any]) -> None:
        """A world a crash from `node` left: an edge, a node if new, its process to the end once it is saved."""
        key = (child.digest, node.crashes + 1)
        self.g.reached += 1
        target = self.g.nodes.get(key)
        if target is None:
            target = self.g.add(key, (*node.path, child.crash))
        self.g.graph.add_edge(node.id, target.id, deltas=dict(child.counters), crash=child.crash)
        if child.world is None:
            return
        if target.world is None:
            self._saved(target, child.world)
        else:  # another leg saved it first
            self.workers.release(child.world)

    def _release(self, node: _Node) -> None:
        """Forget a node's saved world once no process is left to start from it."""
        if node.pending == 0:
            self.workers.release(node.world)


def sweep(
    workers: Workers[Any], options: SweepOptions, label: str, progress: Progress | None, started: float
) -> SweepResult:
    """Build the graph of real worlds from the empty one and count it; see the module docstring."""
    run = _Sweep(workers, options, progress)
    run.run()
    g = run.g
    counts = count_paths(g.graph, 0, MEASURES)
    best = _representatives(g)
    ends = {source: target for source, target in g.graph.edges() if g.graph.nodes[target]["finished"]}
    results = []
    for node in g.by_id.values():
        path, counters = best[node.id]
        end = ends[node.id]
        final = _add(counters, g.graph.get_edge_data(node.id, end)[0]["deltas"])
        results.append(ScenarioResult(path, g.graph.nodes[end]["state"], final, node.points))
    if options.every:
        results = list(_every(g))
    results.sort(key=lambda r: (len(r.crashes), [c.index for c in r.crashes]))
    baseline, scenarios = results[0], tuple(results[1:])
    if not baseline.points:
        raise SweepError(f"{label}: the program passed no crash point; mark them with crashpoint(...)")
    if not scenarios:
        raise SweepError(
            "no process ever reached its chosen point: the program's points must depend only on what is on disk "
            "and at the tracker (no clock, no randomness)"
        )
    unreached = tuple(
        ScenarioResult((*best[i][0], c), Outcome(), {}, (), unreached=len(best[i][0]) + 1) for i, c in g.unreached
    )
    return SweepResult(
        options.depth,
        baseline,
        scenarios,
        workers.processes(),
        time.monotonic() - started,
        tuple(sorted(unreached, key=lambda r: [c.index for c in r.crashes])),
        counts,
        (len(g.nodes), g.reached),
        options.snapshots,
    )


def _representatives(g: _Graph) -> dict[int, tuple[tuple[Crash, ...], dict[str, int]]]:
    """Each node's path with the smallest crash indices, and the counters summed along it.

    Edges go from k crashes to k + 1, so taking the nodes by crash count settles every
    node's parents before the node.
    """
    best: dict[int, tuple[tuple[Crash, ...], dict[str, int]]] = {0: ((), {})}
    for node in sorted(g.by_id.values(), key=lambda n: n.crashes):
        path, counters = best[node.id]
        for _, child, data in g.graph.out_edges(node.id, data=True):
            crash = data.get("crash")
            if crash is None:
                continue
            candidate = (*path, crash)
            known = best.get(child)
            if known is None or [c.index for c in candidate] < [c.index for c in known[0]]:
                best[child] = (candidate, _add(counters, data["deltas"]))
    return best


def _every(g: _Graph) -> Iterator[ScenarioResult]:
    """Every scenario: each path from the root to a final world, with the counters summed along it."""
    stack: list[tuple[int, tuple[Crash, ...], dict[str, int]]] = [(0, (), {})]
    while stack:
        node, path, counters = stack.pop()
        for _, target, data in g.graph.out_edges(node, data=True):
            summed = _add(counters, data["deltas"])
            if g.graph.nodes[target]["finished"]:
                yield ScenarioResult(path, g.graph.nodes[target]["state"], summed, g.by_id[node].points)
            else:
                stack.append((target, (*path, data["crash"]), summed))


def _add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {name: a.get(name, 0) + b.get(name, 0) for name in sorted({*a, *b})}
