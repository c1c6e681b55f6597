"""The `crashsweep` command: explore, compare and list loop designs.

Exit status: 0 when every invariant holds, 1 when one is violated (or never exercised),
2 for bad usage or input, 3 for an internal error, 130 when interrupted. Every error is one line on stderr;
a command missing (a bare `crashsweep`, `crashsweep tracker`) prints the help on stdout, exit 2. The
top-level --help lists them all (crashsweep.cli.helptext).
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import click

from crashsweep.cli import artifacts, clock, colour, export, formats, helptext, prog, runs, variant_names
from crashsweep.cli.colour import color_option
from crashsweep.cli.lazy import LazyGroup
from crashsweep.cli.options import (
    check_durability,
    choices_of,
    chosen_design,
    durability_options,
    job_options,
    model_options,
    out_option,
    progress_option,
    split_names,
    upgrade_option,
    with_upgrade,
)
from crashsweep.cli.outdir import OutDirError
from crashsweep.cli.shipped import ShippedFile
from crashsweep.explorer.model import ModelDefinitionError
from crashsweep.explorer.search import StateLimitExceeded
from crashsweep.reports import table
from crashsweep.reports.colour import painting
from crashsweep.reports.summary import Summary
from crashsweep.spec.design import Design
from crashsweep.spec.job import JobError
from crashsweep.spec.policy import PolicyError
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import SEED_DESIGNS, UnknownVariantError, design
from crashsweep.variants.design_file import load_design

# Commands that live in modules of their own, one line each: imported when used (crashsweep.cli.lazy).
COMMANDS = {
    "audit": "crashsweep.cli.audit:audit",
    "conform": "crashsweep.cli.conform:conform",
    "design": "crashsweep.cli.design:design",
    "examples": "crashsweep.cli.examples:examples",
    "from-trace": "crashsweep.cli.from_trace:from_trace",
    "frontier": "crashsweep.cli.frontier:frontier_command",
    "fuzz": "crashsweep.cli.fuzz:fuzz",
    "replay": "crashsweep.cli.view:replay",
    "sweep": "crashsweep.cli.sweep:sweep",
    "tracker": "crashsweep.cli.tracker:tracker",
    "view": "crashsweep.cli.view:view",
}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    loaded=lambda command: _with_color(command),
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=helptext.EPILOG,
)
@click.version_option(package_name="crashsweep", prog_name="crashsweep")
@color_option()
def cli() -> None:
    """Crash a durable agent loop at every point, up to N crashes, and count what it does."""


@cli.command()
@model_options()
@formats.format_option(formats.ROW)
@out_option("write traces (text, JSON), DOT, SVG and index.html of the counterexamples here, whole or not at all")
@export.export_option()
@progress_option()
@upgrade_option()
def explore(
    variant: str | None,
    design_path: Path | None,
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    fmt: str,
    out_dir: Path | None,
    exports: list[tuple[str, Path]],
    progress: bool,
    upgrade_to: str | None,
) -> int:
    """Explore one design: its row, graph size and verdicts."""
    export.check_apart(exports, out_dir)
    chosen = chosen_design(variant, design_path)
    choices = choices_of(depth, job_path, tracker, max_states, progress=progress)
    choices = with_upgrade(choices, upgrade_to, chosen)
    exploration, summary = runs.run(chosen, choices, layers=True)
    found = artifacts.counterexamples(exploration, summary, job_path, design_path, upgrade_to)
    click.echo(formats.render(fmt, formats.ROW, formats.Explored(summary, found, prog.current())), nl=False)
    text = formats.for_people(fmt)
    artifacts.after_explore(
        exploration, summary, job_path, out_dir, text=text, design_path=design_path, upgrade=upgrade_to
    )
    export.write(exports, exploration, summary, found, text=text)
    return 0 if summary.holds else 1


SEED_TABLES = (
    ("The five designs", tuple((d.name, "keyed") for d in SEED_DESIGNS)),
    ("The agent's own loop", (("agent-loop", "keyed"), ("agent-loop", "keyless"))),
)


def _rows_wanted(names: str | None, tracker: str) -> list[tuple[str, str]]:
    """(variant, tracker) pairs from --variants: NAME uses --tracker, NAME@TRACKER its own."""
    if names is None:
        return [(d.name, tracker) for d in SEED_DESIGNS]
    wanted: list[tuple[str, str]] = []
    for item in split_names(names, "--variants"):
        name, at, own = item.partition("@")
        try:
            design(name.strip())  # an unknown name fails before any exploring starts
        except UnknownVariantError as error:
            raise click.BadParameter(variant_names.unknown(error), param_hint="'--variants'") from None
        own = own.strip()
        if at and own not in TRACKERS:
            what = "no tracker after '@'" if not own else f"unknown tracker {own!r}"
            raise click.BadParameter(f"{what} in {item!r} (known: {', '.join(TRACKERS)})", param_hint="'--variants'")
        row = (name.strip(), own or tracker)
        if row in wanted:
            raise click.BadParameter(f"{row[0]} ({row[1]}) is named twice", param_hint="'--variants'")
        wanted.append(row)
    return wanted


@cli.command()
@job_options
@click.option(
    "--variants",
    "names",
    shell_complete=variant_names.complete_variants,
    help="comma-separated designs, each NAME or NAME@TRACKER, each once (default: the seed's five)",
)
@click.option(
    "--seed-table", is_flag=True, help="both of the seed's tables: the five designs, and agent-loop keyed/keyless"
)
@click.option(
    "--design",
    "design_paths",
    multiple=True,
    type=ShippedFile("design"),
    help="a design file (TOML), or a shipped one's name, to add as a row, after --variants (repeatable)",
)
@formats.format_option(formats.TABLES)
@progress_option()
@durability_options
def compare(
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    names: str | None,
    seed_table: bool,
    design_paths: tuple[Path, ...],
    fmt: str,
    progress: bool,
    fsync: str | None,
    unreadable: str | None,
) -> int:
    """The table: one row per design, in the seed's column order."""
    if seed_table and (names is not None or design_paths):
        raise click.UsageError("--seed-table and --variants/--design choose the rows two ways: give one of them")
    check_durability(fsync, unreadable)
    given = [path.resolve() for path in design_paths]
    twice = next((path for i, path in enumerate(design_paths) if given[i] in given[:i]), None)
    if twice is not None:
        raise click.BadParameter(f"{twice} is named twice", param_hint="'--design'")
    files = [(load_design(path).design, tracker) for path in design_paths]  # a bad file fails before exploring
    rows_wanted: list[tuple[str | Design, str]] = [
        *(_rows_wanted(names, tracker) if names is not None or not files else [])
    ]
    tables: tuple[tuple[str, tuple[tuple[str | Design, str], ...]], ...] = (
        SEED_TABLES if seed_table else (("", (*rows_wanted, *files)),)
    )
    rows_of, ran = [], []
    paths = {design.name: path for (design, _), path in zip(files, design_paths, strict=True)}
    for title, wanted in tables:
        rows = []
        for name, kind in wanted:
            choices = choices_of(depth, job_path, kind, max_states, progress=progress)
            design_path = None if isinstance(name, str) else paths.get(name.name)
            row, each = _compared(name, choices, fsync, unreadable, job_path, design_path)
            rows.append(row)
            ran.append(each)
        rows_of.append((table.heading(title, rows), rows))
    everything = [row for _, rows in rows_of for row in rows]
    named = {design.name: str(artifacts.job_file(path)) for (design, _), path in zip(files, design_paths, strict=True)}
    rerun = formats.Rerun(prog.current(), artifacts.job_file(job_path), named)
    click.echo(formats.render(fmt, formats.TABLES, formats.Tables(rows_of, rerun, ran)), nl=False)
    return 0 if all(row.holds for row in everything) else 1


def _compared(
    chosen: str | Design,
    choices: runs.Choices,
    fsync: str | None,
    unreadable: str | None,
    job_path: Path | None,
    design_path: Path | None,
) -> tuple[Summary, formats.Ran]:
    """One compare row, with the seconds its exploration took and its shortest counterexamples (JUnit's traces).

    Timed here, where the exploration runs, and passed on as a value, so no renderer reads a
    clock. A row given --fsync or --unreadable is another design than the one replay takes: its
    counterexamples are not kept (its JUnit text says why it has no replay line).
    """
    started = time.monotonic()
    if fsync is not None or unreadable is not None:
        row = runs.run_durable(chosen, choices, fsync, unreadable)
        return row, formats.Ran(time.monotonic() - started)
    exploration, row = runs.run(chosen, choices)
    seconds = time.monotonic() - started
    return row, formats.Ran(seconds, tuple(artifacts.counterexamples(exploration, row, job_path, design_path)))


@cli.command(name="variants")
def list_variants() -> int:
    """Every design and job by name, with the option that takes it (as `design list`)."""
    from crashsweep.cli.design import listing  # the design commands' module, imported when they are used

    click.echo("\n".join(listing()))
    return 0


def _set_color(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """A subcommand's --color callback: as the group's, when given (else the group's choice stands)."""
    if value is not None and not ctx.resilient_parsing:
        on = colour.wanted(value, os.environ)
        ctx.color = on
        ctx.with_resource(painting(on))


def _with_color(command: click.Command) -> None:
    """Give a subcommand (and its own subcommands) --color too: it is typed as often after the command as before."""
    command.params.append(
        click.Option(
            ["--color"],
            type=click.Choice(colour.CHOICES),
            expose_value=False,
            is_eager=True,
            callback=_set_color,
            help="as before the command: colour verdicts (auto, always, never)",
        )
    )
    for sub in getattr(command, "commands", {}).values():
        _with_color(sub)


for _command in dict.values(cli.commands):  # those defined here (not importing the others: they get it as imported)
    _with_color(_command)


def main(argv: list[str] | None = None, *, module: str | None = None, began: float | None = None) -> int:
    """Run the command line; turn every user-caused error into one line and an exit status.

    `module` is the interpreter when run as `python -m crashsweep`: the commands crashsweep
    prints for the user to run then start the same way (crashsweep.cli.prog). `began`: the
    monotonic time the command began (crashsweep.cli.clock; None: now).
    """
    clock.begin(began)
    program = prog.typed(os.environ, module=module)
    try:
        result = cli.main(
            args=argv,
            prog_name=shlex.join(program),
            complete_var=helptext.COMPLETE_VAR,
            standalone_mode=False,
            obj=program,
        )
    except click.exceptions.NoArgsIsHelpError as error:  # a bare `crashsweep` or group: its help, as written
        click.echo(error.format_message())
        return 2
    except click.exceptions.UsageError as error:
        return _say(f"error: {error.format_message()}", 2)
    except (JobError, PolicyError, UnknownVariantError, ModelDefinitionError, OutDirError) as error:
        return _say(f"error: {error}", 2)
    except StateLimitExceeded as error:
        return _say(str(error), 2)
    except runs.Interrupted as error:
        return _say(str(error), 130)
    except (KeyboardInterrupt, click.exceptions.Abort):
        return _say("interrupted; nothing was written", 130)
    except click.ClickException as error:
        return _say(f"error: {error.format_message()}", 2)
    except BrokenPipeError:
        return 1
    except Exception as error:  # a bug of crashsweep's, not of the user's input
        if os.environ.get("CRASHSWEEP_DEBUG"):
            raise
        return _say(f"internal error: {type(error).__name__}: {error} (CRASHSWEEP_DEBUG=1 shows where)", 3)
    return result if isinstance(result, int) else 0


def _say(message: str, status: int) -> int:
    """Print `message` as exactly one line on stderr (control characters of user input escaped); `status`."""
    line = "".join(char if char.isprintable() else repr(char)[1:-1] for char in message)
    click.echo(f"crashsweep: {line}", err=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
