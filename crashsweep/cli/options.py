"""Options and checks shared by the commands.

--variant/--design, --depth, --job, --tracker, --max-states, --out, --progress, --faults, --call-ids.
The groups the commands repeat are one decorator each (`group` makes one of several options):
`design_choice` (--variant or --design), `job_options` (what an exploration takes) and
`model_options` (both: explore, replay, view). The real side's group (--workers, --spawn,
--dedup, --kill, --engine, --address) lives with the engines (crashsweep.cli.sweep_engines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import click
from click.decorators import FC

from crashsweep.cli import outdir, runs, shipped, variant_names
from crashsweep.cli.limits import max_states, model_depth, real_depth
from crashsweep.cli.shipped import ShippedFile
from crashsweep.spec.design import Design
from crashsweep.spec.durability import FSYNCS, UNREADABLES
from crashsweep.spec.faults import CALL_IDS, FAULTS, FaultError, parse_call_ids, parse_faults
from crashsweep.spec.policy import PolicyError
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import UnknownVariantError, design, names
from crashsweep.variants.design_file import load_design


def group(*options: Callable[[FC], FC]) -> Callable[[FC], FC]:
    """Several options as one decorator; `--help` lists them in the order given."""

    def apply(f: FC) -> FC:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


def check_variant(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --variant callback: an unknown name is a usage error that lists the known ones (and a close one)."""
    if value is not None:
        try:
            design(value)
        except UnknownVariantError as error:
            if value in shipped.files("design"):
                raise click.BadParameter(f"{value} is a shipped design: use --design {value}") from None
            raise click.BadParameter(variant_names.unknown(error)) from None
    return value


VARIANT_HELP = "design to explore (see the variants command)"


def variant_option(help: str = VARIANT_HELP) -> Callable[[FC], FC]:
    """--variant NAME: a built-in design or preset, checked as it is parsed and completed by the shell."""
    return click.option("--variant", callback=check_variant, shell_complete=variant_names.complete_variant, help=help)


def design_option() -> Callable[[FC], FC]:
    """--design FILE: a design file (TOML) of policies, instead of --variant; or a shipped one's name."""
    return click.option(
        "--design",
        "design_path",
        type=ShippedFile("design"),
        help="design file (TOML) of policies, instead of --variant; or a shipped one's name, e.g. my-design",
    )


def design_choice(variant_help: str = VARIANT_HELP) -> Callable[[FC], FC]:
    """--variant NAME or --design FILE: the design a command works on (exactly one: `chosen_design`)."""
    return group(variant_option(variant_help), design_option())


def chosen_design(variant: str | None, design_path: Path | None) -> str | Design:
    """The variant's name, or the design read from --design (PolicyError on a bad file); exactly one."""
    if variant is not None and design_path is not None:
        raise click.UsageError("give --variant NAME or --design FILE, not both")
    if variant is None and design_path is None:
        raise click.UsageError("give either --variant NAME or --design FILE")
    if design_path is not None:
        return load_design(design_path).design
    assert variant is not None
    return variant


def check_out(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """An --out callback: the directory as crashsweep.cli.outdir will publish it, refused before any search."""
    if value is None:
        return None
    try:
        return outdir.check(value)
    except outdir.OutDirError as error:
        raise click.BadParameter(str(error)) from None


def out_option(help: str) -> Callable[[FC], FC]:
    """--out DIR: a directory written whole or not at all (crashsweep.cli.outdir)."""
    return click.option(
        "--out", "out_dir", type=click.Path(path_type=Path), callback=check_out, metavar="DIR", help=help
    )


def progress_option() -> Callable[[FC], FC]:
    """--progress: a progress line every few seconds even where stderr is not a terminal (a CI log)."""
    return click.option(
        "--progress",
        is_flag=True,
        help=f"print a progress line every {runs.PROGRESS_EVERY:g} s even when stderr is not a terminal",
    )


def split_names(value: str, option: str) -> list[str]:
    """The comma-separated names of `value`, stripped; a usage error for an empty list or an empty name."""
    names = [name.strip() for name in value.split(",")]
    if not value.strip():
        raise click.BadParameter("expected comma-separated names, got nothing", param_hint=f"'{option}'")
    if "" in names:
        raise click.BadParameter(
            f"{value!r} has an empty name (at position {names.index('') + 1})", param_hint=f"'{option}'"
        )
    return names


def depth_option(
    default: int = 2, *, with_faults: bool = False, real: bool = False, why: str = ""
) -> Callable[[FC], FC]:
    """--depth: the most crashes per scenario (for a command with --faults: crashes and faults together).

    Bounded (crashsweep.cli.limits): a real sweep (`real`) more tightly than a search of the model.
    `why`: the reason for a default other than 2, said in --help.
    """
    more = " (with --faults: crashes and faults together)" if with_faults else ""
    return click.option(
        "--depth",
        type=real_depth() if real else model_depth(),
        default=default,
        show_default=True,
        help=f"most crashes per scenario{more}{f'; {why}' if why else ''}",
    )


_FAULTS_KEY, _CALL_IDS_KEY = "crashsweep.faults", "crashsweep.call_ids"


def _keep_faults(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """--faults callback: parse (a bad kind is a usage error naming the known ones) and keep it."""
    try:
        ctx.meta[_FAULTS_KEY] = parse_faults(value or "")
    except FaultError as error:
        wrong = next(name.strip() for name in (value or "").split(",") if name.strip() not in FAULTS)
        raise click.BadParameter(f"{error}{variant_names.did_you_mean(wrong, FAULTS)}") from None


def _keep_call_ids(ctx: click.Context, param: click.Parameter, value: str) -> None:
    """--call-ids callback: keep whether the model's call IDs are fresh."""
    try:
        ctx.meta[_CALL_IDS_KEY] = parse_call_ids(value)
    except FaultError as error:
        raise click.BadParameter(str(error)) from None


def fault_options(f: FC) -> FC:
    """--faults k1,k2 and --call-ids stable|fresh (spec/FAULTS.md), read back with `environment`.

    Kept in the command's context rather than passed as arguments, so that every command that
    explores takes them with its shared options and reads them through `choices_of`.
    """
    f = click.option(
        "--call-ids",
        type=click.Choice(CALL_IDS),
        default="stable",
        show_default=True,
        expose_value=False,
        callback=_keep_call_ids,
        help=f"the model's call IDs when asked again: {' or '.join(CALL_IDS)}",
    )(f)
    return click.option(
        "--faults",
        metavar="K1,K2",
        expose_value=False,
        callback=_keep_faults,
        help=f"faults beside crashes, each a move of the depth: {', '.join(FAULTS)}",
    )(f)


_FULL_KEY = "crashsweep.full_graph"


def _keep_full(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--no-projection callback: keep whether the command explores the full graph."""
    ctx.meta[_FULL_KEY] = value


def projection_option(f: FC) -> FC:
    """--no-projection: one node per state (the full graph), read back with `projection`."""
    return click.option(
        "--no-projection",
        is_flag=True,
        expose_value=False,
        callback=_keep_full,
        help="merge no states whose futures are alike: the full graph (same figures; states and edges differ)",
    )(f)


def projection() -> bool:
    """Whether the current command merges states by the model's state key (no --no-projection)."""
    ctx = click.get_current_context(silent=True)
    return not (ctx is not None and ctx.meta.get(_FULL_KEY, False))


def environment() -> tuple[tuple[str, ...], bool]:
    """The fault kinds and whether call IDs are fresh, as the current command's options gave them."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    return meta.get(_FAULTS_KEY, ()), meta.get(_CALL_IDS_KEY, False)


def job_option(
    help: str = "job file (TOML), or a shipped job's name, e.g. one-write; default: the built-in triage job",
) -> Callable[[FC], FC]:
    """--job FILE, read with `runs.read_job`; a shipped job's name or docs path also (crashsweep.cli.shipped)."""
    return click.option("--job", "job_path", type=ShippedFile("job"), help=help)


def tracker_option() -> Callable[[FC], FC]:
    """--tracker: one of spec's tracker kinds, keyed by default."""
    return click.option(
        "--tracker",
        type=click.Choice(list(TRACKERS)),
        default="keyed",
        show_default=True,
        help="what the tracker offers",
    )


def job_options(f: FC) -> FC:
    """The options every exploring command shares: --depth, --job, --tracker, the faults, --max-states."""
    return group(
        depth_option(with_faults=True),
        job_option(),
        tracker_option(),
        fault_options,
        projection_option,
        click.option(
            "--max-states",
            type=max_states(),
            default=runs.DEFAULT_MAX_STATES,
            show_default=True,
            help="stop (exit 2) beyond this many states",
        ),
    )(f)


def model_options(variant_help: str = VARIANT_HELP) -> Callable[[FC], FC]:
    """The design and its exploration's options (`design_choice`, then `job_options`): explore, replay, view."""
    return group(design_choice(variant_help), job_options)


def choices_of(
    depth: int, job_path: Path | None, tracker: str, max_states: int, *, progress: bool = False
) -> runs.Choices:
    """The user's choices from the shared options (reads the job file: JobError on a bad one)."""
    job, source = runs.read_job(job_path)
    faults, fresh_ids = environment()
    kind = runs.tracker_kind(tracker)
    return runs.Choices(job, source, kind, depth, max_states, faults, fresh_ids, progress, projection())


# Durability (spec/FAULTS.md section 6): the designs' fsync policy and unreadable-checkpoint choice.


def durability_options(f: FC) -> FC:
    """--fsync and --unreadable: give every row's design this fsync policy / unreadable-checkpoint choice."""
    f = click.option(
        "--unreadable",
        type=click.Choice(UNREADABLES),
        default=None,
        help="what each design does on an unreadable checkpoint (default: the design's own, ask-person)",
    )(f)
    return click.option(
        "--fsync",
        type=click.Choice(FSYNCS),
        default=None,
        help="each design's fsync policy, e.g. with --faults power-loss (default: the design's own, none)",
    )(f)


def check_durability(fsync: str | None, unreadable: str | None) -> None:
    """Refuse --unreadable fresh-run with an fsync policy that never leaves the checkpoint unreadable."""
    if unreadable not in (None, "ask-person") and fsync not in (None, "none"):
        raise click.UsageError(
            f"--unreadable {unreadable}: only --fsync none can leave the checkpoint unreadable (not {fsync})"
        )


# A deploy between a crash and its restart (spec/RETRIES.md section 2).

UPGRADE_HELP = (
    "every restart runs this design instead (a deploy between a crash and its restart): a design's name, "
    "or a design file"
)


HINT = "'--upgrade-to'"


def upgrade_option(help: str = UPGRADE_HELP) -> Callable[[FC], FC]:
    """--upgrade-to DESIGN: the design (or program) every restart runs."""
    return click.option("--upgrade-to", "upgrade_to", metavar="DESIGN", help=help)


def upgrade_version(value: str | None) -> tuple[str, Path | None] | None:
    """The design --upgrade-to names, as (its name, its design file or None); a bad one is refused before any work."""
    if value is None:
        return None
    if value in names():
        return value, None
    path = shipped.find(value, "design")
    if not path.exists() and "/" not in value and not value.endswith(".toml"):
        known = ", ".join(names())
        raise click.BadParameter(f"{value!r} is neither a design's name ({known}) nor a design file", param_hint=HINT)
    try:
        return load_design(path).name, path
    except PolicyError as error:
        raise click.BadParameter(str(error), param_hint=HINT) from None


def upgraded_design(version: tuple[str, Path | None] | None) -> str | Design | None:
    """The design a model's restarts run, from `upgrade_version`'s value."""
    if version is None:
        return None
    name, path = version
    return name if path is None else load_design(path).design


def refuse_with_upgrade(version: tuple[str, Path | None] | None, faults: tuple[str, ...], first: Design) -> None:
    """RETRIES.md 2 rule 3: a deploy goes with neither a pause nor a timeout layer (one line, exit 2)."""
    if version is None:
        return
    if "pause" in faults:
        raise click.UsageError("--upgrade-to runs every restart on the new design: it takes no --faults pause")
    then = upgraded_design(version)
    for chosen in (first, design(then) if isinstance(then, str) else then):
        if chosen is not None and any(layer.on == "timeout" for layer in chosen.retries):
            raise click.UsageError(f"--upgrade-to: {chosen.name!r} retries on a timeout beside a live attempt")


def with_upgrade(choices: runs.Choices, value: str | None, chosen: str | Design) -> runs.Choices:
    """`choices` whose restarts run --upgrade-to's design; refused (exit 2) before any work when it cannot be."""
    version = upgrade_version(value)
    if version is None:
        return choices
    refuse_with_upgrade(version, choices.faults, design(chosen) if isinstance(chosen, str) else chosen)
    return replace(choices, upgrade=upgraded_design(version))
