"""The merging sweep's unit of work: run one process from a saved world, return the worlds it left.

A `Unit` names a node of the graph of real worlds (its digest, the crashes that reached it,
where its world is saved) and what to do from it: run a process to the end (`crash` None),
or kill one at `crash`, the process suffering the unit's `faults` first (lost-reply,
wrong-answer: told by the nemesis through its environment, spec/FAULTS.md); or, for a fault
at a restart (`expire`: key-expiry, trim-context), no process at all: the node's world as the
fault leaves it (the move's `before_restart` on a copy: every key forgotten, the checkpoint's
conversation cut). `run_leg` does it with a `Runner`, wherever the runner
is: on a thread of the local engine, or in a Ray actor on another machine (engines/ray.py). It
returns a `Leg`: the points the process passed, its counters, the outcome of its final world
(the check reads it where the process ran), the fault chances the nemesis finds after its
last fault, and a `Child` for each crashed world (one per point after its last fault when
the run to the end took snapshots; the one it died in when killed; the expired world), named
by the digest of its world, with the faults at a restart that may strike from it. A process
told to suffer a fault that does not show it in its points and pauses stops the sweep (its
course changed: it is not deterministic).

The graph stays with the caller (graph.py): a leg only reports. It saves a crashed world only
when `claim(digest)` says no one has it yet (the local engine claims exactly, under a lock; the
Ray engine tells each unit which digests the graph already holds); `save` saves it where the
engine keeps worlds and returns the engine's handle of it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from crashsweep.realsweep import histories
from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.faults.nemesis import Fault, restart_fault
from crashsweep.realsweep.process.runner import Live, Runner, Step
from crashsweep.realsweep.process.snapshots import read_counters
from crashsweep.realsweep.tracker.store import KEYS_TABLE
from crashsweep.realsweep.values import Child, Crash, Leg, Outcome, Save, Scenario, ScenarioResult, SweepError, Unit, W


def run_leg(runner: Runner, unit: Unit[W], folder: Path, claim: Callable[[str], bool], save: Save[W]) -> Leg[W]:
    """Run `unit`'s process from the world saved in `folder`; see the module docstring."""
    if unit.expire:
        return _expired(runner, unit, folder, claim, save)
    if unit.crash is not None:
        return _killed(runner, unit, unit.crash, folder, claim, save)
    after = _after(unit.faults)
    children: list[Child[W]] = []
    at_point = None
    tables: list[worlds.LiveTables] = []  # the live space's tables, over one connection for all its points
    if unit.snapshots:

        def at_point(index: int, live: Live) -> None:
            if index <= after[0]:  # a crash comes after the process's faults
                return
            points = live.points_log.read_text(encoding="utf-8").splitlines()[:index]
            crash = Crash(index, points[-1], points.count(points[-1]))
            if not runner.options.tries(crash):  # --points from:FILE: passed without a crash
                return
            counters = read_counters(live.counters_log)
            if live.space is not None and not tables:
                tables.append(worlds.LiveTables(live.space))
            reader = tables[0] if tables else None
            children.append(_child(runner, unit, crash, live.workdir, live.space, counters, claim, save, reader))

    try:
        step = runner.step(folder, unit.digest, unit.path, None, at_point, unit.faults)
    finally:
        for reader in tables:
            reader.close()
    try:
        struck(unit.path, step, unit.faults)
        outcome = _check(runner, unit, step)
        if step.stuck:  # it can never go on (stuck, or a restart that cannot recover): never finished
            outcome = replace(outcome, stuck=step.stuck, exit_status=step.exit_status)
        if runner.options.keep:  # the scenario's history beside its files (spec/HISTORY.md)
            histories.keep(ScenarioResult(unit.path, outcome, dict(step.counters), tuple(step.points)), step.folder)
    finally:
        _forget(runner, step)
    chances = tuple(runner.nemesis.chances(step.points, step.pauses, after))
    return Leg(step.points, dict(step.counters), outcome, tuple(children), step.snapshots, chances=chances)


def _killed(
    runner: Runner, unit: Unit[W], crash: Crash, folder: Path, claim: Callable[[str], bool], save: Save[W]
) -> Leg[W]:
    """A process from the unit's world that suffers its faults and is killed for real at `crash`; the world it left."""
    step = runner.step(folder, unit.digest, unit.path, crash, None, unit.faults)
    try:
        if step.unreached:
            return Leg(unreached=True)
        struck(unit.path, step, unit.faults)
        child = _child(runner, unit, crash, step.workdir, step.space, step.counters, claim, save)
        return Leg(children=(child,))
    finally:
        _forget(runner, step)


def _expired(runner: Runner, unit: Unit[W], folder: Path, claim: Callable[[str], bool], save: Save[W]) -> Leg[W]:
    """The unit's fault at a restart from its world: a copy of it as the kind leaves it.

    key-expiry: no key remembered; trim-context: the checkpoint's conversation cut.
    """
    fault = restart_fault(unit.restart)
    copy = Path(tempfile.mkdtemp(dir=runner.root, prefix="expiring-"))
    try:
        shutil.copytree(folder / worlds.FILES, copy / worlds.FILES, symlinks=True)
        space = None
        if (folder / worlds.TRACKER_FILE).exists():
            space = copy / worlds.TRACKER_FILE
            shutil.copyfile(folder / worlds.TRACKER_FILE, space)
        fault.before_restart(space, copy / worlds.FILES)
        world = worlds.capture(copy / worlds.FILES, space)
        key = _key(runner, world)
        saved = save(copy / worlds.FILES, space, f"n{unit.node}-{fault.name}") if claim(key) else None
        # No fault at this restart strikes after it: the restart happens (as the model's fault edge does).
        return Leg(children=(Child(None, key, {}, saved, _holds_keys(world)),))
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _child(
    runner: Runner,
    unit: Unit[W],
    crash: Crash,
    workdir: Path,
    space: Path | None,
    counters: Mapping[str, int],
    claim: Callable[[str], bool],
    save: Save[W],
    live: worlds.LiveTables | None = None,
) -> Child[W]:
    """The world in `workdir` and `space` after `crash`: its digest, saved when this leg claims it.

    `live`: the space's tables read over the kept connection of a process's snapshots.
    """
    world = worlds.capture(workdir, space, live)
    key = _key(runner, world)
    saved = save(workdir, space, _name(unit, crash)) if claim(key) else None
    return Child(crash, key, dict(counters), saved, _holds_keys(world), runner.nemesis.restart_chances(world))


def _key(runner: Runner, world: worlds.World) -> str:
    """The digest that names a world (its state key applied)."""
    key_fn = runner.options.state_key
    return worlds.digest(world if key_fn is None else key_fn(world))


def _name(unit: Unit[W], crash: Crash) -> str:
    """A name for the world a unit left at `crash`, told apart from the other units' of its node by its faults."""
    faults = "".join(f"-{f.name}-{f.index}.{f.occurrence}" for f in unit.faults)
    return f"n{unit.node}{faults}-{crash.index}"


def _holds_keys(world: worlds.World) -> bool:
    """Whether the world's tracker remembers some idempotency key (key-expiry's chance)."""
    return any(rows for name, rows in world.tables if name == KEYS_TABLE)


def _after(faults: tuple[Fault, ...]) -> tuple[int, int]:
    """Where the last of `faults` strikes (nemesis.Fault.position); (0, 0) for none."""
    return faults[-1].position if faults else (0, 0)


def struck(path: tuple[Crash, ...], step: Step, faults: tuple[Fault, ...]) -> None:
    """Check that each fault struck where it was found: a program whose course changed is not deterministic."""
    for fault in faults:
        if not fault.struck(step.points, step.pauses):
            raise SweepError(
                f"scenario {code(path)}: {fault.label} did not strike where the same process offered it: "
                "the program's points must depend only on what is on disk and at the tracker"
            )


def _check(runner: Runner, unit: Unit[W], step: Step) -> Outcome:
    """The check's outcome of the final world the step left."""
    try:
        outcome = runner.checked(Scenario(unit.path, step.workdir, step.tracker))
    except Exception as error:  # the user's check: report which scenario it failed on
        raise SweepError(f"scenario {code(unit.path)}: the check failed: {type(error).__name__}: {error}") from error
    if not isinstance(outcome, Outcome):
        raise SweepError(f"the check returned {type(outcome).__name__}, not crashsweep.realsweep.sweep.Outcome")
    return outcome


def _forget(runner: Runner, step: Step) -> None:
    if not runner.options.keep:
        shutil.rmtree(step.folder, ignore_errors=True)


def code(path: tuple[Crash, ...]) -> str:
    """A scenario's crash indices, "5,12", or "(uninterrupted)"."""
    return ",".join(str(c.index) for c in path) if path else "(uninterrupted)"
