"""What `crashsweep sweep` sweeps (a design, a framework's example agent, your program), and its report.

A `Source` holds the target and check, the row's names and the command line that names the
same source again (the re-run commands of the text report add `--crash` to it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import click

from crashsweep.cli import formats, options, prog, runs
from crashsweep.realsweep import api
from crashsweep.spec.retries import Stack
from crashsweep.variants import design
from crashsweep.variants.design_file import load_design


def combination(
    variant: str | None,
    design_path: Path | None,
    target_spec: str | None,
    check_spec: str | None,
    target_args: tuple[str, ...],
    framework: str | None,
    framework_options: tuple[str | None, ...],
    job_path: Path | None,
) -> None:
    """Refuse options that do not go together, before any work."""
    if sum(x is not None for x in (variant, design_path, target_spec, framework)) != 1:
        raise click.UsageError(
            "give either --variant or --design (the reference loop), --target (your own program)"
            " or --framework (an example agent)"
        )
    if target_spec is not None and (check_spec is None or job_path is not None):
        raise click.UsageError("--target needs --check module:function, and takes no --job")
    if target_spec is None and (check_spec is not None or target_args):
        raise click.UsageError("--check and --arg go with --target")
    keys, call_ids, durability = framework_options
    if framework is None and (keys is not None or durability is not None):
        raise click.UsageError("--keys and --durability go with --framework")
    if call_ids is not None and target_spec is not None:
        raise click.UsageError("--call-ids goes with --framework, --variant or --design")
    if framework_options[2] is not None and framework != "langgraph":
        raise click.UsageError("--durability goes with --framework langgraph")


@dataclass
class Source:
    """What is swept: the target and check, the row's names, and the command that names it again."""

    target: api.Target
    check: api.Check
    label: str
    job: str
    command: list[str]
    sweep: Callable[[api.SweepOptions, api.Progress], api.SweepResult] | None = None
    nemesis: api.Nemesis = field(default_factory=api.Nemesis)
    """The faults and call IDs of the reference loop's sweep (spec/FAULTS.md); none for the others."""
    state_key: api.StateKey | None = None
    """The key its worlds are named by when none is given (the reference loop's: the lock's pid blanked)."""
    upgrade: str = ""
    """What every restart runs, as the row names it (--upgrade-to; spec/RETRIES.md section 2), "" for none."""
    retries: Stack = ()
    """The reference loop's retry layers, for the row (spec/RETRIES.md 1.5); none for the others."""
    properties: tuple[str, ...] = ()
    """The verdicts its sweep decides beyond no-duplicate and no-loss (the reference loop's PROPERTIES)."""

    def run(self, options: api.SweepOptions, progress: api.Progress) -> api.SweepResult:
        """Sweep it."""
        if self.sweep is not None:
            return self.sweep(options, progress)
        return api.sweep(self.target, self.check, options, progress, self.nemesis)


def variant_source(
    variant: str,
    job_path: Path | None,
    tracker: str,
    design_path: Path | None = None,
    nemesis: api.Nemesis | None = None,
    upgrade: tuple[str, Path | None] | None = None,
) -> Source:
    """The reference loop of design `variant` or of the design file (already checked), under `nemesis`'s faults.

    The command that names it again keeps fresh call IDs (they hold in every process) and the
    upgrade, and not the faults: it re-runs scenarios of crashes only. `upgrade`: the design
    (name, design file) every restart runs.
    """
    job, _ = runs.read_job(job_path)
    env = nemesis or api.Nemesis()
    named = ["--variant", variant] if design_path is None else ["--design", str(design_path)]
    fresh = ["--call-ids", "fresh"] if env.fresh_ids else []
    then = [] if upgrade is None else ["--upgrade-to", upgrade[0] if upgrade[1] is None else str(upgrade[1])]
    command = [*prog.current(), "sweep", *named, *job_args(job_path), "--tracker", tracker, *fresh, *then]
    return Source(
        api.reference_target(variant, job_path, tracker, design_path, upgrade),
        api.reference_check(job),
        variant,
        job.name,
        command,
        lambda options, progress: api.reference_run(
            variant, job, job_path, tracker, options, progress, design_path, env, upgrade
        ),
        env,
        api.reference_state_key,
        "" if upgrade is None else upgrade[0],
        api.reference_retry_layers(design_path),
        api.REFERENCE_PROPERTIES,
    )


def reference_design(name: str) -> None:
    """Refuse a name the model does not know, or one the reference loop does not implement."""
    design(name)
    if name not in api.REFERENCE_DESIGNS:
        raise click.UsageError(
            f"the reference loop does not implement {name!r} yet (it implements: {', '.join(api.REFERENCE_DESIGNS)})"
        )


def reference_upgrade(
    value: str | None, variant: str | None, design_path: Path | None, framework: str | None, faults: tuple[str, ...]
) -> tuple[str, Path | None] | None:
    """--upgrade-to of a sweep, checked before any process starts: the reference loop's design, or None.

    The reference loop's restarts run another design (a name it implements, or a design file);
    your own program's run another program (`upgrade_target`); a framework's agent takes none.
    """
    if value is None:
        return None
    if framework is not None:
        raise click.UsageError("--upgrade-to goes with --variant, --design or --target (not --framework)")
    if variant is None and design_path is None:
        return None  # --target: a program, made when the source is
    version = options.upgrade_version(value)
    assert version is not None
    if version[1] is None:
        reference_design(version[0])
    first = load_design(design_path).design if design_path is not None else design(str(variant))
    options.refuse_with_upgrade(version, faults, first)
    return version


def upgrade_target(source: Source, spec: str, make: Callable[[str], api.Target]) -> Source:
    """`source` (your own program) whose every restart runs the program `spec` names (made by `make`)."""
    then = make(spec)
    target = replace(source.target, upgrade=replace(then, env={**then.env, **source.target.env}))
    command = [*source.command, "--upgrade-to", spec]
    return replace(source, target=target, command=command, upgrade=then.label)


def framework_source(
    framework: str, job_path: Path | None, tracker: str, keys: str | None, call_ids: str | None, durability: str | None
) -> Source:
    """A framework's built-in example agent (defaults: keys on, stable call IDs, LangGraph's durability)."""
    job, _ = runs.read_job(job_path)
    keys, call_ids = keys or "on", call_ids or "stable"
    mode = durability or ("async" if framework == "langgraph" else None)
    target = api.framework_target(framework, job_path, keys=keys == "on", call_ids=call_ids, durability=mode)
    command = [*prog.current(), "sweep", "--framework", framework, "--keys", keys, "--call-ids", call_ids]
    command += [*(["--durability", mode] if mode else []), *job_args(job_path), "--tracker", tracker]
    return Source(target, api.framework_check(job), target.label, job.name, command)


def report(result: api.SweepResult, source: Source, tracker: str, fmt: str, deterministic: int | None = None) -> int:
    """Print the row; 0 when both invariants hold.

    `deterministic`: the start worlds a determinism check ran twice before the sweep (it held).
    """
    faults, fresh = source.nemesis.faults, source.nemesis.fresh_ids
    row = api.sweep_summary(
        result,
        variant=source.label,
        job=source.job,
        tracker=tracker,
        faults=faults,
        fresh_ids=fresh,
        retries=source.retries,
        properties=source.properties,
    )
    row = replace(row, upgrade=source.upgrade)
    click.echo(formats.render(fmt, formats.SWEEP, formats.Swept(row, result, source.command, deterministic)), nl=False)
    return 0 if row.holds else 1


def job_args(job_path: Path | None) -> list[str]:
    return [] if job_path is None else ["--job", str(job_path)]
