"""`crashsweep sweep` as a plan: its options as one value, the combinations it refuses, its mode.

The command's options arrive as `Given` (as typed, each already checked alone by its type or
callback). `RULES` states once every combination of them the sweep refuses: each rule a
predicate and its one line, checked in order by `plan` before anything is read or run (exit
2). `plan` then reads what the options name (the --arg pairs, --points, --crash, --faults,
--upgrade-to, the design file, --state-key; a bad one is one line and exit 2 too) into a
`SweepRequest`: what to run, on what and how, and which mode runs it (one function each,
crashsweep.cli.sweep_modes).
"""

from __future__ import annotations

import enum
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from crashsweep.cli import sweep_cassette, sweep_engines, sweep_scenarios, sweep_sources
from crashsweep.cli.formats import TEXT
from crashsweep.realsweep import api
from crashsweep.spec import files, points_file
from crashsweep.spec.faults import FaultError, parse_faults
from crashsweep.spec.points_file import PointList
from crashsweep.variants.design_file import load_design

STRICT = "strict"
"""--persistence's default: one state a cut (spec/PERSISTENCE.md)."""


class Mode(enum.Enum):
    """What the command runs: a sweep, or instead one of the jobs that run no sweep."""

    SWEEP = "sweep"
    LIST_POINTS = "list-points"
    """--list-points: one uninterrupted run, its crash points listed."""
    DETERMINISM = "determinism"
    """--determinism: each start world of a depth-1 sweep run twice, and compared."""
    CRASH = "crash"
    """--crash: one scenario re-run, the processes dying at the points given."""


@dataclass(frozen=True, slots=True)
class Given:
    """The sweep command's options as given, under click's parameter names (what, how, what instead)."""

    variant: str | None
    design_path: Path | None
    target_spec: str | None
    check_spec: str | None
    target_args: tuple[str, ...]
    cassette: Path | None
    framework: str | None
    keys: str | None
    call_ids: str | None
    faults_text: str | None
    durability: str | None
    transcript_repair: str | None
    schedule_to_close: str | None
    upgrade_to: str | None
    depth: int
    job_path: Path | None
    tracker: str
    workers: int | None
    spawn: str
    dedup: bool
    kill: bool
    engine_name: str
    address: str | None
    state_key_spec: str | None
    timeout: float
    points_text: str
    persistence: str
    points_include: str
    points_exclude: str
    fmt: str
    keep: Path | None
    scenarios_path: Path | None
    crash_points: tuple[str, ...]
    list_points: bool
    determinism: bool
    skip_determinism: bool

    @property
    def sources(self) -> int:
        """How many of the four sources were named (--variant, --design, --target, --framework)."""
        return sum(x is not None for x in (self.variant, self.design_path, self.target_spec, self.framework))

    @property
    def reference_loop(self) -> bool:
        """Whether the reference loop is swept (--variant or --design), which takes every fault."""
        return self.variant is not None or self.design_path is not None

    @property
    def traced(self) -> bool:
        """Whether the program's points are its system calls (--points syscalls)."""
        return not self.listing and "syscalls" in self.points_text.split(",")

    @property
    def listing(self) -> bool:
        """Whether a file lists the points crashes are tried at (--points from:FILE; read by `plan`)."""
        return self.points_text.startswith(points_file.FROM)

    @property
    def fault_names(self) -> frozenset[str]:
        """The fault kinds --faults names, as written (their check comes after the rules)."""
        return frozenset(name.strip() for name in (self.faults_text or "").split(","))

    @property
    def cut(self) -> bool:
        """Whether --crash re-runs a power cut (with --faults power-loss): the row's "power-loss at NAME#K"."""
        return bool(self.crash_points) and self.fault_names == {"power-loss"}

    @property
    def persisting(self) -> bool:
        """Whether a model other than strict chooses what a power cut leaves (--persistence)."""
        return self.persistence != STRICT

    @property
    def named_states(self) -> bool:
        """Whether some --crash names a crash state ("NAME#K / state S")."""
        return any(api.split_state(point)[1] for point in self.crash_points)

    @property
    def local_only(self) -> str:
        """The options given that are about this machine's files, which the Ray engine does not take."""
        given = (("--crash", bool(self.crash_points)), ("--keep", self.keep is not None))
        return " or ".join(name for name, value in given if value)

    @property
    def one_run_extras(self) -> bool:
        """Whether --crash, --scenarios or --keep were given: a mode that runs no sweep takes none."""
        return bool(self.crash_points) or self.scenarios_path is not None or self.keep is not None


@dataclass(frozen=True, slots=True)
class Rule:
    """A combination the sweep refuses: when `refuses` holds of the options, `message` (its {g.*} filled in)."""

    refuses: Callable[[Given], bool]
    message: str

    def check(self, given: Given) -> None:
        """Refuse `given` in one line (a usage error: exit 2) when the rule applies."""
        if self.refuses(given):
            raise click.UsageError(self.message.format(g=given))


ONE_RUN_FORMATS = ("text", "json")
"""What a mode that runs no sweep (--list-points, --determinism) prints: a report, or JSON."""
_ONE_RUN = " or ".join(ONE_RUN_FORMATS)
_NO_EXTRAS = "it takes no --crash, --scenarios or --keep"

RULES: tuple[Rule, ...] = (
    Rule(lambda g: g.address is not None and g.engine_name != "ray", sweep_engines.ADDRESS_WITHOUT_RAY),
    Rule(lambda g: g.engine_name == "ray" and bool(g.local_only), sweep_engines.RAY_TAKES_NO.format("{g.local_only}")),
    Rule(
        lambda g: g.sources != 1,
        "give either --variant or --design (the reference loop), --target (your own program)"
        " or --framework (an example agent)",
    ),
    Rule(
        lambda g: g.target_spec is not None and (g.check_spec is None or g.job_path is not None),
        "--target needs --check module:function, and takes no --job",
    ),
    Rule(
        lambda g: g.target_spec is None and (g.check_spec is not None or bool(g.target_args)),
        "--check and --arg go with --target",
    ),
    Rule(lambda g: g.cassette is not None and g.reference_loop, sweep_cassette.WITH_REFERENCE_LOOP),
    Rule(
        lambda g: g.framework is None and (g.keys is not None or g.durability is not None),
        "--keys and --durability go with --framework",
    ),
    Rule(
        lambda g: g.call_ids is not None and g.target_spec is not None,
        "--call-ids goes with --framework, --variant or --design",
    ),
    Rule(
        lambda g: g.durability is not None and g.framework != "langgraph",
        "--durability goes with --framework langgraph",
    ),
    Rule(
        lambda g: g.transcript_repair is not None and g.framework != "openai-agents",
        "--transcript-repair goes with --framework openai-agents",
    ),
    Rule(
        lambda g: g.schedule_to_close is not None and g.framework != "temporal",
        "--schedule-to-close goes with --framework temporal",
    ),
    Rule(lambda g: g.list_points and g.determinism, "give --list-points or --determinism, not both"),
    Rule(
        lambda g: (g.list_points or g.determinism) and g.engine_name != "local",
        "--list-points and --determinism run on this machine: they take no --engine ray",
    ),
    Rule(
        lambda g: g.list_points and g.one_run_extras,
        f"--list-points runs the program once, uninterrupted: {_NO_EXTRAS}",
    ),
    Rule(
        lambda g: g.list_points and g.fmt not in ONE_RUN_FORMATS,
        f"--list-points prints {_ONE_RUN}, not {{g.fmt}}",
    ),
    Rule(lambda g: g.determinism and g.one_run_extras, f"--determinism runs its own scenarios: {_NO_EXTRAS}"),
    Rule(
        lambda g: g.determinism and g.fmt not in ONE_RUN_FORMATS,
        f"--determinism prints {_ONE_RUN}, not {{g.fmt}}",
    ),
    Rule(
        lambda g: bool(g.crash_points) and (g.scenarios_path is not None or g.fmt != TEXT.name),
        "--crash re-runs one scenario: it takes no --scenarios and prints text",
    ),
    Rule(
        lambda g: (
            g.faults_text is not None
            and not g.reference_loop
            and not (g.traced and g.faults_text.strip() == "power-loss")
            and not (g.framework == "openai-agents" and g.faults_text.strip() == "trim-context")
        ),
        "--faults goes with --variant or --design (the reference loop); your own program takes"
        " --faults power-loss with --points syscalls; --framework openai-agents takes --faults trim-context",
    ),
    Rule(
        lambda g: g.faults_text is not None and bool(g.crash_points) and not g.cut,
        "--crash re-runs a scenario of crashes, or with --faults power-loss a power cut: it takes no other --faults",
    ),
    Rule(
        lambda g: g.cut and len(g.crash_points) != 1,
        "--faults power-loss with --crash re-runs one power cut: give one --crash (NAME or NAME#K)",
    ),
    Rule(
        lambda g: g.persisting and not (g.traced and "power-loss" in g.fault_names),
        "--persistence {g.persistence} chooses what a power cut leaves at system calls: give --points syscalls"
        " --faults power-loss",
    ),
    Rule(
        lambda g: g.named_states and not (g.cut and g.persisting),
        "--crash names a crash state (NAME#K / state S) only to re-run a power cut under --persistence ordered"
        " or alice, with --faults power-loss",
    ),
    Rule(
        lambda g: g.cut and g.persisting and not g.named_states,
        "--persistence {g.persistence} re-runs one crash state of a cut: give --crash 'NAME#K / state S'",
    ),
    Rule(
        lambda g: "power-loss" in g.fault_names and g.points_text == "auto",
        "--faults power-loss cuts at marked or syscall points: give --points marked,auto",
    ),
    Rule(
        lambda g: g.listing and bool(g.points_include or g.points_exclude),
        "--points from:FILE crashes at the marked points FILE lists: it takes no --points-include or --points-exclude",
    ),
    Rule(
        lambda g: g.listing and g.faults_text is not None,
        "--points from:FILE chooses where crashes strike: it takes no --faults (a fault's chances are at every point)",
    ),
    Rule(
        lambda g: (g.state_key_spec is not None or g.kill) and not g.dedup,
        "--state-key and --kill go with dedup (drop --no-dedup)",
    ),
    Rule(
        lambda g: g.upgrade_to is not None and g.framework is not None,
        "--upgrade-to goes with --variant, --design or --target (not --framework)",
    ),
)
"""Every combination of options the sweep refuses, in the order they are checked (the first one applies)."""


@dataclass(frozen=True, slots=True)
class SweepRequest:
    """A sweep command checked and read: the options, the mode, and the values its options name."""

    given: Given
    mode: Mode
    args: tuple[tuple[str, str], ...]
    """The --arg pairs, in order (a later one of the same key replaces the earlier)."""
    points: api.Points
    crashes: tuple[tuple[str, int], ...]
    """--crash's points, as (name, pass)."""
    nemesis: api.Nemesis
    upgrade: tuple[str, Path | None] | None
    """The reference loop's --upgrade-to design (name, design file); your own program's is made with it."""
    variant: str | None
    """The reference loop's design by name: --variant's, or the design file's."""
    state_key: api.StateKey | None
    dedup: bool
    """Whether the sweep merges worlds: asked, and possible (not under power loss or pause, nor for a
    framework whose state lives outside the work folder)."""
    cut_state: int = 0
    """The crash state a re-run power cut leaves (--crash "NAME#K / state S"), 0 under strict."""
    cassette: Path | None = None
    """The cassette the model plays (--cassette), read and checked: its absolute path."""
    listed: PointList | None = None
    """--points from:FILE's points, read and checked: a crash is tried only at these (None: at every point)."""

    @property
    def arguments(self) -> dict[str, str]:
        """The --arg pairs as $CRASHSWEEP_ARGS carries them."""
        return dict(self.args)

    @property
    def points_args(self) -> list[str]:
        """The options that name the points again in a printed command: --points from:FILE with FILE as given."""
        return ["--points", self.given.points_text] if self.listed is not None else self.points.args()

    def options(self) -> api.SweepOptions:
        """The real sweep's options."""
        g = self.given
        made = sweep_options(
            g.depth, g.workers, g.keep, g.timeout, g.tracker, g.spawn, self.dedup, self.state_key, g.kill
        )
        every = g.scenarios_path is not None or g.keep is not None
        return replace(made, every=every, points=self.points, listed=self.listed)


def plan(**options: Any) -> SweepRequest:
    """The request the sweep command's options (click's parameters) make; refused in one line before any work.

    The rules first, then the values the options name, each read once: a bad one is a usage
    error, and so are a design the reference loop does not implement and a bad design file.
    """
    given = Given(**options)
    for rule in RULES:
        rule.check(given)
    args = _args(given.target_args)
    points, listed = _points(given)
    named = [api.split_state(point) for point in given.crash_points]
    crashes = tuple(sweep_scenarios.parse_crash(point) for point, _ in named)
    _crashes_listed(crashes, listed)
    cut_state = named[0][1] if given.cut and named else 0
    nemesis = _nemesis(given)
    upgrade = sweep_sources.reference_upgrade(given.upgrade_to, given.variant, given.design_path, nemesis.faults)
    variant = given.variant
    if given.design_path is not None:
        variant = load_design(given.design_path).name  # a bad design file fails before any process starts
    state_key = _state_key(given.state_key_spec)
    cassette = sweep_cassette.read(given.cassette)  # a bad cassette fails before any process starts
    if given.variant is not None:
        sweep_sources.reference_design(given.variant)
    dedup = given.dedup and not nemesis.every_scenario  # power loss: every scenario of one move, from scratch
    dedup = dedup and given.framework not in api.FROM_SCRATCH_FRAMEWORKS  # a server's state outside the work folder
    request = SweepRequest(
        given, _mode(given), args, points, crashes, nemesis, upgrade, variant, state_key, dedup, cut_state, cassette
    )
    return replace(request, listed=listed)


def _points(given: Given) -> tuple[api.Points, PointList | None]:
    """--points and its filters; from:FILE: the marks, and FILE read and checked (bad: one line naming FILE:LINE)."""
    if not given.listing:
        try:
            return api.Points.parse(given.points_text, given.points_include, given.points_exclude), None
        except ValueError as error:
            raise click.UsageError(str(error)) from None
    try:
        return api.Points(), points_file.read(given.points_text.removeprefix(points_file.FROM))
    except points_file.PointsFileError as error:
        raise click.UsageError(str(error)) from None


def _crashes_listed(crashes: tuple[tuple[str, int], ...], listed: PointList | None) -> None:
    """Refuse a --crash at a point --points from:FILE does not list: no crash is tried there."""
    if listed is None:
        return
    for name, k in crashes:
        if not listed.keeps(name, k):
            point = f"{name}#{k}"
            raise click.UsageError(f"--crash {point!r}: {listed.source} does not list it (--points from:FILE)")


def _args(pairs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The --arg pairs; a key that holds a control, invisible or reordering character is refused.

    The key names the row and the re-run command: one that reads as another must not sweep.
    """
    args = sweep_scenarios.parse_args(pairs)
    for key in args:
        files.printable(f"--arg {key!r}", key, click.UsageError)
    return tuple(args.items())


def _mode(given: Given) -> Mode:
    """The mode the options ask for (the rules have refused two at once)."""
    if given.list_points:
        return Mode.LIST_POINTS
    if given.determinism:
        return Mode.DETERMINISM
    return Mode.CRASH if given.crash_points else Mode.SWEEP


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
    """The real sweep's options from the command line's (shared with `conform`)."""
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


def _nemesis(given: Given) -> api.Nemesis:
    """The faults and call IDs of a sweep (the rules refused faults the program cannot take), checked."""
    fresh = given.call_ids == "fresh"
    if given.faults_text is None:
        return api.Nemesis((), given.reference_loop and fresh)
    try:
        nemesis = api.Nemesis(parse_faults(given.faults_text), fresh, persistence=given.persistence)
        nemesis.check(1 if given.cut else given.depth, given.dedup)  # a re-run cut is a scenario of one move
    except (FaultError, api.NemesisError) as error:
        raise click.BadParameter(str(error), param_hint="'--faults'") from None
    return nemesis


def _state_key(spec: str | None) -> api.StateKey | None:
    """The --state-key function, loaded before any process starts (bad: one line, exit 2).

    Its signature is checked too: a function that cannot take one World fails only once the
    sweep calls it, deep in a run (an internal error, exit 3).
    """
    if spec is None:
        return None
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        api.parse_entry_point(spec)
        key = api.load_entry_point(spec)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--state-key") from None
    try:
        signature = inspect.signature(key)
    except (TypeError, ValueError):  # a builtin without a signature: it is called as it is
        return key  # type: ignore[return-value]
    try:
        signature.bind(object())  # called with one World by every process, after the sweep began
    except TypeError:
        name = getattr(key, "__name__", spec)
        why = "cannot take one argument: a state key takes a World and returns one"
        raise click.BadParameter(f"{spec}: {name}{signature} {why}", param_hint="--state-key") from None
    return key  # type: ignore[return-value]
