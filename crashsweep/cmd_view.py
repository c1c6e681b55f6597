"""The `replay` and `view` commands: re-run a counterexample's path, or see a design on one page.

replay: re-runs a path code (as printed with every counterexample) with the model's own step
function and prints its trace; exit 1 when the path ends in a violation of an invariant, 0
when it does not, 2 when the code does not fit. `--pytest` prints a test that asserts it.
view: explores a design and writes one self-contained HTML page (inline SVG, no network),
then opens it in a browser, or prints its path where none can be opened.

These commands use crashsweep.cli's shared options; crashsweep.cli registers them (import
the CLI through crashsweep.cli).
"""

from __future__ import annotations

import tempfile
import webbrowser
from pathlib import Path

import click

from crashsweep import artifacts, runs
from crashsweep.options import check_variant, choices_of, chosen_design, design_option, job_options
from explorer.path import replay as replay_path
from reports import trace
from reports.counterexample import from_path
from reports.replay import pytest_snippet
from variants import model


@click.command(name="replay")
@click.option("--variant", callback=check_variant, help="design the path belongs to")
@design_option()
@click.option("--path", "code", required=True, help="the path code printed with a counterexample (e.g. 10:7=1)")
@job_options
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
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
    loop = model(chosen, choices.job, choices.tracker)
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
        click.echo(trace.to_json(cx) if fmt == "json" else trace.text(cx), nl=False)
    return 1 if cx.violated else 0


@click.command(name="view")
@click.option("--variant", callback=check_variant, help="design to explore (see `crashsweep variants`)")
@design_option()
@job_options
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="directory for index.html (default: a new temporary directory)",
)
@click.option("--no-open", is_flag=True, help="print the page's path instead of opening a browser")
def _view(
    variant: str | None,
    design_path: Path | None,
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    out_dir: Path | None,
    no_open: bool,
) -> int:
    """Explore a design and show its row, verdicts and counterexamples on one HTML page."""
    chosen = chosen_design(variant, design_path)
    choices = choices_of(depth, job_path, tracker, max_states)
    exploration, summary = runs.run(chosen, choices)
    report = artifacts.build(exploration, summary, job_path, design_path)
    if out_dir is None:
        out_dir = Path(tempfile.mkdtemp(prefix=f"crashsweep-{summary.variant}-"))
    (page,) = artifacts.write(out_dir, {"index.html": report.files["index.html"]})
    if report.dot_missing and report.counterexamples:
        click.echo(f"crashsweep: {artifacts.INSTALL_GRAPHVIZ}", err=True)
    if not no_open and webbrowser.open(page.resolve().as_uri()):
        click.echo(f"wrote {page} and opened it in your browser")
    else:
        reason = "" if no_open else " (no browser could be opened here)"
        click.echo(f"wrote {page}{reason}: open {page.resolve().as_uri()}")
    return 0 if summary.holds else 1


# Declared, not inferred: crashsweep.cli imports this module, and mypy needs the types at once.
replay: click.Command = _replay
view: click.Command = _view
