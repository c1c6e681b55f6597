"""The deduplicating real sweep: the graph of real worlds, counted by paths with the explorer's counting.

A node is (digest of a world, moves so far): the world a process will start from. From a
node the sweep runs one process to the end (its final world is a finished node of its own,
whose outcome the check reads, and the points it passes are the node's crash points) and, below
the depth, one process killed for real at each of those points; the world a killed process
leaves is saved (`world.save`) and named by its digest. A world already seen with the same
number of moves is a node already known: the edge joins it and nothing more is run, as the
model's explorer merges histories that reach the same state. Every edge carries the counters
of its process; `crashsweep.explorer.count_paths` then counts the scenarios (root-to-finished paths) per
move count and sums their counters and outcomes, exactly as a sweep of every scenario would.

Faults (spec/FAULTS.md, nemesis.py) are moves too, so a node is keyed by its moves (crashes
and faults). A process from a node may suffer faults (lost-reply, wrong-answer: told through
its environment) before it ends or is killed at a later point: each such process is an edge
carrying its faults. A new node that is a restart gets one more edge for each fault at a
restart open there (Nemesis.restart_chances): under key-expiry, when its tracker remembers
keys, to the same world with every key forgotten; under trim-context, when its checkpoint
holds a turn it can cut, to the world with the conversation cut (an expiry leg, process/units.py).
The world such a fault left is restarted, never struck again first: as in the model, whose
fault edge at a restart carries the restart, one fault strikes per restart.

The representative of a final world is its path with the smallest crash indices, so the
counterexample is the one a sweep of every scenario names first. Where worlds never repeat
(a program that writes timestamps, with no state key), the graph is a tree and the sweep runs
every scenario, still with fewer processes (a shared prefix is run once). The graph's data
and the scenarios read off it are worlds.py's.

The graph stays in the calling process; the processes are units of work (process/units.py) that a
`Workers` runs (engines/local.py: threads here; engines/ray.py: Ray actors across a cluster) and that report
the worlds they left and the faults they could suffer next, so the graph and its counts do
not depend on where they ran.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from crashsweep.explorer.counting import count_paths
from crashsweep.realsweep import world
from crashsweep.realsweep.dedup import worlds
from crashsweep.realsweep.dedup.worlds import Graph, Node
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis, restart_fault
from crashsweep.realsweep.process.units import code
from crashsweep.realsweep.values import (
    Child,
    Completions,
    Crash,
    Leg,
    Progress,
    ScenarioResult,
    SweepError,
    SweepOptions,
    SweepResult,
    Unit,
    Workers,
)
from crashsweep.spec import metrics

Faults = tuple[Fault, ...]


class _Sweep:
    """Builds the graph from the legs the workers run (process/units.py); see the module docstring.

    Only this (the calling) thread touches the graph: the workers report, it joins.
    """

    def __init__(
        self, workers: Workers[Any], options: SweepOptions, nemesis: Nemesis, progress: Progress | None
    ) -> None:
        self.workers, self.options, self.nemesis, self.progress = workers, options, nemesis, progress
        self.depth = options.depth
        self.g = Graph()
        self.done = self.known = 0
        self.pending: dict[Future[Leg[Any]], tuple[Node, Unit[Any]]] = {}
        self.finished: Completions[Leg[Any]] = Completions()

    def run(self) -> None:
        node = self.g.add((world.digest(world.World()), 0), None, ())
        self._saved(node, self.workers.empty(), ())
        try:
            while self.pending:
                future = self.finished.next()
                node, unit = self.pending.pop(future)
                leg = future.result()
                if unit.expire:
                    self._expired(node, unit, leg)
                elif unit.crash is None:
                    self._end(node, unit.faults, leg)
                else:
                    self._crash(node, unit.faults, unit.crash, leg)
                self.done += 1
                if self.progress is not None:
                    self.progress(self.done, self.known)
        except BaseException as stopped:
            self.workers.stop()
            for future in self.pending:
                future.cancel()
            if isinstance(stopped, KeyboardInterrupt):
                self._keep_known()
            raise

    def _keep_known(self) -> None:
        """An interrupted sweep: each scenario whose final world is known, to `options.finished` (the baseline first).

        Each is read off the graph so far as at the end (`worlds.scenarios` or `every`): a path
        that was run, from the empty world to a final world whose outcome the check gave, and the
        counters along it. Its representative is the smallest path known so far, which a whole
        graph may improve on; a world reached but not yet run to its end is no scenario yet.
        """
        if self.options.finished is None:
            return
        known = list(worlds.every(self.g)) if self.options.every else worlds.scenarios(self.g)
        known.sort(key=_order)
        for result in known:
            self.options.finished(result)

    def _submit(self, node: Node, crash: Crash | None, faults: Faults = (), restart: str = "") -> None:
        """Start a unit from `node`: a process after `faults`, to the end or killed at `crash`; or a fault at a restart.

        `restart`: no process, the node's world as that fault at a restart leaves it (key-expiry:
        every key forgotten; trim-context: the checkpoint's conversation cut).
        """
        below = node.moves + len(faults) < self.depth
        expire = bool(restart)
        snapshots = crash is None and not expire and below and self.options.snapshots
        unit = Unit(node.id, node.digest, node.path, node.world, crash, snapshots, faults, node.moves, expire)
        unit = replace(unit, restart=restart) if expire else unit
        known = self.g.saved.setdefault(unit.level, set())
        self.known += 1
        self.pending[self.finished.add(self.workers.leg(unit, known))] = (node, unit)

    def _saved(self, node: Node, world: object, restarts: tuple[str, ...]) -> None:
        """The world of `node` is saved: start the process to the end from it, and each fault at a restart open there.

        `restarts`: the enabled faults at a restart (key-expiry, trim-context) that may strike
        before a restart from this world (the leg that saved it read them off it).
        """
        node.world = world
        self.g.saved.setdefault(node.moves, set()).add(node.digest)
        self._submit(node, None)
        for restart in restarts if node.moves < self.depth else ():
            node.pending += 1
            self._submit(node, None, restart=restart)

    def _end(self, node: Node, faults: Faults, leg: Leg[Any]) -> None:
        """The process from `node` that suffered `faults` and ran to the end: the finished node, its edge, and more.

        Below the depth, more is a crash at each point after its last fault that the options try (with snapshots,
        the worlds it had at those points; else, or when the program did not pause at its
        points: its own crash point code, another language, a process killed at each) and,
        for each fault the nemesis found open after its last one, the same process suffering
        that one too.
        """
        if leg.snapshots not in (0, len(leg.points)):
            raise SweepError(f"scenario {code(node.path)}: paused at {leg.snapshots} of {len(leg.points)} points")
        below = node.moves + len(faults) < self.depth
        after = faults[-1].index if faults else 0
        if node.moves == 0 and not faults:  # the uninterrupted run
            self.options.check_listed(leg.points)
        crashes = [Crash(i, p, leg.points[:i].count(p)) for i, p in enumerate(leg.points, start=1) if i > after]
        crashes = [crash for crash in crashes if self.options.tries(crash)]
        kills = crashes if below and not leg.snapshots else []
        chances = leg.chances if below else ()
        if not faults:
            node.points = leg.points
        end = self.g.graph.number_of_nodes()
        self.g.graph.add_node(end, finished=True, crashes=node.moves + len(faults), state=leg.outcome)
        self.g.graph.add_edge(node.id, end, deltas=_deltas(leg.counters or {}, faults), faults=_labels(faults))
        node.pending += len(kills) + len(chances) - 1
        for child in leg.children:
            self._join(node, faults, child)
        for crash in kills:
            self._submit(node, crash, faults)
        for fault in chances:
            self._submit(node, None, (*faults, fault))
        self._release(node)

    def _crash(self, node: Node, faults: Faults, crash: Crash, leg: Leg[Any]) -> None:
        """A process from `node` that suffered `faults` and was killed for real at `crash`: its world joins."""
        if leg.unreached:
            self.g.unreached.append((node.id, _labels(faults), crash))
        for child in leg.children:
            self._join(node, faults, child)
        node.pending -= 1
        self._release(node)

    def _expired(self, node: Node, unit: Unit[Any], leg: Leg[Any]) -> None:
        """A fault at the restart from `node` (key-expiry, trim-context): the world it left, one move more."""
        fault = restart_fault(unit.restart)
        for child in leg.children:
            self._add(node, node.moves + 1, node.path, child, {fault.counter: 1}, {"faults": (fault.label,)})
        node.pending -= 1
        self._release(node)

    def _join(self, node: Node, faults: Faults, child: Child[Any]) -> None:
        """A world a crash from `node` after `faults` left: an edge, a node if new, its units once it is saved."""
        assert child.crash is not None, "a crash leaves this world"
        labels = {"crash": child.crash, "faults": _labels(faults)}
        moves = node.moves + len(faults) + 1
        self._add(node, moves, (*node.path, child.crash), child, _deltas(child.counters, faults), labels)

    def _add(
        self,
        node: Node,
        moves: int,
        path: tuple[Crash, ...],
        child: Child[Any],
        deltas: Mapping[str, int],
        labels: Mapping[str, object],
    ) -> None:
        """The edge from `node` to the child's world (of `moves` moves, first reached by `path`), a node if new."""
        key = (child.digest, moves)
        self.g.reached += 1
        target = self.g.nodes.get(key)
        if target is None:
            target = self.g.add(key, None, path)
        self.g.graph.add_edge(node.id, target.id, deltas=dict(deltas), **labels)
        if child.world is None:
            return
        if target.world is None:
            self._saved(target, child.world, child.restarts)
        else:  # another leg saved it first
            self.workers.release(child.world)

    def _release(self, node: Node) -> None:
        """Forget a node's saved world once no process is left to start from it."""
        if node.pending == 0:
            self.workers.release(node.world)


def _order(result: ScenarioResult) -> tuple[int, list[int], tuple[str, ...]]:
    """Scenarios' order: by moves, then crash indices, then faults (the uninterrupted run first)."""
    return result.moves, [c.index for c in result.crashes], result.faults


def _labels(faults: Faults) -> tuple[str, ...]:
    return tuple(fault.label for fault in faults)


def _deltas(counters: Mapping[str, int], faults: Faults) -> dict[str, int]:
    """A process's counters, with one `fault.<kind>` per fault it suffered (as the model's fault edges count)."""
    deltas = dict(counters)
    for fault in faults:
        deltas[fault.counter] = deltas.get(fault.counter, 0) + 1
    return deltas


def sweep(
    workers: Workers[Any],
    options: SweepOptions,
    nemesis: Nemesis,
    label: str,
    progress: Progress | None,
    started: float,
) -> SweepResult:
    """Build the graph of real worlds from the empty one and count it; see the module docstring."""
    run = _Sweep(workers, options, nemesis, progress)
    run.run()
    g = run.g
    counts = count_paths(g.graph, 0, worlds.MEASURES)
    results = list(worlds.every(g)) if options.every else worlds.scenarios(g)
    results.sort(key=_order)
    baseline, scenarios = results[0], tuple(results[1:])
    if not baseline.points:
        raise SweepError(f"{label}: the program passed no crash point; mark them with crashpoint(...)")
    if not scenarios:
        raise SweepError(
            "no process ever reached its chosen point: the program's points must depend only on what is on disk "
            "and at the tracker (no clock, no randomness)"
        )
    unreached = worlds.unreached(g)
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
        most_calls=worlds.most(g, metrics.MODEL_CALLS),
    )
