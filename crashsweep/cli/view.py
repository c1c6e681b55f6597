"""The `replay` and `view` commands: re-run a counterexample's path, or see a design on one page.

replay: re-runs a path code (as printed with every counterexample) with the model's own step
function and prints its trace; exit 1 when the path ends in a violation of an invariant, 0
when it does not, 2 when the code does not fit. `--pytest` prints a test that asserts it.
view: explores a design and writes one self-contained HTML page (inline SVG, no network),
then opens it in a browser, or prints its path where none can be opened. Without --out the
page goes to one stable directory per design, tracker and depth (`view_dir`), replaced by the
next view of the same, so repeated views leave no pile of temporary directories.

These commands use crashsweep.cli.main's shared options; crashsweep.cli.main registers them (import
the CLI through crashsweep.cli.main).
"""

from __future__ import annotations

import os
import re
import tempfile
import webbrowser
from pathlib import Path

import click

from crashsweep.cli import artifacts, formats, outdir, prog, runs
from crashsweep.cli.options import (
    check_variant,
    choices_of,
    chosen_design,
    design_option,
    job_options,
    out_option,
    progress_option,
)
from crashsweep.explorer.path import replay as replay_path
from crashsweep.reports.counterexample import from_path
from crashsweep.reports.replay import pytest_snippet


@click.command(name="replay")
@click.option("--variant", callback=check_variant, help="design the path belongs to")
@design_option()
@click.option("--path", "code", required=True, help="the path code printed with a counterexample (e.g. 10:7=1)")
@job_options
@formats.format_option(formats.TRACE)
@click.option("--pytest", "as_pytest", is_flag=True, help="print a pytest test that replays the path and asserts it")
def _replay(
    variant: str | None,
    design_path: Path | None,
    code: str,
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    fmt: str,
    as_pytest: bool,
) -> int:
    """Re-run a counterexample's path and print its trace (exit 1 if it ends in a violation)."""
    chosen = chosen_design(variant, design_path)
    choices = choices_of(depth, job_path, tracker, max_states)
    loop = choices.model(chosen)
    try:
        path = replay_path(loop, depth, code)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--path'") from None
    cx = from_path(
        loop,
        path,
        variant=loop.design.name,
        job=choices.job.name,
        job_file=artifacts.job_file(job_path),
        depth=depth,
        tracker=choices.tracker.name,
        design_file=artifacts.job_file(design_path),
    )
    if as_pytest:
        click.echo(pytest_snippet(cx), nl=False)
    else:
        click.echo(formats.render(fmt, formats.TRACE, formats.Traced(cx, prog.current())), nl=False)
    return 1 if cx.violated else 0


def view_dir(variant: str, tracker: str, depth: int) -> Path:
    """Where `view` puts a design's page without --out: one directory per design, tracker and depth.

    Under the system's temporary directory, in `crashsweep-view-UID` (made private to the user);
    the next view of the same design, tracker and depth replaces it, so views leave nothing behind
    but one page each. `variant` may be a design file's name: anything but letters, digits, `.`,
    `_` and `-` becomes `_`, so the page stays one directory under the base.
    """
    name = re.sub(r"[^\w.-]", "_", f"{variant}-{tracker}-depth{depth}")
    base = Path(tempfile.gettempdir()) / f"crashsweep-view-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        mine = base.is_dir() and not base.is_symlink() and base.stat().st_uid == os.geteuid()
    except OSError as error:
        raise click.UsageError(f"cannot make {base} for the page: {error.strerror or error}; give --out") from None
    if not mine:
        raise click.UsageError(f"{base} is not a directory of yours: give --out")
    try:
        return outdir.check(base / name)
    except outdir.OutDirError as error:
        raise click.UsageError(f"{error}; give --out") from None


@click.command(name="view")
@click.option("--variant", callback=check_variant, help="design to explore (see the variants command)")
@design_option()
@job_options
@out_option("directory for index.html, written whole (default: one per design under the temporary directory)")
@click.option("--no-open", is_flag=True, help="print the page's path instead of opening a browser")
@progress_option()
def _view(
    variant: str | None,
    design_path: Path | None,
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    out_dir: Path | None,
    no_open: bool,
    progress: bool,
) -> int:
    """Explore a design and show its row, verdicts and counterexamples on one HTML page."""
    chosen = chosen_design(variant, design_path)
    choices = choices_of(depth, job_path, tracker, max_states, progress=progress)
    name = chosen if isinstance(chosen, str) else chosen.name
    target = out_dir if out_dir is not None else view_dir(name, tracker, depth)
    exploration, summary = runs.run(chosen, choices)
    report = artifacts.build(exploration, summary, job_path, design_path, program=prog.anywhere(prog.current()))
    (page,) = outdir.publish(target, [("index.html", report.files["index.html"])])
    if report.dot_missing and report.counterexamples:
        click.echo(f"crashsweep: {artifacts.INSTALL_GRAPHVIZ}", err=True)
    if not no_open and webbrowser.open(page.resolve().as_uri()):
        click.echo(f"wrote {page} and opened it in your browser")
    else:
        reason = "" if no_open else " (no browser could be opened here)"
        click.echo(f"wrote {page}{reason}: open {page.resolve().as_uri()}")
    return 0 if summary.holds else 1


# Declared, not inferred: crashsweep.cli.main imports this module, and mypy needs the types at once.
replay: click.Command = _replay
view: click.Command = _view
