"""The sweep engine for real code: crash a real program at every crash point, up to N crashes deep.

It knows nothing about agent loops. A `Target` is a command that runs one process of the
program (for a `module:function` entry point, `python -m crashsweep.realsweep.probe.entry module:function`);
the program marks its crash points with crashsweep.realsweep.probe.crashpoint. The engine:

1. runs the program once, uninterrupted, in a fresh work directory, and lists the points it
   passes (the baseline);
2. for each point i, runs a scenario in a fresh work directory: a process that dies at point
   i, then a restart that runs to the end; the restart's points are listed too;
3. below the depth, extends each scenario by one more crash: dies at i, the restart dies at
   each point j it passes, and the next restart runs to the end; and so on.

With `options.listed` (`--points from:FILE`) a crash is tried only at the points the file lists
(`SweepOptions.tries`, in every process); a listed point the baseline does not pass stops the
sweep before any scenario runs.

With `options.dedup` it runs the same processes once per distinct world instead (graph.py):
scenarios that reach the same files and tracker state share their future, and are counted
by paths with the explorer's counting, faults included (graph.py).

Every process is a real subprocess, started from the target's argv or, for a Python entry
point, forked from a zygote that imported its modules (zygote.py: no interpreter start per
process). A crashed one died by SIGKILL at its chosen point: the engine checks its status,
and that the point it died at is the one listed (a program whose points change between runs
from the same disk state is not deterministic, and is refused).
Each scenario has its own work directory and its own tracker space (a database of the one
tracker service the engine starts), so scenarios never see each other's effects, and they
run in parallel on a pool of threads, at most `workers` of the program's processes at a time
(runner.py; the pool has twice as many threads, so that reading and saving worlds overlaps
the running processes).
After the last process the `check` reads the outcome (an `Outcome`); the counters the
program reported with `count(...)` over all its processes are summed per scenario.

Faults beside crashes (spec/FAULTS.md) are the nemesis's (nemesis.py). The merging sweep
makes them moves of its graph at any depth, on either engine; without dedup the engine runs,
beside the one-crash scenarios, a scenario of one fault move at each chance the nemesis finds
among the baseline's points (depth 1 only).

Where the processes run is an `Engine`'s choice (`options.engine`): the local engine (None,
`LOCAL`) runs them on threads of this process (engines.local.LocalWorkers); engines/ray.py runs the
same units of work as Ray tasks across a cluster. The sweep's bookkeeping (the results, the
graph of worlds, the counting) stays here either way, so the results are the same.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crashsweep.realsweep.dedup import graph
from crashsweep.realsweep.engines.local import LocalWorkers
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis, NemesisError
from crashsweep.realsweep.faults.power_loss import POWER_LOSS
from crashsweep.realsweep.probe.crashpoint import WHERE_LOG, read_where
from crashsweep.realsweep.probe.modes import SYSCALLS
from crashsweep.realsweep.process.runner import check_options, runner
from crashsweep.realsweep.syscalls.persistence import STRICT
from crashsweep.realsweep.values import (
    Check,
    Completions,
    Crash,
    Engine,
    Outcome,
    Progress,
    Scenario,
    ScenarioResult,
    SweepError,
    SweepOptions,
    SweepResult,
    Target,
    TargetFailed,
    Workers,
)

__all__ = [
    "LOCAL",
    "Check",
    "Crash",
    "Divergence",
    "Engine",
    "Outcome",
    "Passed",
    "Progress",
    "Run",
    "Scenario",
    "ScenarioResult",
    "SweepError",
    "SweepOptions",
    "SweepResult",
    "Target",
    "TargetFailed",
    "determinism",
    "list_points",
    "replay",
    "sweep",
]


class _Local:
    """The local engine: a runner in a root folder of this machine, its units on a pool of threads."""

    @contextmanager
    def workers(
        self, target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None
    ) -> Iterator[Workers[Any]]:
        with runner(target, check, options, nemesis) as one:
            workers = LocalWorkers(one)
            try:
                yield workers
            finally:
                workers.close()


LOCAL: Engine = _Local()


def sweep(
    target: Target,
    check: Check,
    options: SweepOptions,
    progress: Progress | None = None,
    nemesis: Nemesis | None = None,
) -> SweepResult:
    """Run the baseline and every scenario up to `options.depth` moves; see the module docstring."""
    started = time.monotonic()
    if nemesis is not None:
        try:
            nemesis.check(options.depth, options.dedup)
        except NemesisError as error:
            raise SweepError(str(error)) from None
        if nemesis.persistence != STRICT and SYSCALLS not in options.points.modes:
            raise SweepError(
                f"persistence {nemesis.persistence!r} chooses what a power cut leaves at system calls: "
                "sweep with points syscalls"
            )
    check_options(options)
    engine = options.engine or LOCAL
    with engine.workers(target, check, options, nemesis) as workers:
        if options.dedup:
            result = graph.sweep(workers, options, nemesis or Nemesis(), target.label, progress, started)
        else:
            result = _scenarios(workers, target, options, nemesis or Nemesis(), progress, started)
        first = workers.first_start()
    setup = 0.0 if first is None else min(result.seconds, max(0.0, first - started))
    return dataclasses.replace(result, points=options.points.text, setup=setup, listed=options.listed)


def replay(
    target: Target,
    check: Check,
    options: SweepOptions,
    crashes: Sequence[tuple[str, int]],
    nemesis: Nemesis | None = None,
    *,
    cut: bool = False,
    state: int = 0,
) -> ScenarioResult:
    """Run exactly one scenario: process 1 dies at the first (point, occurrence), its restart at the next, ...

    Its crashes' indices are 0: the scenario is named by its points, not by a listing.
    `nemesis` gives the processes their call IDs (no other fault move is re-run here).
    `cut`: the scenario of one power cut at the one (point, occurrence) given (the sweep's
    power-loss scenarios are of one move, "power-loss at NAME#K"), the process killed there, the
    disk cut, then a restart to the end. `state`: under a persistence model other than strict
    (the nemesis's), the cut's crash state of that number (spec/PERSISTENCE.md), from 1.
    """
    if not crashes:
        raise SweepError("a scenario to re-run needs at least one crash point")
    if cut and len(crashes) != 1:
        raise SweepError("a power cut is re-run alone: give one point")
    with runner(target, check, options, nemesis) as one:
        if cut:
            model = nemesis.persistence if nemesis is not None else ""
            detail = f"{model} {state}" if state and model else ""
            return one.run((), Fault(POWER_LOSS, 0, crashes[0][0], crashes[0][1], detail=detail))
        return one.run(tuple(Crash(0, point, occurrence) for point, occurrence in crashes))


@dataclasses.dataclass(frozen=True, slots=True)
class Passed:
    """A crash point of the uninterrupted run: its name, which pass of that name, where in the code."""

    name: str
    occurrence: int
    where: str
    """`file:line` (absolute) of the code that passed it: the program's own call, or its adapter's;
    "" for a program that logs its points itself, without crashsweep's probe."""


def list_points(
    target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None = None
) -> tuple[Passed, ...]:
    """Run the program once, uninterrupted, and give every crash point it passed, in order.

    The run is the sweep's first (its check runs too, so a program that fails is reported as
    in a sweep); the probe also logs where each point was passed (CRASHSWEEP_WHERE_LOG).
    """
    check_options(options)
    with tempfile.TemporaryDirectory(prefix="crashsweep-points-") as folder:
        log = Path(folder) / "where.log"
        located = dataclasses.replace(target, env={**target.env, WHERE_LOG: str(log)})
        with runner(located, check, options, nemesis) as one:
            result = one.run(())
        lines = read_where(log.read_text(encoding="utf-8")) if log.exists() else ()
    if not result.points:
        raise SweepError(f"{target.label}: the program passed no crash point; mark them with crashpoint(...)")
    options.check_listed(result.points)
    if not lines:  # a program that logs its points by itself (any language) says nothing of where
        lines = tuple((name, "") for name in result.points)
    elif tuple(name for name, _ in lines) != result.points:
        raise SweepError(f"{target.label}: the crash points logged and those located differ (a second process?)")
    seen: dict[str, int] = {}
    passed = []
    for name, where in lines:
        seen[name] = seen.get(name, 0) + 1
        passed.append(Passed(name, seen[name], where))
    return tuple(passed)


@dataclasses.dataclass(frozen=True, slots=True)
class Run:
    """What the processes did from one start world: the last process's crash points and the effects sent."""

    points: tuple[str, ...]
    effects: tuple[str, ...]
    """The tracker's records in the order applied, each as one JSON line (every field: run IDs too)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Divergence:
    """Two runs from the same start world that differ: the world is the one `crashes` leave (none: empty)."""

    crashes: tuple[Crash, ...]
    first: Run
    second: Run


def determinism(
    target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None = None
) -> tuple[int, Divergence | None]:
    """Run from each start world of a depth-1 sweep twice; (start worlds, the first divergence or None).

    The start worlds are the empty world and the world a crash at each point of the
    uninterrupted run leaves (a scenario of that crash, run to its end). Each is run in two
    sweeps' runners of their own (fresh tracker services, so no record of one run is seen by
    the other), and the two runs must pass the same crash points and send the same effects.
    A round's start worlds run side by side, at most `options.workers` processes at a time.
    `fresh_id()` derives from each process's start world, as in a merging sweep, so IDs taken
    from it are the same in both; an ID taken from a clock or `uuid4` is not.
    """
    checked = determinism_runs(target, check, options, nemesis)
    return checked.starts, checked.divergence


@dataclasses.dataclass(frozen=True)
class Checked:
    """The determinism check's verdict, and the scenarios of its second round, by their crashes.

    Those scenarios are a depth-1 sweep's uninterrupted run and its scenarios of one crash, each
    run for real from a fresh world: the sweep after the check takes them (SweepOptions.ran)
    instead of running them a third time.
    """

    starts: int
    divergence: Divergence | None
    ran: Mapping[tuple[Crash, ...], ScenarioResult]


def determinism_runs(target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None = None) -> Checked:
    """`determinism`, with the second round's scenarios (Checked.ran)."""
    check_options(options)
    starts: list[tuple[Crash, ...]] = [()]
    runs: list[dict[tuple[Crash, ...], Run]] = []
    ran: dict[tuple[Crash, ...], ScenarioResult] = {}
    for round_ in range(2):
        seen: dict[tuple[Crash, ...], Run] = {}
        with (
            runner(target, _recording(check, seen), options, nemesis) as one,
            ThreadPoolExecutor(2 * options.workers, thread_name_prefix="determinism") as pool,
        ):
            baseline = one.run((), worlds=True)
            if round_ == 0:
                options.check_listed(baseline.points)
                starts += _children(baseline, options)
            # the runner lets at most `workers` processes run at a time, as in a sweep
            running = {crashes: pool.submit(one.run, crashes, worlds=True) for crashes in starts if crashes}
            for crashes in starts:
                result = baseline if not crashes else running[crashes].result()
                noted = seen.get(crashes, Run((), ()))  # none: it ended before its point, so no check ran
                seen[crashes] = dataclasses.replace(noted, points=result.points)
                ran[crashes] = result  # the second round's, in the end
        runs.append(seen)
    for crashes in starts:
        first, second = runs[0][crashes], runs[1][crashes]
        if first != second:
            return Checked(len(starts), Divergence(crashes, first, second), {})
    return Checked(len(starts), None, ran)


def _recording(check: Check, seen: dict[tuple[Crash, ...], Run]) -> Check:
    """`check`, which also notes each scenario's effects (the tracker's records) in `seen`."""

    def recorded(scenario: Scenario) -> Outcome:
        records = scenario.tracker.records() if scenario.tracker is not None else []
        effects = tuple(json.dumps(record, sort_keys=True) for record in records)
        seen[scenario.crashes] = Run((), effects)
        return check(scenario)

    return recorded


def _scenarios(
    workers: Workers[Any],
    target: Target,
    options: SweepOptions,
    nemesis: Nemesis,
    progress: Progress | None,
    started: float,
) -> SweepResult:
    ran = _Ran(options.ran)
    baseline = (ran.take(()) or workers.scenario(())).result()
    if not baseline.points:
        raise SweepError(f"{target.label}: the program passed no crash point; mark them with crashpoint(...)")
    options.check_listed(baseline.points)
    finished = options.finished or (lambda _: None)  # each scenario as it ends: what an interrupted sweep keeps
    finished(baseline)
    results: list[ScenarioResult] = []
    known = len(baseline.points)
    waiting: Completions[ScenarioResult] = Completions()
    for crashes in _children(baseline, options):
        waiting.add(ran.take(crashes) or workers.scenario(crashes))
    faults = {waiting.add(workers.scenario((), f)): f for f in nemesis.chances(baseline.points, baseline.pauses)}
    known += len(waiting.pending) - len(baseline.points)
    try:
        while waiting.pending:
            future = waiting.next()
            result = future.result()
            results.append(result)
            finished(result)
            if result.moves < options.depth and not result.faults:
                children = _children(result, options)
                known += len(children)
                for crashes in children:
                    waiting.add(ran.take(crashes) or workers.scenario(crashes))
            wakes = _wakes(faults.pop(future, None), result)
            known += len(wakes)
            faults |= {waiting.add(workers.scenario((), f)): f for f in wakes}
            if progress is not None:
                progress(len(results), known)
    except BaseException:
        workers.stop()
        for future in waiting.pending:
            future.cancel()
        raise
    results.sort(key=lambda r: (r.moves, [c.index for c in r.crashes], r.faults))
    reached = tuple(r for r in results if not r.unreached)
    unreached = tuple(r for r in results if r.unreached)
    if not reached:
        first = unreached[0].crashes[-1]
        raise SweepError(
            f"no process ever reached its chosen point (the first was to die at {first.label!r}): the program's "
            "points must depend only on what is on disk and at the tracker (no clock, no randomness)"
        )
    elapsed = time.monotonic() - started
    return SweepResult(options.depth, baseline, reached, workers.processes() + ran.processes, elapsed, unreached)


class _Ran:
    """The scenarios a sweep takes as run (SweepOptions.ran), each once, and the processes they ran."""

    def __init__(self, ran: Mapping[tuple[Crash, ...], ScenarioResult]) -> None:
        self.ran, self.processes = dict(ran), 0

    def take(self, crashes: tuple[Crash, ...]) -> Future[ScenarioResult] | None:
        """The scenario of `crashes` as a finished future if it was run, else None (the sweep runs it)."""
        result = self.ran.pop(crashes, None)
        if result is None:
            return None
        self.processes += result.unreached or len(result.crashes) + 1 + result.beside
        done: Future[ScenarioResult] = Future()
        done.set_result(result)
        return done


def _wakes(fault: Fault | None, result: ScenarioResult) -> list[Fault]:
    """The moves a fault's scenario opens once run (after a pause whose restart ran to its stop, its wakes)."""
    if fault is None or result.unreached:
        return []
    return fault.next_moves(result.points)


def _children(result: ScenarioResult, options: SweepOptions) -> list[tuple[Crash, ...]]:
    """The scenarios one crash deeper: the last process of `result` dies at each of its points the options try."""
    if result.unreached:
        return []
    children = []
    for i, point in enumerate(result.points, start=1):
        crash = Crash(i, point, result.points[:i].count(point))
        if options.tries(crash):
            children.append((*result.crashes, crash))
    return children
