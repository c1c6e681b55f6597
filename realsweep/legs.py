"""The merging sweep's unit of work: run one process from a saved world, return the worlds it left.

A `Unit` names a node of the graph of real worlds (its digest, the crashes that reached it,
where its world is saved) and what to do from it: run a process to the end (`crash` None),
or kill one at `crash`. `run_leg` does it with a `Runner`, wherever the runner is: on a thread
of the local engine, or in a Ray actor on another machine (ray_engine.py). It returns a `Leg`:
the points the process passed, its counters, the outcome of its final world (the check reads
it where the process ran), and a `Child` for each crashed world (one per point when the run
to the end took snapshots; the one it died in when killed), named by the digest of its world.

The graph stays with the caller (graph.py): a leg only reports. It saves a crashed world only
when `claim(digest)` says no one has it yet (the local engine claims exactly, under a lock; the
Ray engine tells each unit which digests the graph already holds); `save` saves it where the
engine keeps worlds and returns the engine's handle of it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from crashsweep.realsweep import digest
from crashsweep.realsweep.runner import Live, Runner, Step
from crashsweep.realsweep.scenarios import Crash, Outcome, Scenario, SweepError
from crashsweep.realsweep.snapshot import read_counters

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


@dataclass(frozen=True)
class Child(Generic[W]):
    """A crashed world: the crash that left it, its digest (state key applied), the counters up to it."""

    crash: Crash
    digest: str
    counters: Mapping[str, int]
    world: W | None
    """The saved world, when this leg claimed the digest; None when another had it."""


@dataclass(frozen=True)
class Leg(Generic[W]):
    """What one process from a unit did: points, counters, outcome (to the end), crashed worlds."""

    points: tuple[str, ...] = ()
    counters: Mapping[str, int] | None = None
    outcome: Outcome | None = None
    children: tuple[Child[W], ...] = ()
    snapshots: int = 0
    unreached: bool = False


def run_leg(runner: Runner, unit: Unit[W], folder: Path, claim: Callable[[str], bool], save: Save[W]) -> Leg[W]:
    """Run `unit`'s process from the world saved in `folder`; see the module docstring."""
    if unit.crash is not None:
        return _killed(runner, unit, unit.crash, folder, claim, save)
    children: list[Child[W]] = []
    at_point = None
    if unit.snapshots:

        def at_point(index: int, live: Live) -> None:
            points = live.points_log.read_text(encoding="utf-8").splitlines()[:index]
            crash = Crash(index, points[-1], points.count(points[-1]))
            counters = read_counters(live.counters_log)
            children.append(_child(runner, unit, crash, live.workdir, live.space, counters, claim, save))

    step = runner.step(folder, unit.digest, unit.path, None, at_point)
    try:
        outcome = _check(runner, unit, step)
    finally:
        _forget(runner, step)
    return Leg(step.points, dict(step.counters), outcome, tuple(children), step.snapshots)


def _killed(
    runner: Runner, unit: Unit[W], crash: Crash, folder: Path, claim: Callable[[str], bool], save: Save[W]
) -> Leg[W]:
    """A process from the unit's world killed for real at `crash`; the world it left."""
    step = runner.step(folder, unit.digest, unit.path, crash)
    try:
        if step.unreached:
            return Leg(unreached=True)
        child = _child(runner, unit, crash, step.workdir, step.space, step.counters, claim, save)
        return Leg(children=(child,))
    finally:
        _forget(runner, step)


def _child(
    runner: Runner,
    unit: Unit[W],
    crash: Crash,
    workdir: Path,
    space: Path | None,
    counters: Mapping[str, int],
    claim: Callable[[str], bool],
    save: Save[W],
) -> Child[W]:
    """The world in `workdir` and `space` after `crash`: its digest, saved when this leg claims it."""
    world = digest.capture(workdir, space)
    key_fn = runner.options.state_key
    key = digest.digest(world if key_fn is None else key_fn(world))
    saved = save(workdir, space, f"n{unit.node}-{crash.index}") if claim(key) else None
    return Child(crash, key, dict(counters), saved)


def _check(runner: Runner, unit: Unit[W], step: Step) -> Outcome:
    """The check's outcome of the final world the step left."""
    try:
        outcome = runner.check(Scenario(unit.path, step.workdir, step.tracker))
    except Exception as error:  # the user's check: report which scenario it failed on
        raise SweepError(f"scenario {code(unit.path)}: the check failed: {type(error).__name__}: {error}") from error
    if not isinstance(outcome, Outcome):
        raise SweepError(f"the check returned {type(outcome).__name__}, not crashsweep.realsweep.engine.Outcome")
    return outcome


def _forget(runner: Runner, step: Step) -> None:
    if not runner.options.keep:
        shutil.rmtree(step.folder, ignore_errors=True)


def code(path: tuple[Crash, ...]) -> str:
    """A scenario's crash indices, "5,12", or "(uninterrupted)"."""
    return ",".join(str(c.index) for c in path) if path else "(uninterrupted)"
