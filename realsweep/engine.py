"""The sweep engine for real code: crash a real program at every crash point, up to N crashes deep.

It knows nothing about agent loops. A `Target` is a command that runs one process of the
program (for a `module:function` entry point, `python -m crashsweep.realsweep.entry module:function`);
the program marks its crash points with crashsweep.realsweep.crashpoint. The engine:

1. runs the program once, uninterrupted, in a fresh work directory, and lists the points it
   passes (the baseline);
2. for each point i, runs a scenario in a fresh work directory: a process that dies at point
   i, then a restart that runs to the end; the restart's points are listed too;
3. below the depth, extends each scenario by one more crash: dies at i, the restart dies at
   each point j it passes, and the next restart runs to the end; and so on.

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
run in parallel on a pool of `workers` threads, each driving its scenario's subprocesses.
After the last process the `check` reads the outcome (an `Outcome`); the counters the
program reported with `count(...)` over all its processes are summed per scenario.

Faults beside crashes (spec/FAULTS.md) are the nemesis's (nemesis.py). The merging sweep
makes them moves of its graph at any depth; without dedup the engine runs, beside the
one-crash scenarios, a scenario of one fault move at each chance the nemesis finds among the
baseline's points (depth 1 only).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from pathlib import Path

from crashsweep.realsweep import graph
from crashsweep.realsweep.nemesis import Nemesis, NemesisError
from crashsweep.realsweep.runner import Runner
from crashsweep.realsweep.scenarios import (
    Check,
    Crash,
    Outcome,
    Progress,
    Scenario,
    ScenarioResult,
    SweepError,
    SweepOptions,
    SweepResult,
    Target,
    TargetFailed,
)
from crashsweep.realsweep.tracker_service import ServiceProcess

__all__ = [
    "Check",
    "Crash",
    "Outcome",
    "Progress",
    "Scenario",
    "ScenarioResult",
    "SweepError",
    "SweepOptions",
    "SweepResult",
    "Target",
    "TargetFailed",
    "replay",
    "sweep",
]


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
    with _runner(target, check, options, nemesis) as runner:
        if options.dedup:
            return graph.sweep(runner, progress, started)
        return _scenarios(runner, options, progress, started)


def replay(
    target: Target,
    check: Check,
    options: SweepOptions,
    crashes: Sequence[tuple[str, int]],
    nemesis: Nemesis | None = None,
) -> ScenarioResult:
    """Run exactly one scenario: process 1 dies at the first (point, occurrence), its restart at the next, ...

    Its crashes' indices are 0: the scenario is named by its points, not by a listing.
    `nemesis` gives the processes their call IDs (a fault move is not re-run here).
    """
    if not crashes:
        raise SweepError("a scenario to re-run needs at least one crash point")
    with _runner(target, check, options, nemesis) as runner:
        return runner.run(tuple(Crash(0, point, occurrence) for point, occurrence in crashes))


@contextmanager
def _runner(target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None = None) -> Iterator[Runner]:
    """A runner in a new or empty root folder, with its tracker service when the options ask for one."""
    if options.depth < 1:
        raise SweepError(f"depth must be at least 1, got {options.depth}")
    if options.spawn not in ("fork", "exec"):
        raise SweepError(f"spawn must be fork or exec, got {options.spawn!r}")
    if options.workers < 1:
        raise SweepError(f"workers must be at least 1, got {options.workers}")
    root = Path(tempfile.mkdtemp(prefix="crashsweep-")) if options.root is None else options.root
    if root.exists() and any(root.iterdir()):
        raise SweepError(f"{root}: not empty; give a new or empty folder to keep the sweep's files in")
    root.mkdir(parents=True, exist_ok=True)
    try:
        with ExitStack() as stack:
            service = (
                None
                if options.tracker is None
                else stack.enter_context(ServiceProcess(root / "tracker", options.tracker))
            )
            runner = Runner(target, check, options, root, service, nemesis)
            stack.callback(runner.close)
            yield runner
    finally:
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)


def _scenarios(runner: Runner, options: SweepOptions, progress: Progress | None, started: float) -> SweepResult:
    baseline = runner.run(())
    if not baseline.points:
        raise SweepError(f"{runner.target.label}: the program passed no crash point; mark them with crashpoint(...)")
    results: list[ScenarioResult] = []
    known = len(baseline.points)
    with ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="scenario") as pool:
        pending: set[Future[ScenarioResult]] = {pool.submit(runner.run, c) for c in _children(baseline)}
        pending |= {pool.submit(runner.run, (), f) for f in runner.nemesis.chances(baseline.points)}
        known += len(pending) - len(baseline.points)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    result = future.result()
                    results.append(result)
                    if result.moves < options.depth and not result.faults:
                        children = _children(result)
                        known += len(children)
                        pending |= {pool.submit(runner.run, c) for c in children}
                    if progress is not None:
                        progress(len(results), known)
        except BaseException:
            runner.stop.set()
            for future in pending:
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
    return SweepResult(options.depth, baseline, reached, runner.processes, elapsed, unreached)


def _children(result: ScenarioResult) -> list[tuple[Crash, ...]]:
    """The scenarios one crash deeper: the last process of `result` dies at each of its points."""
    if result.unreached:
        return []
    children = []
    for i, point in enumerate(result.points, start=1):
        occurrence = result.points[:i].count(point)
        children.append((*result.crashes, Crash(i, point, occurrence)))
    return children
