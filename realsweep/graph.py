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
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from crashsweep.explorer.counting import count_paths
from crashsweep.realsweep import digest
from crashsweep.realsweep.runner import Live, Runner, Step
from crashsweep.realsweep.scenarios import Crash, Outcome, Progress, Scenario, ScenarioResult, SweepError, SweepResult
from crashsweep.realsweep.snapshot import read_counters

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
    folder: Path
    path: tuple[Crash, ...]
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
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, key: tuple[str, int], folder: Path, path: tuple[Crash, ...]) -> _Node:
        node = _Node(self.graph.number_of_nodes(), key[0], key[1], folder, path)
        self.graph.add_node(node.id, finished=False, crashes=key[1], state=None)
        self.nodes[key] = self.by_id[node.id] = node
        return node


_Task = tuple[Any, ...]
"""A method of _Sweep and its arguments, to run on the pool."""


class _Sweep:
    """Runs the node expansions on a pool of threads; see the module docstring."""

    def __init__(self, runner: Runner, progress: Progress | None) -> None:
        self.runner, self.progress, self.depth = runner, progress, runner.options.depth
        self.g = _Graph()
        self.done = self.known = 0
        self.pool = ThreadPoolExecutor(max_workers=runner.options.workers, thread_name_prefix="world")
        self.pending: set[Future[list[_Task]]] = set()

    def run(self) -> None:
        root = self.runner.root / "worlds" / "root"
        (root / digest.FILES).mkdir(parents=True)
        node = self.g.add((digest.digest(digest.World()), 0), root, ())
        self._submit(self._end, node)
        try:
            while self.pending:
                finished, self.pending = wait(self.pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    for task, *args in future.result():
                        self._submit(task, *args)
                    self.done += 1
                    if self.progress is not None:
                        self.progress(self.done, self.known)
        except BaseException:
            self.runner.stop.set()
            for future in self.pending:
                future.cancel()
            raise
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, task: Callable[..., list[_Task]], *args: object) -> None:
        """Start a task (from the main thread only: the workers return the tasks they make)."""
        self.known += 1
        self.pending.add(self.pool.submit(task, *args))

    def _end(self, node: _Node) -> list[_Task]:
        """The process from `node` to the end: the finished node, its edge, and the crash children.

        With snapshots, the children are the worlds it had at its points (`_at_point`); else
        (or when the program did not pause at its points: its own crash point code, another
        language) a process per point is killed there (`_crash`).
        """
        below = node.crashes < self.depth
        found: list[_Node] = []
        at_point = None
        if below and self.runner.options.snapshots:

            def at_point(index: int, live: Live) -> None:
                found.extend(self._at_point(node, index, live))

        step = self.runner.step(node.folder, node.digest, node.path, None, at_point)
        try:
            outcome = self._check(node, step)
        finally:
            self._forget(step)
        if step.snapshots not in (0, len(step.points)):
            raise SweepError(f"scenario {_code(node.path)}: paused at {step.snapshots} of {len(step.points)} points")
        crashes = [Crash(i, p, step.points[:i].count(p)) for i, p in enumerate(step.points, start=1)]
        children = crashes if below and not step.snapshots else []
        with self.g.lock:
            node.points = step.points
            end = self.g.graph.number_of_nodes()
            self.g.graph.add_node(end, finished=True, crashes=node.crashes, state=outcome)
            self.g.graph.add_edge(node.id, end, deltas=dict(step.counters))
            node.pending += len(children) - 1
        self._release(node)
        return [(self._end, child) for child in found] + [(self._crash, node, crash) for crash in children]

    def _at_point(self, node: _Node, index: int, live: Live) -> list[_Node]:
        """The world of a process from `node` stopped at its point `index`: an edge, and a node if new.

        Only a new world is saved (files copied, the space backed up) while the process waits.
        """
        points = live.points_log.read_text(encoding="utf-8").splitlines()[:index]
        crash = Crash(index, points[-1], points.count(points[-1]))
        world = digest.capture(live.workdir, live.space)
        folder = self.runner.root / "worlds" / f"n{node.id}-{index}"
        child = self._join(node, crash, world, read_counters(live.counters_log), folder)
        if child is None:
            return []
        digest.save(live.workdir, live.space, folder)
        return [child]

    def _check(self, node: _Node, step: Step) -> Outcome:
        """The check's outcome of the final world the step left."""
        try:
            outcome = self.runner.check(Scenario(node.path, step.workdir, step.tracker))
        except Exception as error:  # the user's check: report which scenario it failed on
            where = f"scenario {_code(node.path)}"
            raise SweepError(f"{where}: the check failed: {type(error).__name__}: {error}") from error
        if not isinstance(outcome, Outcome):
            raise SweepError(f"the check returned {type(outcome).__name__}, not crashsweep.realsweep.engine.Outcome")
        return outcome

    def _crash(self, node: _Node, crash: Crash) -> list[_Task]:
        """A process from `node` killed for real at `crash`; the world it left joins the graph."""
        step = self.runner.step(node.folder, node.digest, node.path, crash)
        try:
            if step.unreached:
                with self.g.lock:
                    self.g.unreached.append((node.id, crash))
                return []
            world = digest.capture(step.workdir, step.space)
            folder = self.runner.root / "worlds" / f"n{node.id}-{crash.index}"
            child = self._join(node, crash, world, step.counters, folder)
            if child is None:
                return []
            digest.save(step.workdir, step.space, folder)
            return [(self._end, child)]
        finally:
            self._forget(step)
            with self.g.lock:
                node.pending -= 1
            self._release(node)

    def _join(
        self, node: _Node, crash: Crash, world: digest.World, counters: Mapping[str, int], folder: Path
    ) -> _Node | None:
        """The world left by a crash at `crash` from `node`: an edge, and the new node (to be saved in `folder`)."""
        key_fn = self.runner.options.state_key
        key = (digest.digest(world if key_fn is None else key_fn(world)), node.crashes + 1)
        with self.g.lock:
            self.g.reached += 1
            child = self.g.nodes.get(key)
            new = child is None
            if child is None:
                child = self.g.add(key, folder, (*node.path, crash))
            self.g.graph.add_edge(node.id, child.id, deltas=dict(counters), crash=crash)
        return child if new else None

    def _release(self, node: _Node) -> None:
        """Remove a node's saved world once no process is left to start from it."""
        with self.g.lock:
            last = node.pending == 0
        if last and not self.runner.options.keep:
            shutil.rmtree(node.folder, ignore_errors=True)

    def _forget(self, step: Step) -> None:
        if not self.runner.options.keep:
            shutil.rmtree(step.folder, ignore_errors=True)


def sweep(runner: Runner, progress: Progress | None, started: float) -> SweepResult:
    """Build the graph of real worlds from the empty one and count it; see the module docstring."""
    run = _Sweep(runner, progress)
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
    if runner.options.every:
        results = list(_every(g))
    results.sort(key=lambda r: (len(r.crashes), [c.index for c in r.crashes]))
    baseline, scenarios = results[0], tuple(results[1:])
    if not baseline.points:
        raise SweepError(f"{runner.target.label}: the program passed no crash point; mark them with crashpoint(...)")
    if not scenarios:
        raise SweepError(
            "no process ever reached its chosen point: the program's points must depend only on what is on disk "
            "and at the tracker (no clock, no randomness)"
        )
    unreached = tuple(
        ScenarioResult((*best[i][0], c), Outcome(), {}, (), unreached=len(best[i][0]) + 1) for i, c in g.unreached
    )
    return SweepResult(
        runner.options.depth,
        baseline,
        scenarios,
        runner.processes,
        time.monotonic() - started,
        tuple(sorted(unreached, key=lambda r: [c.index for c in r.crashes])),
        counts,
        (len(g.nodes), g.reached),
        runner.options.snapshots,
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


def _code(path: tuple[Crash, ...]) -> str:
    return ",".join(str(c.index) for c in path) if path else "(uninterrupted)"
