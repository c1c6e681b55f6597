"""`crashsweep conform`: the real sweep and the model side by side, both rows and every difference.

Each design of the matrix (by default the seed's five designs against a keyed tracker and
agent-loop against both trackers, crashsweep.cli.sweep.DEFAULT_MATRIX) is swept for real
(crashsweep.realsweep.api.conform) and explored, under the same faults. Exit status: 0 when
every row agrees, 1 when one differs or the reference loop failed, 2 for bad input.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from crashsweep.cli import formats, runs, sweep_engines, sweep_sources, variant_names
from crashsweep.cli.options import (
    depth_option,
    environment,
    fault_options,
    job_option,
    split_names,
    upgrade_option,
)
from crashsweep.cli.shipped import ShippedFile
from crashsweep.cli.sweep import DEFAULT_MATRIX, stops_on_sigterm
from crashsweep.cli.sweep_modes import Progress, fail
from crashsweep.cli.sweep_plan import sweep_options
from crashsweep.cli.sweep_sources import reference_design
from crashsweep.realsweep import api
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.design_file import load_design

CONFORM_DEPTH = (
    "1, not 2 as elsewhere: the real sweep cuts the power (--faults power-loss) in scenarios of one move only, "
    "and depth 2 runs each of the matrix's designs for real once per pair of crashes"
)
"""Why conform's --depth defaults to 1 (its --help says so)."""


@click.command()
@click.option(
    "--variants",
    "names",
    help="comma-separated designs  [default: the five seed designs; agent-loop keyed, keyless]",
    shell_complete=variant_names.complete_variants,
)
@click.option("--tracker", "trackers", type=click.Choice(list(TRACKERS)), multiple=True, help="repeatable")
@click.option(
    "--design",
    "design_paths",
    multiple=True,
    type=ShippedFile("design"),
    help="a design file (TOML), or a shipped one's name, to add, after --variants (repeatable)",
)
@depth_option(default=1, with_faults=True, real=True, why=CONFORM_DEPTH)
@fault_options
@job_option(help="job file (TOML)")
@formats.format_option(formats.CONFORMANCE)
@sweep_engines.process_options
@upgrade_option()
@stops_on_sigterm
def conform(
    names: str | None,
    trackers: tuple[str, ...],
    design_paths: tuple[Path, ...],
    depth: int,
    job_path: Path | None,
    workers: int | None,
    fmt: str,
    spawn: str,
    dedup: bool,
    kill: bool,
    engine_name: str,
    address: str | None,
    upgrade_to: str | None,
) -> int:
    """The real sweep and the model side by side: both rows of each design, and every difference.

    With --faults and --call-ids (spec/FAULTS.md) both sides suffer the same faults, at any
    depth (with --no-dedup, the real sweep injects faults at depth 1 only).
    """
    if kill and not dedup:
        raise click.UsageError("--kill goes with dedup (drop --no-dedup)")
    sweep_engines.refuse(engine_name, address)
    nemesis = api.Nemesis(*environment())
    dedup = dedup and not nemesis.every_scenario
    try:
        nemesis.check(depth, dedup)
    except api.NemesisError as error:
        raise click.BadParameter(str(error), param_hint="'--faults'") from None
    files = {path: load_design(path).name for path in design_paths}  # a bad file fails before any sweep
    if names is None and not trackers and not files:
        matrix: list[tuple[str, str, Path | None]] = [(name, kind, None) for name, kind in DEFAULT_MATRIX]
    else:
        chosen = split_names(names, "--variants") if names is not None else [] if files else list(api.REFERENCE_DESIGNS)
        given_files = [str(path.resolve()) for path in design_paths]
        for option, given in (("--variants", chosen), ("--tracker", list(trackers)), ("--design", given_files)):
            twice = next((name for i, name in enumerate(given) if name in given[:i]), None)
            if twice is not None:
                raise click.BadParameter(f"{twice} is named twice", param_hint=f"'{option}'")
        kinds = trackers or ("keyed",)
        matrix = [(name, kind, None) for name in chosen for kind in kinds]
        matrix += [(name, kind, path) for path, name in files.items() for kind in kinds]
    upgrade = None
    for name, _, path in matrix:
        if path is None:
            reference_design(name)
        upgrade = sweep_sources.reference_upgrade(upgrade_to, name, path, nemesis.faults)
    job, _ = runs.read_job(job_path)
    results = []
    try:
        with sweep_engines.opened(engine_name, address, workers) as where, api.shared_zygotes():
            for name, kind, path in matrix:  # one zygote of the reference loop serves every design
                progress = Progress(f"{name}/{kind}", "processes" if dedup else "scenarios")
                try:
                    options = sweep_options(depth, workers, None, 120, kind, spawn, dedup, None, kill)
                    options = dataclasses.replace(options, engine=where)
                    results.append(api.conform(name, job, job_path, kind, options, progress, path, nemesis, upgrade))
                finally:
                    progress.done()
    except api.TargetFailed as error:
        return fail(f"the reference loop failed: {error}", 1)
    except api.SweepError as error:
        return fail(f"error: {error}", 2)
    click.echo(formats.render(fmt, formats.CONFORMANCE, results), nl=False)
    return 0 if all(c.agrees for c in results) else 1
