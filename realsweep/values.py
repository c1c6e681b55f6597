"""The sweep's values: the target, crashes, scenarios, outcomes, results, options and errors.

A `Target` says how to start one process of the program under test; a scenario is a tuple of
`Crash`es (process 1 dies at its point i, the restart at its point j, ...) after which a last
process runs to the end; the `Check` reads its final world into an `Outcome`. Users of the
engine import these from crashsweep.realsweep.sweep.

The seams live here too, beside the values they speak of, so that no layer imports the one
above it: a `Unit` of work and its `Leg` (run by process/units.py), the `Workers` that run
units (engines/) and the `Engine` that gives a sweep its workers.
"""

from __future__ import annotations

import os
import queue
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from crashsweep.realsweep.faults.key_expiry import KEY_EXPIRY
from crashsweep.realsweep.faults.nemesis import Fault
from crashsweep.realsweep.faults.power_loss import cut_words
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.spec.history import Event, History

if TYPE_CHECKING:  # not at run time: a swept process that imports these values need not load networkx
    from concurrent.futures import Future

    from crashsweep.explorer.counting import Counts
    from crashsweep.realsweep.faults.nemesis import Nemesis
    from crashsweep.realsweep.world import StateKey
    from crashsweep.spec.points_file import PointList


class SweepError(RuntimeError):
    """The sweep cannot go on: bad input, or a program that does not behave as a sweep needs."""


class TargetFailed(SweepError):
    """A process of the program failed by itself (not at its crash point): a finding about the program."""


@dataclass(frozen=True)
class Target:
    """How to start one process of the program: argv and extra environment.

    A Python program may also name `fork`, an entry point ("module:function", called with no
    arguments, `fork_argv` as its sys.argv[1:]) that a zygote can fork instead of starting
    `argv` (see zygote.py): the same program, without an interpreter start per process.
    `upgrade` is the version every restart runs (a deploy between a crash and its restart,
    spec/RETRIES.md section 2); the first process of a scenario runs this one.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    label: str = ""
    fork: str | None = None
    fork_argv: tuple[str, ...] = ()
    upgrade: Target | None = None

    def version(self, number: int) -> Target:
        """What process `number` of a scenario runs: this target first, its upgrade at every restart."""
        return self if number == 1 or self.upgrade is None else self.upgrade

    @classmethod
    def command(cls, line: str | Sequence[str]) -> Target:
        """A command line (a string is split like a shell would, without running a shell)."""
        argv = tuple(shlex.split(line)) if isinstance(line, str) else tuple(line)
        if not argv:
            raise SweepError("the target command is empty")
        return cls(argv, label=shlex.join(argv))

    @classmethod
    def entry_point(cls, spec: str, *, path: Iterable[str] = ()) -> Target:
        """A `module:function` entry point, run by `python -m crashsweep.realsweep.probe.entry`.

        `path` joins PYTHONPATH.
        """
        from crashsweep.realsweep.probe.entry import parse_entry_point
        from crashsweep.realsweep.tracker.service import package_pythonpath

        parse_entry_point(spec)
        pythonpath = os.pathsep.join([*path, package_pythonpath()])
        return cls(
            (sys.executable, "-m", "crashsweep.realsweep.probe.entry", spec),
            {"PYTHONPATH": pythonpath},
            spec,
            fork=spec,
        )


@dataclass(frozen=True)
class Crash:
    """A crash: at the `index`-th point (from 1) of the listing process, named `point`.

    The dying process is told the point by name and `occurrence` (its `occurrence`-th pass of
    `point`), which is the same point of the work even when threads list points in another
    order; for a program with one thread it is exactly the `index`-th point.
    """

    index: int
    point: str
    occurrence: int = 1

    @property
    def crash_at(self) -> str:
        """The value of CRASHSWEEP_CRASH_AT that makes a process die here ("2:point name")."""
        return f"{self.occurrence}:{self.point}"

    @property
    def label(self) -> str:
        """The point and, past the first, its occurrence: "saved#2"."""
        return self.point if self.occurrence == 1 else f"{self.point}#{self.occurrence}"


@dataclass(frozen=True)
class Scenario:
    """What a check sees of a finished scenario: its crashes, work directory and tracker."""

    crashes: tuple[Crash, ...]
    workdir: Path
    tracker: TrackerClient | None


@dataclass(frozen=True)
class Outcome:
    """What a check found in a scenario's final world.

    dups: effects beyond the first, over the writes (sum of max(0, effects - 1));
    missing: writes with no effect at all; applied: effects seen (a witness that the
    no-duplicate check had something to look at). `stuck` and `exit_status` are the sweep's, not
    the check's: why the last process could never go on (it exited with crashpoint.STUCK_STATUS:
    its last line of output; or it was a restart that could not recover: spec/POINTS.md 5), ""
    when it finished.
    """

    dups: int = 0
    missing: int = 0
    applied: int = 0
    stuck: str = ""
    exit_status: int = 0
    """A restart that could not recover (it exited with another status than 0 or STUCK_STATUS after
    a crash or a power cut): its exit status (a signal's: negative), and `stuck` says what it said
    last; 0 otherwise."""
    history: History | None = None
    """What the check saw, as a History (spec/HISTORY.md): the receiver's effects and, where the
    check reads them, the saved conversation and the approvals; the sweep adds how the scenario
    ended (realsweep/histories.py). None: a check that gave counts alone."""

    @classmethod
    def of(cls, effects: Iterable[str], expected: Iterable[str], history: History | None = None) -> Outcome:
        """The outcome when `effects` names the write behind each effect and `expected` lists the writes.

        Its history holds one effect event per effect, in order, beside `history`'s other events
        (a conversation, approvals) and facts.
        """
        seen = list(effects)
        wanted = list(expected)
        return cls(
            dups=sum(max(0, seen.count(write) - 1) for write in wanted),
            missing=sum(1 for write in wanted if write not in seen),
            applied=len(seen),
            history=with_effects(seen, wanted, history),
        )


Check = Callable[[Scenario], Outcome]

CANNOT_RECOVER = "cannot_recover"
"""The counter the sweep adds to a scenario whose restart could not recover (Outcome.exit_status):
summed over scenarios, by paths in a merging sweep, as the program's own counters are."""

UNSEEN_BY_COUNTS = "the check reads the receiver's effects only"


def with_effects(effects: Sequence[str], expected: Sequence[str], history: History | None = None) -> History:
    """`history` (or one that saw the effects alone) with an effect event for each of `effects` first."""
    events = tuple(
        Event("", 0, n, "ok", "effect", call=call, effect_id=f"#{n}", src="tracker")
        for n, call in enumerate(effects, 1)
    )
    if history is None:
        unseen = {"transcript": UNSEEN_BY_COUNTS, "approvals": UNSEEN_BY_COUNTS}
        return History(events, tuple(expected), (), frozenset({"effects", "status"}), unseen)
    return replace(history, events=(*events, *history.events), expected=tuple(expected))


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario run: its crashes, outcome, summed counters, and its last process's points."""

    crashes: tuple[Crash, ...]
    outcome: Outcome
    counters: Mapping[str, int]
    points: tuple[str, ...]
    unreached: int = 0
    """0, or the process (from 1) that ended normally without passing its chosen point: its
    threads took another course than the listing process's. Such a scenario did not happen as
    chosen: it has no outcome and is counted and listed apart."""
    faults: tuple[str, ...] = ()
    """The fault moves of the scenario (the labels of realsweep.faults' Fault), each one move beside the crashes."""
    beside: int = 0
    """Processes beside the crashes' and the last one's: a pause's restart, and the supervisor's
    restart when the last live process stopped (spec/FAULTS.md section 7). In a pause scenario
    `points` are the restart's (where the paused process may wake)."""
    pauses: tuple[tuple[int, str], ...] = ()
    """The last process's pauses (crashpoint.pause): where its faults that are no crash point,
    and its retry layers' chances, come (a sweep of every scenario reads the baseline's)."""

    @property
    def moves(self) -> int:
        """Crashes and faults: the moves of the adversary (spec/FAULTS.md section 1)."""
        return len(self.crashes) + len(self.faults)

    @property
    def code(self) -> str:
        """The scenario's crash indices, e.g. "5,12" (process 1 dies at point 5, the restart at 12)."""
        return ",".join([str(crash.index) for crash in self.crashes] + [f"[{fault}]" for fault in self.faults])

    def record(self) -> dict[str, object]:
        """The scenario as one JSON-ready record: crashes, processes, counters, outcome, unreached."""
        return {
            "code": self.code,
            "crashes": [{"index": c.index, "point": c.point, "occurrence": c.occurrence} for c in self.crashes],
            "processes": self.unreached or len(self.crashes) + 1 + self._power_cuts + self.beside,
            "counters": dict(sorted(self.counters.items())),
            "outcome": None if self.unreached else self._outcome(),
            "unreached": self.unreached,
            **({"faults": list(self.faults)} if self.faults else {}),
        }

    def _outcome(self) -> dict[str, object]:
        """The outcome's figures, and why the scenario never finishes when it does not (stuck, or a failed restart)."""
        o = self.outcome
        ended = {"stuck": o.stuck} if o.stuck else {}
        failed = {"exit_status": o.exit_status} if o.exit_status else {}
        return {"dups": o.dups, "missing": o.missing, "applied": o.applied, **ended, **failed}

    def end_words(self) -> str:
        """How its last process ended, after "restart": " to the end", stuck, or a failed restart's status."""
        o = self.outcome
        if o.exit_status:  # a restart that could not recover: it never finishes (`stuck` says what it said)
            return f", which cannot recover (exit status {o.exit_status})"
        return ", stuck for good" if o.stuck else " to the end"  # a stuck restart never finishes

    @property
    def _power_cuts(self) -> int:
        """Power cuts among the fault moves: each kills its process and a restart follows (spec/FAULTS.md 6)."""
        return sum(fault.startswith("power-loss ") for fault in self.faults)

    def describe(self) -> str:
        """The scenario in words."""
        steps = [f"crash at point {c.index} {c.point!r}" for c in self.crashes]
        end = self.end_words()
        if not steps and self._power_cuts:
            return "; ".join(self.faults) + f": {cut_words(self.faults)}, restart" + end
        if not steps and self.beside:  # a pause, or a timeout's new attempt beside the attempt given up on
            return "; ".join(self.faults) + ": each process goes on to its stop, a restart if the run is unfinished"
        if not steps:
            return "; ".join(self.faults) + ", the process goes on" + end
        faults = f" (faults: {'; '.join(self.faults)})" if self.faults else ""
        return ", restart, ".join(steps) + ", restart" + end + faults


@dataclass(frozen=True)
class SweepResult:
    """The baseline (no crash) and every scenario, ordered by crash count, then crash indices."""

    depth: int
    baseline: ScenarioResult
    scenarios: tuple[ScenarioResult, ...]
    processes: int
    seconds: float
    unreached: tuple[ScenarioResult, ...] = ()
    """The scenarios whose chosen point was not reached (ScenarioResult.unreached), apart."""
    counts: Counts | None = None
    """A deduplicating sweep's scenarios and figures counted by paths (crashsweep.explorer.count_paths over
    the graph of real worlds); `scenarios` then holds one scenario per final world, the one with
    the smallest crash indices. None: `scenarios` is every scenario."""
    worlds: tuple[int, int] = (0, 0)
    """A deduplicating sweep's worlds: (distinct, reached); (0, 0) for a sweep of every scenario."""
    snapshots: bool = False
    """The crashed worlds were snapshots of runs paused at their points, not left by kills."""
    points: str = "marked"
    """How the crash points were found (`--points`, probe/modes.py): marked, auto, marked,auto, syscalls."""
    setup: float = 0.0
    """Of `seconds`, those before the first process started: the tracker service, the zygote's
    interpreter and the program's imports (a framework's), its warm-up (0: not measured, on Ray)."""
    most_calls: int | None = None
    """A deduplicating sweep's most model calls of any one scenario, the baseline's included (worlds.most);
    None for a sweep of every scenario, whose `scenarios` hold them all."""
    listed: PointList | None = None
    """The points a crash was tried at (`--points from:FILE`: SweepOptions.listed); None: every point."""


@dataclass(frozen=True)
class SweepOptions:
    """How to sweep: depth, workers, tracker mode (None: no tracker), where, limits, how to spawn.

    spawn "fork": processes of a target that names an entry point are forked from a zygote;
    "exec": every process is a new interpreter started from `argv`.
    """

    depth: int = 2
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)
    tracker: str | None = "keyed"
    root: Path | None = None
    keep: bool = False
    timeout: float = 120.0
    spawn: str = "fork"
    dedup: bool = False
    """Merge the scenarios that reach the same world (world.py, dedup/graph.py); False: run every scenario."""
    state_key: StateKey | None = None
    """With dedup: rewrites a world's timestamps or random IDs before its digest (world.py)."""
    every: bool = False
    """With dedup: list every scenario in SweepResult.scenarios (the graph's paths, expanded), not
    one per final world; for `--scenarios` and `--keep`."""
    snapshots: bool = False
    """With dedup: take the crashed worlds of a node from one run's snapshots (process/snapshots.py); False:
    one process killed for real at each point."""
    points: Points = field(default_factory=Points)
    """How the program's crash points are found: its marks, its effects (auto), its system calls."""
    engine: Engine | None = None
    """Where the processes run (`Engine` below; engines.ray.RayEngine: across a cluster); None: here, on threads."""
    finished: Callable[[ScenarioResult], None] | None = None
    """Called with each scenario of a sweep of every scenario as it finishes (the uninterrupted run first), in
    the sweep's thread: what an interrupted sweep keeps (`--scenarios`). A merging sweep knows its scenarios
    only once its graph is whole: it calls it only when interrupted, with one scenario per final world reached
    so far (dedup/graph.py). It travels with the options to a cluster: a value."""
    ran: Mapping[tuple[Crash, ...], ScenarioResult] = field(default_factory=dict)
    """Scenarios already run for real, each from a fresh world with this target and check (the
    determinism check's second round: sweep.determinism_runs), by their crashes: a sweep of every
    scenario takes them as its own instead of running them again (their processes count in its
    figure). Not with dedup, whose units are processes, nor with keep, whose scenarios keep their folders."""
    listed: PointList | None = None
    """`--points from:FILE` (spec/POINTS.md section 6): a crash is tried only at the points it lists
    (`tries`), in every process; the others are passed without one. None: at every point."""

    def tries(self, crash: Crash) -> bool:
        """Whether the sweep tries `crash` (the one restriction of where crashes are tried: the listed points)."""
        return self.listed is None or self.listed.keeps(crash.point, crash.occurrence)

    def check_listed(self, passed: Sequence[str]) -> None:
        """Refuse (SweepError) a listed point the uninterrupted run, which passed `passed`, does not pass."""
        missing = None if self.listed is None else self.listed.missing(passed)
        if missing is not None:
            raise SweepError(missing)


Progress = Callable[[int, int], None]
"""Called after each scenario with (scenarios done, scenarios known so far); by a merging sweep,
after each process with (processes done, processes known so far)."""


# The seams: what an engine runs (units of work, legs) and the protocols an engine implements.

W = TypeVar("W")
"""How an engine holds a saved world: a folder (local), an object of the cluster's store (Ray)."""

Save = Callable[[Path, Path | None, str], W]
"""Save the world of (work directory, tracker space) under a name; the engine's handle of it."""


@dataclass(frozen=True)
class Unit(Generic[W]):
    """One process to run from node `node` (world `digest`, reached by `path`): to the end, or killed at `crash`."""

    node: int
    digest: str
    path: tuple[Crash, ...]
    world: W
    crash: Crash | None = None
    snapshots: bool = False
    """Run to the end, pausing at every point for a snapshot of its world (the node is below the depth)."""
    faults: tuple[Fault, ...] = ()
    """The in-process faults the process suffers, in the order they strike (a crash comes after them)."""
    moves: int | None = None
    """The node's moves (crashes and faults) so far; None: as many as the crashes of its path."""
    expire: bool = False
    """A fault at a restart: run no process; the node's world as the fault `restart` leaves it is the one child."""
    restart: str = KEY_EXPIRY.name
    """The kind of an `expire` unit's fault at a restart, by name: key-expiry (every key forgotten), trim-context."""

    @property
    def level(self) -> int:
        """The moves of the worlds this unit leaves (what their digests are told apart by)."""
        return (len(self.path) if self.moves is None else self.moves) + len(self.faults) + 1


@dataclass(frozen=True)
class Child(Generic[W]):
    """A crashed world: the crash that left it, its digest (state key applied), the counters up to it."""

    crash: Crash | None
    """None for the world an expiry left (no process ran)."""
    digest: str
    counters: Mapping[str, int]
    world: W | None
    """The saved world, when this leg claimed the digest; None when another had it."""
    holds_keys: bool = False
    """Whether its tracker remembers some idempotency key (key-expiry's chance at the restart)."""
    restarts: tuple[str, ...] = ()
    """The enabled faults at a restart that may strike before a restart from it, by name (Nemesis.restart_chances);
    none for the world such a fault left (one fault per restart: the restart happens)."""


@dataclass(frozen=True)
class Leg(Generic[W]):
    """What one process from a unit did: points, counters, outcome (to the end), crashed worlds, fault chances."""

    points: tuple[str, ...] = ()
    counters: Mapping[str, int] | None = None
    outcome: Outcome | None = None
    children: tuple[Child[W], ...] = ()
    snapshots: int = 0
    unreached: bool = False
    chances: tuple[Fault, ...] = ()
    """The in-process faults the nemesis finds open after the unit's last fault (runs to the end only)."""


T = TypeVar("T")


class Completions(Generic[T]):
    """The futures a sweep waits for, taken back one at a time as each is done (in the order they end).

    One wake-up per future, whatever else is pending: `concurrent.futures.wait(pending,
    FIRST_COMPLETED)` sets and removes a waiter on every pending future at each call, which is
    quadratic in a sweep of thousands of units.
    """

    def __init__(self) -> None:
        self.pending: set[Future[T]] = set()
        self._done: queue.SimpleQueue[Future[T]] = queue.SimpleQueue()

    def add(self, future: Future[T]) -> Future[T]:
        """Wait for `future` too."""
        self.pending.add(future)
        future.add_done_callback(self._done.put)
        return future

    def next(self) -> Future[T]:
        """The next future done (blocks until one is); it is no longer pending."""
        future = self._done.get()
        self.pending.discard(future)
        return future


class Workers(Protocol[W]):
    """Runs a sweep's units of work and answers with futures; W is how it holds a saved world."""

    def empty(self) -> W:
        """The empty world (no file, no tracker record), saved: where the first process starts."""

    def leg(self, unit: Unit[W], known: Set[str]) -> Future[Leg[W]]:
        """Run one unit of a merging sweep (process/units.py); `known`: digests of the worlds the graph holds."""

    def scenario(self, crashes: tuple[Crash, ...], fault: Fault | None = None) -> Future[ScenarioResult]:
        """Run one whole scenario from scratch (the sweep of every scenario)."""

    def release(self, world: W) -> None:
        """Forget a saved world: no process will start from it any more."""

    def processes(self) -> int:
        """How many processes have run so far."""

    def first_start(self) -> float | None:
        """When the first process started (time.monotonic), or None: not yet, or not known here."""

    def stop(self) -> None:
        """Start no more work (the sweep failed or was interrupted); work already queued is cancelled."""


class Engine(Protocol):
    """Where a sweep's processes run: it gives the sweep a `Workers` (engines/local.py) for its units of work."""

    def workers(
        self, target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None
    ) -> AbstractContextManager[Workers[Any]]:
        """Workers for one sweep, ready to run its units; closed (and cleaned up) when the sweep ends."""
