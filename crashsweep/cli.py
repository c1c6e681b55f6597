"""The `crashsweep` command: explore, compare and list loop designs.

Exit status: 0 when every invariant holds, 1 when one is violated (or never exercised),
2 for bad usage or input, 3 for an internal error, 130 when interrupted. Every error is one line on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from crashsweep import runs
from explorer.model import ModelDefinitionError
from explorer.search import ExplorationInterrupted, StateLimitExceeded
from reports import table
from spec.job import JobError
from spec.tracker import TRACKERS
from variants import DESIGNS, SEED_DESIGNS, UnknownVariantError, design

FORMATS = ("text", "json", "markdown")


def _variant(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
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


def _choices(depth: int, job_path: Path | None, tracker: str, max_states: int) -> runs.Choices:
    job, source = runs.read_job(job_path)
    return runs.Choices(job, source, runs.tracker_kind(tracker), depth, max_states)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="crashsweep")
def cli() -> None:
    """Crash a durable agent loop at every point, up to N crashes, and count what it does."""


@cli.command()
@click.option("--variant", required=True, callback=_variant, help="design to explore (see `crashsweep variants`)")
@job_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def explore(variant: str, depth: int, job_path: Path | None, tracker: str, max_states: int, fmt: str) -> int:
    """Explore one design: its row, graph size and verdicts."""
    choices = _choices(depth, job_path, tracker, max_states)
    _, summary = runs.run(variant, choices)
    render = {"text": table.row_text, "json": table.to_json, "markdown": table.row_markdown}[fmt]
    click.echo(render(summary), nl=False)
    return 0 if summary.holds else 1


@cli.command()
@job_options
@click.option("--variants", "names", help="comma-separated designs (default: the five seed designs)")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def compare(depth: int, job_path: Path | None, tracker: str, max_states: int, names: str | None, fmt: str) -> int:
    """The table: one row per design, in the seed's column order."""
    choices = _choices(depth, job_path, tracker, max_states)
    chosen = [n.strip() for n in names.split(",")] if names else [d.name for d in SEED_DESIGNS]
    for name in chosen:
        design(name)  # an unknown name fails before any exploring starts
    rows = [runs.run(name, choices)[1] for name in chosen]
    render = {"text": table.table_text, "json": table.to_json, "markdown": table.table_markdown}[fmt]
    click.echo(render(rows), nl=False)
    return 0 if all(row.holds for row in rows) else 1


@cli.command(name="variants")
def list_variants() -> int:
    """The designs, each with a one-line description."""
    width = max(len(name) for name in DESIGNS)
    for name, item in DESIGNS.items():
        click.echo(f"{name:<{width}}  {item.summary}")
    return 0


# Commands that live in modules of their own are registered here, one line each:
# cli.add_command(module.command)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; turn every user-caused error into one line and an exit status."""
    try:
        result = cli.main(args=argv, prog_name="crashsweep", standalone_mode=False)
    except click.exceptions.UsageError as error:
        click.echo(f"crashsweep: error: {error.format_message()}", err=True)
        return 2
    except (JobError, UnknownVariantError, ModelDefinitionError) as error:
        click.echo(f"crashsweep: error: {error}", err=True)
        return 2
    except StateLimitExceeded as error:
        click.echo(f"crashsweep: {error}", err=True)
        return 2
    except ExplorationInterrupted as error:
        click.echo(f"crashsweep: {error}; nothing was written", err=True)
        return 130
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("crashsweep: interrupted; nothing was written", err=True)
        return 130
    except click.ClickException as error:
        click.echo(f"crashsweep: error: {error.format_message()}", err=True)
        return 2
    except BrokenPipeError:
        return 1
    except Exception as error:  # a bug of crashsweep's, not of the user's input
        if os.environ.get("CRASHSWEEP_DEBUG"):
            raise
        click.echo(
            f"crashsweep: internal error: {type(error).__name__}: {error} (CRASHSWEEP_DEBUG=1 shows where)", err=True
        )
        return 3
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
