"""`crashsweep fuzz`: random deep crash sequences against one design, shrunk when they break it.

Runs the design's hypothesis state machine (crashsweep.explorer.stateful) outside pytest: random runs
with up to --crashes crashes each, far beyond the depth exhaustive exploration can afford.
A violation is shrunk and printed as a text trace (crashsweep.reports.trace) that ends with its
`crashsweep replay` command (the crash budget is the replay depth); otherwise the figures of
what was exercised. The same --seed gives the same output. Exit status: 0 no violation,
1 a violation (or a witness no run reached, so its invariant went unchecked), 2 bad input.

Nothing is left on disk: fuzz keeps no example database, and the cache hypothesis would write
into the current folder (.hypothesis/) goes to a temporary folder removed at the end, unless
HYPOTHESIS_STORAGE_DIRECTORY names a folder for it.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from crashsweep.cli import prog, runs, shipped
from crashsweep.cli.options import (
    chosen_design,
    design_choice,
    environment,
    fault_options,
    job_option,
    tracker_option,
)
from crashsweep.explorer.model import Model
from crashsweep.reports import trace
from crashsweep.reports.counterexample import Counterexample, from_path
from crashsweep.reports.describe import plural
from crashsweep.reports.replay import PROGRAM, replay_command
from crashsweep.spec.job import Job
from crashsweep.variants import design, model
from crashsweep.variants.loop_model import LoopModel

MIN_STEPS = 2
"""The first rule of every run picks its pace (crashsweep.explorer.stateful), so one rule would take no action."""

if TYPE_CHECKING:
    from crashsweep.explorer.stateful import FuzzOutcome, ModelMachine, PropertyViolation


@click.command()
@design_choice("design to fuzz (see the variants command)")
@job_option()
@tracker_option()
@fault_options
@click.option(
    "--crashes",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="most crashes per run, faults included (the replay depth)",
)
@click.option(
    "--examples",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="hypothesis examples to ask for, one run each (hypothesis also runs some it discards; the output counts both)",
)
@click.option("--seed", "seed_value", type=click.IntRange(min=0), help="random seed (default: a fresh one, printed)")
@click.option(
    "--steps",
    type=click.IntRange(min=MIN_STEPS),
    default=150,
    show_default=True,
    help="most rules per run (hypothesis stateful_step_count): the first picks the run's pace, the rest take actions",
)
def fuzz(
    variant: str | None,
    design_path: Path | None,
    job_path: Path | None,
    tracker: str,
    crashes: int,
    examples: int,
    seed_value: int | None,
    steps: int,
) -> int:
    """Random crash sequences (hypothesis), shrunk to a replayable counterexample."""
    # Imported here: hypothesis takes a quarter of a second to import, and only fuzz needs it.
    from crashsweep.explorer.stateful import fuzz as run_fuzz

    loop, job = fuzzed(variant, design_path, job_path, tracker)
    chosen = seed_value if seed_value is not None else secrets.randbelow(2**32)
    name = loop.design.name
    with _hypothesis_home():
        outcome = run_fuzz(loop, crashes=crashes, examples=examples, seed_value=chosen, steps=steps)
    if outcome.violation is not None:
        click.echo(f"fuzz (seed {chosen}, up to {crashes} crashes per run) found a violation; shrunk, it is:")
        click.echo(violation_text(name, loop, outcome.violation, job, job_path, tracker, design_path), nl=False)
        return 1
    click.echo(passed_text(name, outcome, examples), nl=False)
    return 1 if outcome.unwitnessed else 0


def fuzzed(variant: str | None, design_path: Path | None, job_path: Path | None, tracker: str) -> tuple[LoopModel, Job]:
    """The model fuzz runs and its job, under the current command's faults and call IDs.

    The design is checked before the job file is read, so an unknown name is the one error said.
    """
    picked = chosen_design(variant, design_path)
    if isinstance(picked, str):
        design(picked)
    job, _ = runs.read_job(job_path)
    faults, fresh_ids = environment()
    return model(picked, job, runs.tracker_kind(tracker), faults=faults, fresh_ids=fresh_ids), job


@contextmanager
def _hypothesis_home() -> Iterator[None]:
    """Hypothesis's folder (its cache of constants) in a temporary folder for the block, not ./.hypothesis.

    A HYPOTHESIS_STORAGE_DIRECTORY of the user's is left to hypothesis, as is a folder already
    chosen in this process (a test session's).
    """
    from hypothesis import configuration

    chosen = getattr(configuration, "__hypothesis_home_directory", None)
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or chosen is not None:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="crashsweep-hypothesis-") as home:
        configuration.set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(None)


def violation_text(
    variant: str,
    loop: Model[Any],
    violation: PropertyViolation,
    job: Job,
    job_path: Path | None,
    tracker: str,
    design_path: Path | None = None,
) -> str:
    """The shrunk counterexample as the project's text trace, which ends with its replay command."""
    cx = counterexample(variant, loop, violation, job, job_path, tracker, design_path)
    return trace.text(cx, program=prog.current())


def counterexample(
    variant: str,
    loop: Model[Any],
    violation: PropertyViolation,
    job: Job,
    job_path: Path | None,
    tracker: str,
    design_path: Path | None = None,
) -> Counterexample:
    """The counterexample along a violation's path, its files named as the replay command names them."""
    return from_path(
        loop,
        violation.path,
        variant=variant,
        job=job.name,
        job_file=shipped.typed(job_path) if job_path is not None else None,
        depth=violation.depth,
        tracker=tracker,
        invariant=violation.property,
        design_file=shipped.typed(design_path, absolute=True) if design_path is not None else None,
    )


def replay_lines(cx: Counterexample, program: Sequence[str] = PROGRAM) -> str:
    """The `replay:` and `pytest:` lines that end fuzz's trace of `cx` (crashsweep.reports.trace), spelt alike."""
    return f"replay: {replay_command(cx, program=program)}\npytest: {replay_command(cx, pytest=True, program=program)}"


def machine(
    loop: LoopModel,
    job: Job,
    job_path: Path | None,
    tracker: str,
    design_path: Path | None = None,
    *,
    crashes: int,
    steps: int,
) -> type[ModelMachine[Any]]:
    """`loop`'s hypothesis state machine, as fuzz runs it, whose failure message ends with its replay lines.

    crashsweep.explorer.stateful knows models, not commands (it imports nothing of ours outside
    explorer/): its PropertyViolation names the path code, and this machine appends to that
    message the `crashsweep replay` command of the path (the shrunk one, once hypothesis is done).
    """
    from hypothesis.stateful import invariant

    from crashsweep.explorer.stateful import ModelMachine, PropertyViolation

    rules = steps  # a class body cannot read a name of the function it shares

    class Replayable(ModelMachine[Any]):
        model = loop
        crash_budget = crashes
        steps = rules

        @invariant(check_during_init=True)
        def properties_hold(self) -> None:
            """The model's properties (ModelMachine's check); a violation's message gains its replay lines."""
            try:
                super().properties_hold()
            except PropertyViolation as violation:
                cx = counterexample(loop.design.name, loop, violation, job, job_path, tracker, design_path)
                violation.args = (f"{violation.args[0]}\n{replay_lines(cx)}",)
                raise

    return Replayable


def passed_text(variant: str, outcome: FuzzOutcome, asked: int) -> str:
    """No violation: the figures of what was exercised, and any witness no run reached.

    Hypothesis decides how many examples it runs for `asked` (--examples): it runs more when it
    discards some (too long), and an example can end before its first action; the second line
    says both counts beside the runs, so the runs are not mistaken for the examples asked.
    """
    figures = outcome.figures
    idle = figures.examples - figures.runs
    lines = [
        f"{variant}: no violation in {figures.runs} runs",
        f"  seed {outcome.seed}: runs {figures.runs} ({figures.finished} finished) of "
        f"{plural(figures.examples, 'hypothesis example')} for --examples {asked} "
        f"({idle} ended before a first action), steps {figures.steps}, "
        f"crashes {figures.crashes} (up to {figures.most_crashes} in one run)",
        f"  witnessed: {', '.join(name for name in outcome.witnesses if name in figures.witnessed) or 'none'}",
    ]
    for name in outcome.unwitnessed:
        lines.append(
            f"  never reached: {name!r}, so the invariants it witnesses went unchecked (raise --steps or --examples)"
        )
    return "\n".join(lines) + "\n"
