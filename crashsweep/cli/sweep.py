"""`crashsweep sweep`: real code, real crashes.

`sweep` runs the real sweep (crashsweep.realsweep.sweep) of the reference loop of a design, or of the
user's own program (`--target module:function` or a command, with `--check module:function`),
and prints the explorer's columns. The command is a plan: its options become one checked
value (crashsweep.cli.sweep_plan: the combinations it refuses are one table there), handed to
its mode's function (crashsweep.cli.sweep_modes: sweep, --list-points, --determinism,
--crash). What `conform` (crashsweep.cli.conform) shares with it: the default matrix here, the
processes' options (crashsweep.cli.sweep_engines), the sweep's options and progress line.
Exit status: 0 when the invariants hold, 1 when one is violated or the program failed by
itself, 2 for bad input.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import click

from crashsweep.cli import formats, limits, sweep_cassette, sweep_engines, sweep_modes, sweep_plan, sweep_scenarios
from crashsweep.cli.options import depth_option, design_choice, group, job_option, tracker_option, upgrade_option
from crashsweep.cli.sweep_points import PointsChoice
from crashsweep.realsweep import api
from crashsweep.spec.retries import ONE_ATTEMPT
from crashsweep.variants import SEED_DESIGNS

DEFAULT_MATRIX = (
    *((seed.name, "keyed") for seed in SEED_DESIGNS),
    ("agent-loop", "keyed"),
    ("agent-loop", "keyless"),
)
"""The seed's five designs against a tracker that honours keys, and agent-loop against both trackers."""


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
PERSISTENCE_HELP = (
    "with --points syscalls --faults power-loss: what a power cut may leave (spec/PERSISTENCE.md): strict, one "
    "state a cut; ordered, a prefix of the calls since the last fsync; writeback, metadata ahead of data too; "
    "alice, ALICE's states, torn writes among them"
)
DURABILITY_HELP = "with --framework langgraph: when checkpoints are written  [default: async, LangGraph's]"
TRANSCRIPT_REPAIR_HELP = (
    "with --framework openai-agents: what a start repairs in the conversation it loads (spec/CONVERSATIONS.md 7)"
    "  [default: none]"
)
SCHEDULE_TO_CLOSE_HELP = (
    "with --framework temporal: the tool activities' schedule-to-close timeout; one-attempt: their start-to-close,"
    " a retry budget of one attempt (spec/RETRIES.md 1.8)  [default: none]"
)
SCENARIOS_HELP = "write every scenario (crash points, processes, counters, outcome) to this file as JSON lines"
CRASH_HELP = "re-run one scenario: the point each process dies at, in order (NAME, or NAME#K: its K-th pass)"
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
    " system calls, traced by a ptrace tracer of its own; from:FILE: the marks, crashed only at the points"
    " FILE lists (NAME#PASS a line, as --list-points shows them; the others are passed without a crash)"
)
POINTS_FILTER_HELP = (
    "with --points auto or syscalls: {} the points of these effect kinds (fsync, send, ...) or file/site globs"
)
UPGRADE_HELP = (
    "every restart runs this instead (a deploy between a crash and its restart): with --variant or --design a"
    " design's name or file, with --target a module:function or a command line"
)
STATE_KEY_HELP = (
    "module:function(World) -> World that blanks timestamps or random IDs before a world's digest (with dedup)"
)


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


WHAT_OPTIONS = group(
    design_choice("sweep the reference loop of this design (see the variants command)"),
    click.option("--target", "target_spec", help="sweep your own program: module:function, or a command line"),
    click.option(
        "--check", "check_spec", help="with --target: module:function(scenario) -> crashsweep.realsweep.sweep.Outcome"
    ),
    click.option("--arg", "target_args", multiple=True, metavar="KEY=VALUE", help=ARG_HELP),
    sweep_cassette.option(),
    click.option(
        "--framework", type=click.Choice(list(api.FRAMEWORKS)), help="sweep the built-in example agent on a framework"
    ),
    click.option(
        "--keys", type=click.Choice(("on", "off")), help="with --framework: send idempotency keys  [default: on]"
    ),
    click.option("--call-ids", type=click.Choice(api.CALL_IDS), help=CALL_IDS_HELP),
    click.option("--faults", "faults_text", metavar="K1,K2", help=FAULTS_HELP),
    click.option("--durability", type=click.Choice(api.DURABILITY), help=DURABILITY_HELP),
    click.option("--transcript-repair", type=click.Choice(api.TRANSCRIPT_REPAIRS), help=TRANSCRIPT_REPAIR_HELP),
    click.option("--schedule-to-close", type=click.Choice((ONE_ATTEMPT,)), help=SCHEDULE_TO_CLOSE_HELP),
    upgrade_option(UPGRADE_HELP),
    depth_option(with_faults=True, real=True),
    job_option(help="job file (with --variant or --framework)"),
    tracker_option(),
)
"""What is swept: the reference loop of a design, your own program or a framework's agent; its job and depth."""

RUN_OPTIONS = group(
    click.option("--timeout", type=limits.Seconds(1), default=120, show_default=True, help="seconds per process"),
    click.option("--state-key", "state_key_spec", metavar="MODULE:FUNCTION", help=STATE_KEY_HELP),
    click.option(
        "--points",
        "points_text",
        type=PointsChoice(),
        default="marked",
        show_default=True,
        help=POINTS_HELP,
    ),
    click.option(
        "--persistence",
        type=click.Choice(list(api.PERSISTENCE_MODELS)),
        default="strict",
        show_default=True,
        help=PERSISTENCE_HELP,
    ),
    click.option("--points-include", default="", metavar="K1,GLOB", help=POINTS_FILTER_HELP.format("keep only")),
    click.option("--points-exclude", default="", metavar="K1,GLOB", help=POINTS_FILTER_HELP.format("drop")),
)
"""How each process runs and where its crash points are (beside sweep_engines.process_options)."""

OUTPUT_OPTIONS = group(
    formats.format_option(formats.SWEEP),
    click.option(
        "--keep", metavar="DIR", callback=sweep_scenarios.keep_folder, help="keep every work dir and database here"
    ),
    click.option(
        "--scenarios", "scenarios_path", metavar="FILE", callback=sweep_scenarios.scenarios_file, help=SCENARIOS_HELP
    ),
)
"""What the sweep prints and writes."""

MODE_OPTIONS = group(
    click.option("--crash", "crash_points", multiple=True, metavar="POINT[#K]", help=CRASH_HELP),
    click.option("--list-points", is_flag=True, help=LIST_POINTS_HELP),
    click.option("--determinism", is_flag=True, help=DETERMINISM_HELP),
    click.option("--no-determinism", "skip_determinism", is_flag=True, help=NO_DETERMINISM_HELP),
)
"""What runs instead of a sweep (one crash re-run, the points listed, determinism checked), or before it."""


@click.command()
@WHAT_OPTIONS
@sweep_engines.process_options
@RUN_OPTIONS
@OUTPUT_OPTIONS
@MODE_OPTIONS
@stops_on_sigterm
def sweep(**options: Any) -> int:
    """Kill real processes at every crash point, up to --depth crashes, and count what happened."""
    plan = sweep_plan.plan(**options)
    with api.shared_zygotes():  # a mode that sweeps more than once (determinism, listing) imports the program once
        return sweep_modes.run(plan)
