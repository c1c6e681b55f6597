"""`crashsweep sweep`: real code, real crashes.

`sweep` runs the real sweep (crashsweep.realsweep.sweep) of the reference loop of a design, or of the
user's own program (`--target module:function` or a command, with `--check module:function`),
and prints the explorer's columns. What `conform` (crashsweep.cli.conform) shares with it lives
here too: the default matrix, the sweep's options, its progress line.
Exit status: 0 when the invariants hold, 1 when one is violated or the program failed by
itself, 2 for bad input.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from crashsweep.cli import (
    clock,
    formats,
    limits,
    prog,
    runs,
    sweep_determinism,
    sweep_engines,
    sweep_points,
    sweep_scenarios,
    sweep_sources,
)
from crashsweep.cli.options import (
    depth_option,
    design_option,
    job_option,
    tracker_option,
    upgrade_option,
    variant_option,
)
from crashsweep.cli.sweep_sources import reference_design
from crashsweep.realsweep import api
from crashsweep.spec.faults import FaultError, parse_faults
from crashsweep.variants import SEED_DESIGNS
from crashsweep.variants.design_file import load_design

DEFAULT_MATRIX = (
    *((seed.name, "keyed") for seed in SEED_DESIGNS),
    ("agent-loop", "keyed"),
    ("agent-loop", "keyless"),
)
"""The seed's five designs against a tracker that honours keys, and agent-loop against both trackers."""


class Progress(runs.StatusLine):
    """The sweep's progress: scenarios (a merging sweep: processes) done of those known so far."""

    def __init__(self, label: str, unit: str = "scenarios") -> None:
        super().__init__(label)
        self.unit = unit

    def __call__(self, done: int, known: int) -> None:
        self.show(f"{done}/{known} {self.unit}")


def sweep_options(
    depth: int,
    workers: int | None,
    keep: Path | None,
    timeout: float,
    tracker: str,
    spawn: str,
    dedup: bool = True,
    state_key: api.StateKey | None = None,
    kill: bool = False,
) -> api.SweepOptions:
    return api.SweepOptions(
        dedup=dedup,
        snapshots=dedup and not kill,
        state_key=state_key,
        depth=depth,
        workers=workers or os.cpu_count() or 1,
        tracker=api.SERVICE_MODES[tracker],
        root=keep.resolve() if keep is not None else None,
        keep=keep is not None,
        timeout=timeout,
        spawn=spawn,
    )


ARG_HELP = (
    "with --target module:function: passed to it in $CRASHSWEEP_ARGS (JSON) and shown in the row; "
    "the module declares the keys it takes (CRASHSWEEP_ARGS); repeatable"
)
CALL_IDS_HELP = (
    "with --framework, --variant or --design: the model's call IDs, the job's (stable) or new on every ask"
    " (fresh)  [default: stable]"
)
FAULTS_HELP = (
    "with --variant or --design: faults beside crashes (spec/FAULTS.md), e.g. lost-reply (with --no-dedup: depth 1)"
)
DURABILITY_HELP = "with --framework langgraph: when checkpoints are written  [default: async, LangGraph's]"
SCENARIOS_HELP = "write every scenario (crash points, processes, counters, outcome) to this file as JSON lines"
CRASH_HELP = "re-run one scenario: the point each process dies at, in order (NAME, or NAME#K: its K-th pass)"
SPAWN_HELP = "fork: Python entry points are forked from a warm zygote; exec: a new interpreter per process"
DEDUP_HELP = "run once per distinct world (files and tracker) and count scenarios by paths; --no-dedup: run every one"
DETERMINISM_HELP = (
    "run the program twice from each start world of a depth-1 sweep and compare crash points and effects: no sweep"
)
NO_DETERMINISM_HELP = (
    "with --framework dbos, pydantic-ai or temporal (engines that replay what they recorded): skip the"
    " determinism check their depth-1 sweep makes first"
)
LIST_POINTS_HELP = "run the program once, uninterrupted, and list its crash points (name, pass, where): no sweep"
POINTS_HELP = (
    "how crash points are found (spec/POINTS.md): the program's crashpoint() marks; auto: at a Python"
    " program's effects (files, fsyncs, renames, sockets), no marks needed; syscalls: at any program's"
    " system calls, traced by a ptrace tracer of its own"
)
POINTS_FILTER_HELP = (
    "with --points auto or syscalls: {} the points of these effect kinds (fsync, send, ...) or file/site globs"
)
UPGRADE_HELP = (
    "every restart runs this instead (a deploy between a crash and its restart): with --variant or --design a"
    " design's name or file, with --target a module:function or a command line"
)
KILL_HELP = "with dedup: kill a process at every point for real instead of taking snapshots of one run"
STATE_KEY_HELP = (
    "module:function(World) -> World that blanks timestamps or random IDs before a world's digest (with dedup)"
)


def _state_key(spec: str | None) -> api.StateKey | None:
    """The --state-key function, loaded before any process starts (bad: one line, exit 2)."""
    if spec is None:
        return None
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        api.parse_entry_point(spec)
        return api.load_entry_point(spec)  # type: ignore[return-value]
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--state-key") from None


def _nemesis(
    text: str | None, call_ids: str | None, depth: int, reference_loop: bool, replaying: bool, dedup: bool, traced: bool
) -> api.Nemesis:
    """The faults and call IDs of a sweep, checked before any process starts.

    The reference loop takes every fault; any other program only power-loss, and only with its
    points at its system calls (`traced`): the cut rebuilds its files from the traced journal.
    """
    if text is None:
        return api.Nemesis((), reference_loop and call_ids == "fresh")
    if not reference_loop and not (traced and text.strip() == "power-loss"):
        raise click.UsageError(
            "--faults goes with --variant or --design (the reference loop); your own program takes"
            " --faults power-loss with --points syscalls"
        )
    if replaying:
        raise click.UsageError("--crash re-runs a scenario of crashes: it takes no --faults")
    try:
        nemesis = api.Nemesis(parse_faults(text), call_ids == "fresh")
        nemesis.check(depth, dedup)
    except (FaultError, api.NemesisError) as error:
        raise click.BadParameter(str(error), param_hint="'--faults'") from None
    return nemesis


F = TypeVar("F", bound=Callable[..., Any])


def stops_on_sigterm(command: F) -> F:
    """Run `command` with SIGTERM taken as Ctrl-C (KeyboardInterrupt), so that its cleanup runs.

    Python's default for SIGTERM ends the process at once: the tracker service and the zygote
    it started would run on (holding the caller's pipes) and its scratch folder would stay.
    As a KeyboardInterrupt, SIGTERM stops them, removes the folder and exits 130.
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return command(*args, **kwargs)
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            return command(*args, **kwargs)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return run  # type: ignore[return-value]


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def fail(message: str, status: int) -> int:
    click.echo(f"crashsweep: {message}", err=True)
    return status


@click.command()
@variant_option("sweep the reference loop of this design (see the variants command)")
@design_option()
@click.option("--target", "target_spec", help="sweep your own program: module:function, or a command line")
@click.option(
    "--check", "check_spec", help="with --target: module:function(scenario) -> crashsweep.realsweep.sweep.Outcome"
)
@click.option("--arg", "target_args", multiple=True, metavar="KEY=VALUE", help=ARG_HELP)
@click.option(
    "--framework", type=click.Choice(list(api.FRAMEWORKS)), help="sweep the built-in example agent on a framework"
)
@click.option("--keys", type=click.Choice(("on", "off")), help="with --framework: send idempotency keys  [default: on]")
@click.option("--call-ids", type=click.Choice(api.CALL_IDS), help=CALL_IDS_HELP)
@click.option("--faults", "faults_text", metavar="K1,K2", help=FAULTS_HELP)
@click.option("--durability", type=click.Choice(api.DURABILITY), help=DURABILITY_HELP)
@depth_option(with_faults=True, real=True)
@job_option(help="job file (with --variant or --framework)")
@tracker_option()
@click.option("--workers", type=limits.workers(), help="scenarios run at once  [default: the core count]")
@formats.format_option(formats.SWEEP)
@click.option(
    "--keep", metavar="DIR", callback=sweep_scenarios.keep_folder, help="keep every work dir and database here"
)
@click.option(
    "--scenarios", "scenarios_path", metavar="FILE", callback=sweep_scenarios.scenarios_file, help=SCENARIOS_HELP
)
@click.option("--crash", "crash_points", multiple=True, metavar="POINT[#K]", help=CRASH_HELP)
@click.option("--timeout", type=limits.Seconds(1), default=120, show_default=True, help="seconds per process")
@click.option("--spawn", type=click.Choice(("fork", "exec")), default="fork", show_default=True, help=SPAWN_HELP)
@click.option("--dedup/--no-dedup", default=True, show_default=True, help=DEDUP_HELP)
@click.option("--state-key", "state_key_spec", metavar="MODULE:FUNCTION", help=STATE_KEY_HELP)
@click.option("--kill", is_flag=True, help=KILL_HELP)
@click.option(
    "--points",
    "points_text",
    type=click.Choice(api.POINTS_CHOICES),
    default="marked",
    show_default=True,
    help=POINTS_HELP,
)
@click.option("--points-include", default="", metavar="K1,GLOB", help=POINTS_FILTER_HELP.format("keep only"))
@click.option("--points-exclude", default="", metavar="K1,GLOB", help=POINTS_FILTER_HELP.format("drop"))
@click.option("--list-points", is_flag=True, help=LIST_POINTS_HELP)
@click.option("--determinism", is_flag=True, help=DETERMINISM_HELP)
@click.option("--no-determinism", "skip_determinism", is_flag=True, help=NO_DETERMINISM_HELP)
@upgrade_option(UPGRADE_HELP)
@sweep_engines.engine_options
@stops_on_sigterm
def sweep(
    variant: str | None,
    design_path: Path | None,
    target_spec: str | None,
    check_spec: str | None,
    target_args: tuple[str, ...],
    framework: str | None,
    keys: str | None,
    call_ids: str | None,
    faults_text: str | None,
    durability: str | None,
    depth: int,
    job_path: Path | None,
    tracker: str,
    workers: int | None,
    fmt: str,
    keep: Path | None,
    scenarios_path: Path | None,
    crash_points: tuple[str, ...],
    timeout: float,
    spawn: str,
    dedup: bool,
    state_key_spec: str | None,
    kill: bool,
    points_text: str,
    points_include: str,
    points_exclude: str,
    list_points: bool,
    determinism: bool,
    skip_determinism: bool,
    upgrade_to: str | None,
    engine_name: str,
    address: str | None,
) -> int:
    """Kill real processes at every crash point, up to --depth crashes, and count what happened."""
    sweep_engines.refuse(engine_name, address, **{"--crash": crash_points, "--keep": keep is not None})
    sweep_sources.combination(
        variant, design_path, target_spec, check_spec, target_args, framework, (keys, call_ids, durability), job_path
    )
    if list_points and determinism:
        raise click.UsageError("give --list-points or --determinism, not both")
    if (list_points or determinism) and engine_name != "local":
        raise click.UsageError("--list-points and --determinism run on this machine: they take no --engine ray")
    if list_points:
        sweep_points.check_usage(fmt, crash_points, scenarios_path, keep)
    if determinism:
        sweep_determinism.check_usage(fmt, crash_points, scenarios_path, keep)
    if crash_points and (scenarios_path is not None or fmt != formats.TEXT.name):
        raise click.UsageError("--crash re-runs one scenario: it takes no --scenarios and prints text")
    args = sweep_scenarios.parse_args(target_args)
    try:
        points = api.Points.parse(points_text, points_include, points_exclude)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    crashes = [sweep_scenarios.parse_crash(point) for point in crash_points]
    reference_loop = variant is not None or design_path is not None
    nemesis = _nemesis(faults_text, call_ids, depth, reference_loop, bool(crashes), dedup, points.syscalls)
    if "power-loss" in nemesis.faults and points.modes == ("auto",):
        raise click.UsageError("--faults power-loss cuts at marked or syscall points: give --points marked,auto")
    if (state_key_spec is not None or kill) and not dedup:
        raise click.UsageError("--state-key and --kill go with dedup (drop --no-dedup)")
    dedup = dedup and not nemesis.every_scenario  # power loss: every scenario of one move, from scratch
    dedup = dedup and framework not in api.FROM_SCRATCH_FRAMEWORKS  # a server's state outside the work folder
    upgrade = sweep_sources.reference_upgrade(upgrade_to, variant, design_path, framework, nemesis.faults)
    if design_path is not None:
        variant = load_design(design_path).name  # a bad design file fails before any process starts
    options = sweep_options(depth, workers, keep, timeout, tracker, spawn, dedup, _state_key(state_key_spec), kill)
    options = dataclasses.replace(options, every=scenarios_path is not None or keep is not None, points=points)
    progress = Progress("sweep", "processes" if dedup else "scenarios")
    try:
        if variant is not None:
            if design_path is None:
                reference_design(variant)
            source = sweep_sources.variant_source(variant, job_path, tracker, design_path, nemesis, upgrade)
        elif framework is not None:
            source = sweep_sources.framework_source(framework, job_path, tracker, keys, call_ids, durability)
        else:
            assert target_spec is not None
            assert check_spec is not None
            source = _target_source(target_spec, check_spec, args, tracker)
            source.nemesis = nemesis
            if upgrade_to is not None:
                source = sweep_sources.upgrade_target(source, upgrade_to, lambda spec: _program(spec, args))
        source.command += [*(["--timeout", f"{timeout:g}"] if timeout != 120 else []), "--spawn", spawn]
        source.command += points.args()
        if list_points:
            passed = api.list_points(source.target, source.check, options, source.nemesis)
            click.echo(sweep_points.render(source.label, passed, source.command, fmt), nl=False)
            return 0
        if determinism:
            keyed = dataclasses.replace(options, state_key=options.state_key or source.state_key)
            checked, divergence = api.determinism(source.target, source.check, keyed, source.nemesis)
            click.echo(sweep_determinism.render(source.label, checked, divergence, source.command, fmt), nl=False)
            return 0 if divergence is None else 1
        held: int | None = None
        if sweep_determinism.first(framework, depth, skip_determinism, crashes, list_points, determinism):
            keyed = dataclasses.replace(options, state_key=options.state_key or source.state_key)
            held, divergence = api.determinism(source.target, source.check, keyed, source.nemesis)
            if divergence is not None:
                click.echo(sweep_determinism.render(source.label, held, divergence, source.command, fmt), nl=False)
                return 1
        if crashes:
            scenario = api.replay(source.target, source.check, options, crashes, source.nemesis)
            return _replayed(source.label, scenario)
        with sweep_engines.opened(engine_name, address, workers) as chosen:
            result = source.run(dataclasses.replace(options, engine=chosen), progress)
        result = dataclasses.replace(result, seconds=max(result.seconds, clock.seconds()))  # from the command's start
    except KeyboardInterrupt:
        if keep is None:
            raise
        raise runs.Interrupted(f"interrupted; the work folders swept so far stay in {keep}") from None
    except api.TargetFailed as error:
        return fail(f"the program failed: {error}", 1)
    except (api.SweepError, ValueError) as error:
        return fail(f"error: {error}", 2)
    finally:
        progress.done()
    _record(result, scenarios_path, keep)
    return sweep_sources.report(result, source, tracker, fmt, held)


def _target_source(target_spec: str, check_spec: str, args: dict[str, str], tracker: str) -> sweep_sources.Source:
    """The user's own program and check."""
    target, check = _user_target(target_spec, check_spec, args)
    command = [*prog.current(), "sweep", "--target", target_spec, "--check", check_spec, "--tracker", tracker]
    command += [item for k, v in args.items() for item in ("--arg", f"{k}={v}")]
    return sweep_sources.Source(target, check, target.label, "-", command)


def _record(result: api.SweepResult, path: Path | None, keep: Path | None) -> None:
    """Every scenario as JSON lines, to --scenarios and into the --keep folder."""
    for target in (path, None if keep is None else keep / "scenarios.jsonl"):
        if target is not None:
            sweep_scenarios.write_jsonl(target, result)


def _replayed(label: str, scenario: api.ScenarioResult) -> int:
    """Print one re-run scenario; 0 when it left no duplicate, no loss, no broken property and was not stuck.

    2 for a point never passed.
    """
    unknown = sweep_scenarios.unknown_point(scenario)
    if unknown is not None:
        return fail(f"error: {unknown}", 2)
    click.echo(sweep_scenarios.replay_text(label, scenario), nl=False)
    o = scenario.outcome
    return 1 if scenario.unreached or o.dups or o.missing or o.stuck or any(c.broken for c in o.checked) else 0


def _user_target(target_spec: str, check_spec: str, args: dict[str, str]) -> tuple[api.Target, api.Check]:
    """The user's program and check; the current directory is where their modules are found."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    api.parse_entry_point(check_spec)
    return _program(target_spec, args), api.load_entry_point(check_spec)  # type: ignore[return-value]


def _program(target_spec: str, args: dict[str, str]) -> api.Target:
    """The program `target_spec` names: a module:function entry point, or a command line.

    `--arg` pairs reach the program as $CRASHSWEEP_ARGS (a JSON object) and name the row; the
    target's module declares the keys it takes (its CRASHSWEEP_ARGS), checked here.
    """
    here = os.getcwd()
    try:
        module_name, _ = api.parse_entry_point(target_spec)
    except ValueError:
        if args:
            raise ValueError(
                "--arg goes with --target module:function; a command takes its options on its own "
                'command line (--target "python agent.py --durability sync")'
            ) from None
        target = api.Target.command(target_spec)
    else:
        if args:  # the module is imported here (its import errors as one line), then read
            api.load_entry_point(target_spec)
            sweep_scenarios.check_declared(sys.modules[module_name], module_name, args)
        target = api.Target.entry_point(target_spec, path=[here])
    if args:
        shown = " ".join(shlex.quote(f"{k}={v}") for k, v in args.items())
        env = {**target.env, api.ARGS: json.dumps(args)}
        target = dataclasses.replace(target, env=env, label=f"{target.label} {shown}")
    return target
