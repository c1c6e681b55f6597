"""`crashsweep sweep`'s modes, one function each: sweep, list the points, check determinism, re-run one crash.

`run` makes the source a request names (crashsweep.cli.sweep_sources) and hands it, with the
real sweep's options, to its mode's function (`MODES`); it turns what the real side raises into
one line: the program failed by itself (exit 1), a sweep error or a bad value (exit 2), Ctrl-C
with --keep (it says where the work folders stay). Each mode prints its own report and
returns the exit status: 0 when what it checked holds, 1 when not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import click

from crashsweep.cli import (
    clock,
    limits,
    runs,
    sweep_cassette,
    sweep_determinism,
    sweep_engines,
    sweep_points,
    sweep_scenarios,
    sweep_sources,
)
from crashsweep.cli.sweep_plan import Mode, SweepRequest
from crashsweep.cli.sweep_sources import Source
from crashsweep.realsweep import api


class Progress(runs.StatusLine):
    """The sweep's progress: scenarios (a merging sweep: processes) done of those known so far."""

    def __init__(self, label: str, unit: str = "scenarios") -> None:
        super().__init__(label)
        self.unit = unit
        self.reached = (0, 0)
        """(done, known) when last told: how far an interrupted sweep got."""

    def __call__(self, done: int, known: int) -> None:
        self.reached = (done, known)
        self.show(f"{done}/{known} {self.unit}")


def fail(message: str, status: int) -> int:
    """Say `message` in one line on stderr; `status`."""
    click.echo(f"crashsweep: {message}", err=True)
    return status


SERVER_WORKERS_PER_CORE = 2
"""Processes at a time per core, without --workers, for a source whose state lives in a server.

A Temporal process waits on its server (task dispatch, timers, long polls) for much of its
time: with one process per core the cores were idle about two fifths of a sweep (measured:
benchmarks/frameworks.py, docs/performance.md). Scenarios never share a world (each has its
own task queue and tracker space), so running more of them at once changes nothing they see."""


def run(request: SweepRequest) -> int:
    """Run the request's mode on its source; the real side's errors as one line and an exit status."""
    options = request.options()
    try:
        source = make_source(request)
        if source.from_scratch and request.given.workers is None:
            options = replace(options, workers=SERVER_WORKERS_PER_CORE * limits.cores())
        return MODES[request.mode](request, source, options)
    except KeyboardInterrupt:
        if request.given.keep is None:
            raise
        raise runs.Interrupted(f"interrupted; the work folders swept so far stay in {request.given.keep}") from None
    except api.TargetFailed as error:
        return fail(f"the program failed: {api.with_extra(str(error))}", 1)
    except (api.SweepError, ValueError) as error:
        return fail(f"error: {api.with_extra(str(error))}", 2)


def make_source(request: SweepRequest) -> Source:
    """What the request sweeps: the reference loop of a design, a framework's agent, or the user's program.

    Its command names it again with the options every mode keeps (--timeout, --spawn, --points).
    """
    g = request.given
    if request.variant is not None:
        made = sweep_sources.variant_source(
            request.variant, g.job_path, g.tracker, g.design_path, request.nemesis, request.upgrade
        )
    elif g.framework is not None:
        made = sweep_sources.framework_source(
            g.framework,
            g.job_path,
            g.tracker,
            g.keys,
            g.call_ids,
            g.durability,
            g.transcript_repair,
            request.nemesis,
            g.schedule_to_close,
        )
    else:
        assert g.target_spec is not None  # the rules: exactly one source, and --target with --check
        assert g.check_spec is not None
        made = sweep_sources.target_source(
            g.target_spec, g.check_spec, request.arguments, g.tracker, request.nemesis, g.upgrade_to
        )
    made = sweep_cassette.played(made, request.cassette, g.cassette)
    made.command += [*(["--timeout", f"{g.timeout:g}"] if g.timeout != 120 else []), "--spawn", g.spawn]
    made.command += request.points_args
    made.command += ["--persistence", g.persistence] if g.persisting else []
    return made


def run_sweep(request: SweepRequest, source: Source, options: api.SweepOptions) -> int:
    """Sweep every scenario up to the depth and print the row; 0 when its invariants hold.

    A replaying framework's depth-1 sweep checks determinism first (sweep_determinism.first): a
    divergence is printed instead of the row (exit 1), else the row says the check held.
    """
    g = request.given
    held: int | None = None
    if sweep_determinism.first(g.framework, g.depth, g.skip_determinism):
        checked = _determinism(source, options)
        held = checked.starts
        if checked.divergence is not None:
            click.echo(render_determinism(source, checked, g.fmt), nl=False)
            return 1
        if not (options.dedup or options.keep):  # its second round is this sweep's depth-1 scenarios
            options = replace(options, ran=checked.ran)
    progress = Progress("sweep", "processes" if request.dedup else "scenarios")
    partial = None if g.scenarios_path is None else sweep_scenarios.Partial.beside(g.scenarios_path)
    try:
        with sweep_engines.opened(g.engine_name, g.address, g.workers) as chosen:
            result = source.run(replace(options, engine=chosen, finished=partial), progress)
    except KeyboardInterrupt:
        if partial is None:
            raise
        progress.done()
        raise runs.Interrupted(_kept(partial, progress, g.keep)) from None
    finally:
        progress.done()
        if partial is not None:
            partial.drop()
    result = replace(result, seconds=max(result.seconds, clock.seconds()))  # from the command's start
    _record(result, g.scenarios_path, g.keep)
    return sweep_sources.report(result, source, g.tracker, g.fmt, held)


def run_list_points(request: SweepRequest, source: Source, options: api.SweepOptions) -> int:
    """--list-points: run the program once, uninterrupted, and list the crash points it passed (or those FILE keeps)."""
    passed = api.list_points(source.target, source.check, options, source.nemesis)
    shown = sweep_points.render(source.label, passed, source.command, request.given.fmt, request.listed)
    click.echo(shown, nl=False)
    return 0


def run_determinism(request: SweepRequest, source: Source, options: api.SweepOptions) -> int:
    """--determinism: each start world of a depth-1 sweep run twice; 1 when two runs differ."""
    checked = _determinism(source, options)
    click.echo(render_determinism(source, checked, request.given.fmt), nl=False)
    return 0 if checked.divergence is None else 1


def render_determinism(source: Source, checked: api.Checked, fmt: str) -> str:
    """The determinism check's verdict for `source`."""
    return sweep_determinism.render(source.label, checked.starts, checked.divergence, source.command, fmt)


def run_crash(request: SweepRequest, source: Source, options: api.SweepOptions) -> int:
    """--crash: re-run one scenario (with --faults power-loss, one power cut) and print it.

    0 when it left no duplicate, no loss, no broken property and was not stuck; 2 for a point the
    program never passes, or a pass beyond those it makes.
    """
    cut = request.given.cut
    scenario = api.replay(
        source.target, source.check, options, request.crashes, source.nemesis, cut=cut, state=request.cut_state
    )
    unknown = sweep_scenarios.unknown_point(scenario, request.crashes[0])
    if unknown is not None:
        return fail(f"error: {unknown}", 2)
    click.echo(sweep_scenarios.replay_text(source.label, scenario), nl=False)
    o = scenario.outcome
    return 1 if scenario.unreached or o.dups or o.missing or o.stuck or api.violations(scenario) else 0


MODES: Mapping[Mode, Callable[[SweepRequest, Source, api.SweepOptions], int]] = {
    Mode.SWEEP: run_sweep,
    Mode.LIST_POINTS: run_list_points,
    Mode.DETERMINISM: run_determinism,
    Mode.CRASH: run_crash,
}
"""Each mode's function: given the request, its source and the real sweep's options, the exit status."""


def _determinism(source: Source, options: api.SweepOptions) -> api.Checked:
    """The determinism check of `source` (its worlds named by its own key when --state-key gave none).

    Its runs work in scratch folders, never in --keep's (the sweep after it must find that
    folder empty, and keeps its scenarios there). A sweep of every scenario that keeps none takes
    the second round's as its depth-1 scenarios (api.Checked.ran) instead of running them again.
    """
    keyed = replace(options, state_key=options.state_key or source.state_key, keep=False, root=None)
    return api.determinism_runs(source.target, source.check, keyed, source.nemesis)


def _kept(partial: sweep_scenarios.Partial, progress: Progress, keep: Path | None) -> str:
    """What an interrupted sweep says: how far it got, and the scenarios it finished, kept in --scenarios' file.

    A sweep of every scenario records each as it ends (the uninterrupted run first); a merging
    sweep (its progress counts processes) writes, once stopped, one per final world its graph
    reached so far, by the smallest path known (dedup/graph.py).
    """
    done, known = progress.reached
    kept = partial.keep()
    said = f"interrupted after {done} of the {known} {progress.unit} known so far; "
    finished = "whose final world was reached" if progress.unit == "processes" else "finished"
    if kept:
        said += f"the {kept} scenario(s) {finished} (the uninterrupted run first) are in {partial.path}"
    else:
        said += f"no scenario had finished: none was written to {partial.path}"
    return said + (f"; the work folders swept so far stay in {keep}" if keep is not None else "")


def _record(result: api.SweepResult, path: Path | None, keep: Path | None) -> None:
    """Every scenario as JSON lines, to --scenarios and into the --keep folder."""
    for target in (path, None if keep is None else keep / "scenarios.jsonl"):
        if target is not None:
            sweep_scenarios.write_jsonl(target, result)
