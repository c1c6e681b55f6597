"""Options and checks shared by the commands that explore: --variant, --depth, --job, --tracker."""

from __future__ import annotations

from pathlib import Path

import click

from crashsweep import runs
from spec.tracker import TRACKERS
from variants import UnknownVariantError, design

FORMATS = ("text", "json", "markdown")


def check_variant(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --variant callback: an unknown name is a usage error that lists the known ones."""
    if value is not None:
        try:
            design(value)
        except UnknownVariantError as error:
            raise click.BadParameter(str(error)) from None
    return value


def job_options(f: click.decorators.FC) -> click.decorators.FC:
    """The options every exploring command shares."""
    for option in reversed(
        (
            click.option(
                "--depth", type=click.IntRange(min=1), default=2, show_default=True, help="most crashes per scenario"
            ),
            click.option(
                "--job",
                "job_path",
                type=click.Path(path_type=Path, dir_okay=False),
                help="job file (TOML); default: the built-in triage job",
            ),
            click.option(
                "--tracker",
                type=click.Choice(list(TRACKERS)),
                default="keyed",
                show_default=True,
                help="what the tracker offers",
            ),
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
