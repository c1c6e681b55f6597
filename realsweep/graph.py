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

Faults (spec/FAULTS.md, nemesis.py) are moves too, so a node is keyed by its moves (crashes
and faults). A process from a node may suffer faults (lost-reply, wrong-answer: told through
its environment) before it ends or is killed at a later point: each such process is an edge
carrying its faults. A new node that is a restart whose tracker remembers keys gets, under
key-expiry, one more edge: to the same world with every key forgotten (tracker_store).

The representative of a final world is its path with the smallest crash indices, so the
counterexample is the one a sweep of every scenario names first. Where worlds never repeat
(a program that writes timestamps, with no state key), the graph is a tree and the sweep runs
every scenario, still with fewer processes (a shared prefix is run once). The graph's data
and the scenarios read off it are worlds.py's.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from crashsweep.explorer.counting import count_paths
from crashsweep.realsweep import digest, worlds
from crashsweep.realsweep.nemesis import ACCEPTED, Fault, restart_fault
from crashsweep.realsweep.runner import Live, Runner, Step
from crashsweep.realsweep.scenarios import Crash, Outcome, Progress, Scenario, SweepError, SweepResult
from crashsweep.realsweep.snapshot import read_counters
from crashsweep.realsweep.tracker_store import KEYS_TABLE, forget_keys
from crashsweep.realsweep.worlds import Graph, Node

_Task = tuple[Any, ...]
"""A method of _Sweep and its arguments, to run on the pool."""
Faults = tuple[Fault, ...]


class _Sweep:
    """Runs the node expansions on a pool of threads; see the module docstring."""

    def __init__(self, runner: Runner, progress: Progress | None) -> None:
        self.runner, self.progress, self.depth = runner, progress, runner.options.depth
        self.g = Graph()
        self.done = self.known = 0
        self.pool = ThreadPoolExecutor(max_workers=runner.options.workers, thread_name_prefix="world")
        self.pending: set[Future[list[_Task]]] = set()

    def run(self) -> None:
        root = self.runner.root / "worlds" / "root"
        (root / digest.FILES).mkdir(parents=True)
        node = self.g.add((digest.digest(digest.World()), 0), root, ())
        self._submit(self._end, node, ())
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

    def _folder(self) -> Path:
        """A new folder name for a saved world."""
        with self.g.lock:
            return self.runner.root / "worlds" / f"w{next(self.g.folders)}"

    def _end(self, node: Node, faults: Faults) -> list[_Task]:
        """The process from `node` that suffers `faults` and runs to the end: the finished node, its edge, children.

        Below the depth, the children are a crash at each point after its last fault (with
        snapshots, the worlds it had at those points, `_at_point`; else, or when the program
        did not pause at its points, a process killed at each, `_crash`) and, for each fault
        the nemesis finds open after its last one, the same process suffering that one too.
        """
        below = node.moves + len(faults) < self.depth
        after = faults[-1].position if faults else (0, 0)
        found: list[_Task] = []
        at_point = None
        if below and self.runner.options.snapshots:

            def at_point(index: int, live: Live) -> None:
                if index > after[0]:
                    found.extend(self._at_point(node, faults, index, live))

        step = self.runner.step(node.folder, node.digest, node.path, None, at_point, faults)
        try:
            _struck(node, step, faults)
            outcome = self._check(node, step)
        finally:
            self._forget(step)
        if step.snapshots not in (0, len(step.points)):
            raise SweepError(f"scenario {_code(node.path)}: paused at {step.snapshots} of {len(step.points)} points")
        crashes = [Crash(i, p, step.points[:i].count(p)) for i, p in enumerate(step.points, start=1) if i > after[0]]
        children = crashes if below and not step.snapshots else []
        chances = self.runner.nemesis.chances(step.points, step.pauses, after) if below else []
        with self.g.lock:
            if not faults:
                node.points = step.points
            end = self.g.graph.number_of_nodes()
            self.g.graph.add_node(end, finished=True, crashes=node.moves + len(faults), state=outcome)
            self.g.graph.add_edge(node.id, end, deltas=_deltas(step.counters, faults), faults=_labels(faults))
            node.pending += len(children) + len(chances) - 1
        self._release(node)
        return (
            found
            + [(self._crash, node, faults, crash) for crash in children]
            + [(self._end, node, (*faults, fault)) for fault in chances]
        )

    def _at_point(self, node: Node, faults: Faults, index: int, live: Live) -> list[_Task]:
        """The world of a process from `node` stopped at its point `index`: an edge, and a node if new.

        Only a new world is saved (files copied, the space backed up) while the process waits.
        """
        points = live.points_log.read_text(encoding="utf-8").splitlines()[:index]
        crash = Crash(index, points[-1], points.count(points[-1]))
        world = digest.capture(live.workdir, live.space)
        counters = _deltas(read_counters(live.counters_log), faults)
        child = self._join(node, faults, crash, world, counters)
        if child is None:
            return []
        digest.save(live.workdir, live.space, child.folder)
        return self._tasks(child, world)

    def _check(self, node: Node, step: Step) -> Outcome:
        """The check's outcome of the final world the step left."""
        try:
            outcome = self.runner.check(Scenario(node.path, step.workdir, step.tracker))
        except Exception as error:  # the user's check: report which scenario it failed on
            where = f"scenario {_code(node.path)}"
            raise SweepError(f"{where}: the check failed: {type(error).__name__}: {error}") from error
        if not isinstance(outcome, Outcome):
            raise SweepError(f"the check returned {type(outcome).__name__}, not crashsweep.realsweep.engine.Outcome")
        return outcome

    def _crash(self, node: Node, faults: Faults, crash: Crash) -> list[_Task]:
        """A process from `node` that suffers `faults` and is killed for real at `crash`; its world joins the graph."""
        step = self.runner.step(node.folder, node.digest, node.path, crash, None, faults)
        try:
            if step.unreached:
                with self.g.lock:
                    self.g.unreached.append((node.id, _labels(faults), crash))
                return []
            _struck(node, step, faults)
            world = digest.capture(step.workdir, step.space)
            child = self._join(node, faults, crash, world, _deltas(step.counters, faults))
            if child is None:
                return []
            digest.save(step.workdir, step.space, child.folder)
            return self._tasks(child, world)
        finally:
            self._forget(step)
            with self.g.lock:
                node.pending -= 1
            self._release(node)

    def _expire(self, node: Node) -> list[_Task]:
        """key-expiry before the restart from `node`: the same world with every key forgotten, one move more."""
        folder = self._folder()
        try:
            shutil.copytree(node.folder, folder, symlinks=True)
            forget_keys(folder / digest.TRACKER_FILE)
            world = digest.read_world(folder)
            fault = restart_fault()
            key = self._key(world, node.moves + 1)
            with self.g.lock:
                self.g.reached += 1
                child = self.g.nodes.get(key)
                new = child is None
                if child is None:
                    child = self.g.add(key, folder, node.path)
                self.g.graph.add_edge(node.id, child.id, deltas={fault.counter: 1}, faults=(fault.label,))
            if not new:
                shutil.rmtree(folder, ignore_errors=True)
                return []
            return self._tasks(child, world)
        finally:
            with self.g.lock:
                node.pending -= 1
            self._release(node)

    def _key(self, world: digest.World, moves: int) -> tuple[str, int]:
        key_fn = self.runner.options.state_key
        return digest.digest(world if key_fn is None else key_fn(world)), moves

    def _join(
        self, node: Node, faults: Faults, crash: Crash, world: digest.World, counters: Mapping[str, int]
    ) -> Node | None:
        """The world left by a crash at `crash` from `node` after `faults`: an edge, and the new node (to be saved)."""
        key = self._key(world, node.moves + len(faults) + 1)
        folder = self._folder()
        with self.g.lock:
            self.g.reached += 1
            child = self.g.nodes.get(key)
            new = child is None
            if child is None:
                child = self.g.add(key, folder, (*node.path, crash))
            self.g.graph.add_edge(node.id, child.id, deltas=dict(counters), crash=crash, faults=_labels(faults))
        return child if new else None

    def _tasks(self, child: Node, world: digest.World) -> list[_Task]:
        """What a new node runs: its process to the end and, under key-expiry, its world with the keys forgotten."""
        tasks: list[_Task] = [(self._end, child, ())]
        if self.runner.nemesis.expires_keys and child.moves < self.depth and _holds_keys(world):
            with self.g.lock:
                child.pending += 1
            tasks.append((self._expire, child))
        return tasks

    def _release(self, node: Node) -> None:
        """Remove a node's saved world once no process is left to start from it."""
        with self.g.lock:
            last = node.pending == 0
        if last and not self.runner.options.keep:
            shutil.rmtree(node.folder, ignore_errors=True)

    def _forget(self, step: Step) -> None:
        if not self.runner.options.keep:
            shutil.rmtree(step.folder, ignore_errors=True)


def _labels(faults: Faults) -> tuple[str, ...]:
    return tuple(fault.label for fault in faults)


def _deltas(counters: Mapping[str, int], faults: Faults) -> dict[str, int]:
    """A process's counters, with one `fault.<kind>` per fault it suffered (as the model's fault edges count)."""
    deltas = dict(counters)
    for fault in faults:
        deltas[fault.counter] = deltas.get(fault.counter, 0) + 1
    return deltas


def _struck(node: Node, step: Step, faults: Faults) -> None:
    """Check that each fault struck where it was found: a program whose course changed is not deterministic."""
    for fault in faults:
        if fault.kind == "lost-reply":
            call = fault.point[len(ACCEPTED) :]
            struck = step.points[fault.index - 1 : fault.index + 1] == (fault.point, f"tool failed {call}")
        else:
            struck = step.pauses[fault.occurrence - 1 : fault.occurrence] == ((fault.index, fault.point),)
        if not struck:
            raise SweepError(
                f"scenario {_code(node.path)}: {fault.label} did not strike where the same process offered it: "
                "the program's points must depend only on what is on disk and at the tracker"
            )


def _holds_keys(world: digest.World) -> bool:
    """Whether the world's tracker remembers some idempotency key (key-expiry's chance)."""
    return any(rows for name, rows in world.tables if name == KEYS_TABLE)


def sweep(runner: Runner, progress: Progress | None, started: float) -> SweepResult:
    """Build the graph of real worlds from the empty one and count it; see the module docstring."""
    run = _Sweep(runner, progress)
    run.run()
    g = run.g
    counts = count_paths(g.graph, 0, worlds.MEASURES)
    results = list(worlds.every(g)) if runner.options.every else worlds.scenarios(g)
    results.sort(key=lambda r: (r.moves, [c.index for c in r.crashes], r.faults))
    baseline, scenarios = results[0], tuple(results[1:])
    if not baseline.points:
        raise SweepError(f"{runner.target.label}: the program passed no crash point; mark them with crashpoint(...)")
    if not scenarios:
        raise SweepError(
            "no process ever reached its chosen point: the program's points must depend only on what is on disk "
            "and at the tracker (no clock, no randomness)"
        )
    unreached = worlds.unreached(g)
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


def _code(path: tuple[Crash, ...]) -> str:
    return ",".join(str(c.index) for c in path) if path else "(uninterrupted)"
