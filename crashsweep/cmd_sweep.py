"""`crashsweep sweep`, `crashsweep conform` and `crashsweep tracker serve`: real code, real crashes.

`sweep` runs the real sweep (realsweep.engine) of the reference loop of a design, or of the
user's own program (`--target module:function` or a command, with `--check module:function`),
and prints the explorer's columns. `conform` runs the real sweep and the model side by side
and prints both rows and every difference. `tracker serve` runs the tracker service.
Exit status: 0 when the invariants hold (conform: the rows agree), 1 when one is violated
(conform: they differ) or the program failed by itself, 2 for bad input.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from crashsweep import runs
from crashsweep.options import depth_option, design_option, job_option, tracker_option
from realsweep import conformance, engine, reference, rows
from realsweep.entry import load, parse_entry_point
from realsweep.reference_loop import DESIGNS as REFERENCE_DESIGNS
from reports import table
from spec.tracker import TRACKERS
from variants import SEED_DESIGNS, design
from variants.design_file import load_design

FORMATS = ("text", "json", "markdown")
DEFAULT_MATRIX = (
    *((seed.name, "keyed") for seed in SEED_DESIGNS),
    ("agent-loop", "keyed"),
    ("agent-loop", "keyless"),
)
"""The seed's five designs against a tracker that honours keys, and agent-loop against both trackers."""


def _reference_design(name: str) -> None:
    """Refuse a name the model does not know, or one the reference loop does not implement."""
    design(name)
    if name not in REFERENCE_DESIGNS:
        raise click.UsageError(
            f"the reference loop does not implement {name!r} yet (it implements: {', '.join(REFERENCE_DESIGNS)})"
        )


class _Progress(runs.StatusLine):
    """The sweep's progress: scenarios done of those known so far."""

    def __call__(self, done: int, known: int) -> None:
        self.show(f"{done}/{known} scenarios")


def _options(
    depth: int, workers: int | None, keep: Path | None, timeout: float, tracker: str, spawn: str
) -> engine.SweepOptions:
    return engine.SweepOptions(
        depth=depth,
        workers=workers or os.cpu_count() or 1,
        tracker=reference.SERVICE_MODES[tracker],
        root=keep.resolve() if keep is not None else None,
        keep=keep is not None,
        timeout=timeout,
        spawn=spawn,
    )


SPAWN_HELP = "fork: Python entry points are forked from a warm zygote; exec: a new interpreter per process"


def _fail(message: str, status: int) -> int:
    click.echo(f"crashsweep: {message}", err=True)
    return status


@click.command()
@click.option("--variant", help="sweep the reference loop of this design (see `crashsweep variants`)")
@design_option()
@click.option("--target", "target_spec", help="sweep your own program: module:function, or a command line")
@click.option("--check", "check_spec", help="with --target: module:function(scenario) -> realsweep.engine.Outcome")
@depth_option()
@job_option(help="job file (with --variant)")
@tracker_option()
@click.option("--workers", type=click.IntRange(min=1), help="scenarios run at once  [default: the core count]")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--keep", type=click.Path(path_type=Path, file_okay=False), help="keep every work dir and database here")
@click.option("--timeout", type=click.FloatRange(min=1), default=120, show_default=True, help="seconds per process")
@click.option("--spawn", type=click.Choice(("fork", "exec")), default="fork", show_default=True, help=SPAWN_HELP)
def sweep(
    variant: str | None,
    design_path: Path | None,
    target_spec: str | None,
    check_spec: str | None,
    depth: int,
    job_path: Path | None,
    tracker: str,
    workers: int | None,
    fmt: str,
    keep: Path | None,
    timeout: float,
    spawn: str,
) -> int:
    """Kill real processes at every crash point, up to --depth crashes, and count what happened."""
    if [variant, design_path, target_spec].count(None) != 2:
        raise click.UsageError("give either --variant or --design (the reference loop) or --target (your own program)")
    if target_spec is not None and (check_spec is None or job_path is not None):
        raise click.UsageError("--target needs --check module:function, and takes no --job")
    if target_spec is None and check_spec is not None:
        raise click.UsageError("--check goes with --target")
    if design_path is not None:
        variant = load_design(design_path).name  # a bad design file fails before any process starts
    options = _options(depth, workers, keep, timeout, tracker, spawn)
    progress = _Progress("sweep")
    try:
        if variant is not None:
            if design_path is None:
                _reference_design(variant)
            job, _ = runs.read_job(job_path)
            result = reference.run(variant, job, job_path, tracker, options, progress, design_path)
            label, job_name = variant, job.name
        else:
            assert target_spec is not None
            assert check_spec is not None
            target, check = _user_target(target_spec, check_spec)
            result = engine.sweep(target, check, options, progress)
            label, job_name = target.label, "-"
    except engine.TargetFailed as error:
        return _fail(f"the program failed: {error}", 1)
    except (engine.SweepError, ValueError) as error:
        return _fail(f"error: {error}", 2)
    finally:
        progress.done()
    row = rows.summary(result, variant=label, job=job_name, tracker=tracker)
    if fmt == "json":
        click.echo(rows.to_json(row, result), nl=False)
    elif fmt == "markdown":
        click.echo(table.row_markdown(row), nl=False)
    else:
        click.echo(rows.row_text(row, result, rows.counterexamples(result)), nl=False)
    return 0 if row.holds else 1


def _user_target(target_spec: str, check_spec: str) -> tuple[engine.Target, engine.Check]:
    """The user's program and check; the current directory is where their modules are found."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    parse_entry_point(check_spec)
    try:
        parse_entry_point(target_spec)
    except ValueError:
        target = engine.Target.command(target_spec)
    else:
        target = engine.Target.entry_point(target_spec, path=[here])
    check = load(check_spec)
    return target, check  # type: ignore[return-value]


@click.command()
@click.option(
    "--variants", "names", help="comma-separated designs  [default: the five seed designs; agent-loop keyed, keyless]"
)
@click.option("--tracker", "trackers", type=click.Choice(list(TRACKERS)), multiple=True, help="repeatable")
@click.option(
    "--design",
    "design_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="a design file (TOML) to add, after --variants (repeatable)",
)
@depth_option(default=1)
@job_option(help="job file (TOML)")
@click.option("--workers", type=click.IntRange(min=1), help="scenarios run at once  [default: the core count]")
@click.option("--format", "fmt", type=click.Choice(("text", "markdown")), default="text", show_default=True)
@click.option("--spawn", type=click.Choice(("fork", "exec")), default="fork", show_default=True, help=SPAWN_HELP)
def conform(
    names: str | None,
    trackers: tuple[str, ...],
    design_paths: tuple[Path, ...],
    depth: int,
    job_path: Path | None,
    workers: int | None,
    fmt: str,
    spawn: str,
) -> int:
    """The real sweep and the model side by side: both rows of each design, and every difference."""
    files = {path: load_design(path).name for path in design_paths}  # a bad file fails before any sweep
    if names is None and not trackers and not files:
        matrix: list[tuple[str, str, Path | None]] = [(name, kind, None) for name, kind in DEFAULT_MATRIX]
    else:
        chosen = [n.strip() for n in names.split(",")] if names else [] if files else list(REFERENCE_DESIGNS)
        kinds = trackers or ("keyed",)
        matrix = [(name, kind, None) for name in chosen for kind in kinds]
        matrix += [(name, kind, path) for path, name in files.items() for kind in kinds]
    for name, _, path in matrix:
        if path is None:
            _reference_design(name)
    job, _ = runs.read_job(job_path)
    results = []
    try:
        for name, kind, path in matrix:
            progress = _Progress(f"{name}/{kind}")
            try:
                options = _options(depth, workers, None, 120, kind, spawn)
                results.append(conformance.conform(name, job, job_path, kind, options, progress, path))
            finally:
                progress.done()
    except engine.TargetFailed as error:
        return _fail(f"the reference loop failed: {error}", 1)
    except engine.SweepError as error:
        return _fail(f"error: {error}", 2)
    click.echo(conformance.render(results, fmt), nl=False)
    return 0 if all(c.agrees for c in results) else 1


@click.group()
def tracker() -> None:
    """The tracker service the real sweep writes to."""


@tracker.command()
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default="tracker", show_default=True)
@click.option("--mode", type=click.Choice(("keyed", "keyless")), default="keyed", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True)
@click.option("--verbose", is_flag=True, help="log every request on stderr")
def serve(root: Path, mode: str, host: str, port: int, verbose: bool) -> int:
    """Serve the tracker (one SQLite database per space under --root) until Ctrl-C."""
    from realsweep import tracker_service

    try:
        server = tracker_service.make_server(root, mode, host, port, quiet=not verbose)
    except OSError as error:
        return _fail(f"error: cannot serve on {host}:{port}: {error.strerror or error}", 2)
    click.echo(f"tracker ({mode}) serving {root} at {server.url} (spaces at {server.url}/spaces/NAME); Ctrl-C stops")
    tracker_service.serve(server)
    return 0
