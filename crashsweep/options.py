"""Options and checks shared by the commands: --variant/--design, --depth, --job, --tracker, --max-states."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
from click.decorators import FC

from crashsweep import runs
from spec.design import Design
from spec.tracker import TRACKERS
from variants import UnknownVariantError, design
from variants.design_file import load_design

FORMATS = ("text", "json", "markdown")


def check_variant(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --variant callback: an unknown name is a usage error that lists the known ones."""
    if value is not None:
        try:
            design(value)
        except UnknownVariantError as error:
            raise click.BadParameter(str(error)) from None
    return value


def design_option() -> Callable[[FC], FC]:
    """--design FILE: a design file (TOML) of policies, instead of --variant."""
    return click.option(
        "--design",
        "design_path",
        type=click.Path(path_type=Path, dir_okay=False),
        help="design file (TOML) of policies, instead of --variant (see README: Your own design)",
    )


def chosen_design(variant: str | None, design_path: Path | None) -> str | Design:
    """The variant's name, or the design read from --design (PolicyError on a bad file); exactly one."""
    if (variant is None) == (design_path is None):
        raise click.UsageError("give either --variant NAME or --design FILE")
    if design_path is not None:
        return load_design(design_path).design
    assert variant is not None
    return variant


def depth_option(default: int = 2) -> Callable[[FC], FC]:
    """--depth: the most crashes per scenario."""
    return click.option(
        "--depth", type=click.IntRange(min=1), default=default, show_default=True, help="most crashes per scenario"
    )


def job_option(help: str = "job file (TOML); default: the built-in triage job") -> Callable[[FC], FC]:
    """--job FILE, read with `runs.read_job`."""
    return click.option("--job", "job_path", type=click.Path(path_type=Path, dir_okay=False), help=help)


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
    """The options every exploring command shares."""
    for option in reversed(
        (
            depth_option(),
            job_option(),
            tracker_option(),
            click.option(
                "--max-states",
                type=click.IntRange(min=1),
                default=runs.DEFAULT_MAX_STATES,
                show_default=True,
                help="stop (exit 2) beyond this many states",
            ),
        )
    ):
        f = option(f)
    return f


def choices_of(depth: int, job_path: Path | None, tracker: str, max_states: int) -> runs.Choices:
    """The user's choices from the shared options (reads the job file: JobError on a bad one)."""
    job, source = runs.read_job(job_path)
    return runs.Choices(job, source, runs.tracker_kind(tracker), depth, max_states)
