"""What `crashsweep sweep` sweeps (a design, a framework's example agent, your program), and its report.

A `Source` holds the target and check, the row's names and the command line that names the
same source again (the re-run commands of the text report add `--crash` to it). A target whose
module declares `CRASHSWEEP_FROM_SCRATCH = True` (its state lives outside the work folder, as a
Temporal workflow's history does) is swept from scratch, as `--framework temporal` is; its
source is read for it, not imported (`declares_from_scratch`).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

import click

from crashsweep.cli import formats, options, prog, runs, shipped, sweep_scenarios
from crashsweep.cli.user_check import source, user_check
from crashsweep.realsweep import api
from crashsweep.spec.retries import Stack
from crashsweep.variants import design
from crashsweep.variants.design_file import load_design


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
    from_scratch: bool = False
    """Its state lives in a server, outside the work folder (Temporal's; a target that declares
    CRASHSWEEP_FROM_SCRATCH): every scenario is run from scratch, whatever --dedup says, and, as
    its processes wait on that server for much of their time, without --workers a sweep runs
    SERVER_WORKERS_PER_CORE of them per core (sweep_modes.run)."""

    def run(self, options: api.SweepOptions, progress: api.Progress) -> api.SweepResult:
        """Sweep it (from scratch: no world merged, so none saved or restored)."""
        if self.from_scratch:
            options = replace(options, dedup=False, snapshots=False)
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
    named = ["--variant", variant] if design_path is None else ["--design", shipped.typed(design_path)]
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
    )


def reference_design(name: str) -> None:
    """Refuse a name the model does not know, or one the reference loop does not implement."""
    design(name)
    if name not in api.REFERENCE_DESIGNS:
        raise click.UsageError(
            f"the reference loop does not implement {name!r} yet (it implements: {', '.join(api.REFERENCE_DESIGNS)})"
        )


def reference_upgrade(
    value: str | None, variant: str | None, design_path: Path | None, faults: tuple[str, ...]
) -> tuple[str, Path | None] | None:
    """--upgrade-to of a sweep, checked before any process starts: the reference loop's design, or None.

    The reference loop's restarts run another design (a name it implements, or a design file);
    your own program's run another program (`upgrade_target`); a framework's agent takes none
    (crashsweep.cli.sweep_plan's rules refuse it).
    """
    if value is None:
        return None
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
    """`source` (your own program) whose every restart runs the program `spec` names (made by `make`).

    A program that cannot be made or found is refused here, named as --upgrade-to's: the sweep
    would find it missing only at the first restart, and say it could not start the target's.
    """
    try:
        then = make(spec)
    except (ValueError, api.SweepError) as error:
        raise click.UsageError(f"--upgrade-to {spec}: {error}") from None
    if then.fork is None and _missing(then.argv[0], then.env):
        raise click.UsageError(f"--upgrade-to {spec}: no program {then.argv[0]!r} to run at each restart")
    target = replace(source.target, upgrade=replace(then, env={**then.env, **source.target.env}))
    command = [*source.command, "--upgrade-to", spec]
    return replace(source, target=target, command=command, upgrade=then.label)


def _missing(program: str, env: Mapping[str, str]) -> bool:
    """Whether a command's program is surely not there: a name on no folder of PATH, or an absolute path.

    A relative path is found from each process's work folder, so it is left for the sweep to say.
    """
    if os.sep not in program:
        return shutil.which(program, path=env.get("PATH", os.environ.get("PATH"))) is None
    return os.path.isabs(program) and not os.access(program, os.X_OK)


def framework_source(
    framework: str,
    job_path: Path | None,
    tracker: str,
    keys: str | None,
    call_ids: str | None,
    durability: str | None,
    transcript_repair: str | None = None,
    nemesis: api.Nemesis | None = None,
    schedule_to_close: str | None = None,
) -> Source:
    """A framework's built-in example agent (defaults: keys on, stable call IDs, LangGraph's durability).

    `nemesis`: its faults (trim-context, for the OpenAI Agents SDK's agent, which cuts its session at a restart).
    `schedule_to_close`: the Temporal agent's tool activities' retry budget (one-attempt: spec/RETRIES.md 1.8).
    """
    job, _ = runs.read_job(job_path)
    keys, call_ids = keys or "on", call_ids or "stable"
    mode = durability or api.framework(framework).default_durability
    target = api.framework_target(
        framework,
        job_path,
        keys=keys == "on",
        call_ids=call_ids,
        durability=mode,
        transcript_repair=transcript_repair,
        schedule_to_close=schedule_to_close,
    )
    command = [*prog.current(), "sweep", "--framework", framework, "--keys", keys, "--call-ids", call_ids]
    command += [*(["--durability", mode] if mode else []), *job_args(job_path), "--tracker", tracker]
    command += ["--transcript-repair", transcript_repair] if transcript_repair else []
    command += ["--schedule-to-close", schedule_to_close] if schedule_to_close else []
    faults = nemesis.faults if nemesis is not None else ()
    command += ["--faults", ",".join(faults)] if faults else []
    scratch = api.framework(framework).state_outside_workdir
    check = api.framework_check(job, framework)
    return Source(
        target, check, target.label, job.name, command, nemesis=nemesis or api.Nemesis(), from_scratch=scratch
    )


def target_source(
    target_spec: str, check_spec: str, args: dict[str, str], tracker: str, nemesis: api.Nemesis, upgrade_to: str | None
) -> Source:
    """The user's own program and check; with --upgrade-to, every restart runs the program it names."""
    target, check = _user_target(target_spec, check_spec, args)
    command = [*prog.current(), "sweep", "--target", target_spec, "--check", check_spec, "--tracker", tracker]
    command += [item for k, v in args.items() for item in ("--arg", f"{k}={v}")]
    scratch = declares_from_scratch(target_spec) or (upgrade_to is not None and declares_from_scratch(upgrade_to))
    source = Source(target, check, target.label, "-", command, nemesis=nemesis, from_scratch=scratch)
    if upgrade_to is None:
        return source
    return upgrade_target(source, upgrade_to, lambda spec: program(spec, args))


def _user_target(target_spec: str, check_spec: str, args: dict[str, str]) -> tuple[api.Target, api.Check]:
    """The user's program and check; the current directory is where their modules are found.

    The check's module is not imported here where its source shows the check (user_check.py):
    the sweep runs it in a child of its zygote, which has imported it.
    """
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    api.parse_entry_point(check_spec)
    target = program(target_spec, args)
    return target, user_check(check_spec)


FROM_SCRATCH = "CRASHSWEEP_FROM_SCRATCH"


def declares_from_scratch(target_spec: str) -> bool:
    """Whether a module:function target's module sets CRASHSWEEP_FROM_SCRATCH true (a command: False).

    Read from the module's source, not imported: the CLI does not load the user's framework.
    The name counts as set when the module's top level (also inside `with`, `if` and `try`)
    assigns it True, or imports it from a module that does (the Temporal adapter's), the last
    binding winning. A module that cannot be found or read declares nothing: the sweep's own
    import of it says what is wrong.
    """
    try:
        module, _ = api.parse_entry_point(target_spec)
    except ValueError:
        return False
    return _declared(module, frozenset())


def _declared(module: str, seen: frozenset[str]) -> bool:
    """Whether `module`'s top level binds CRASHSWEEP_FROM_SCRATCH to True (`seen`: the modules that led here)."""
    found = None if module in seen else source(module)
    if found is None:
        return False
    tree, package = found
    value = False
    for node in _top_level(tree.body):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Name) and target.id == FROM_SCRATCH for target in targets):
                value = isinstance(node.value, ast.Constant) and node.value.value is True
        elif isinstance(node, ast.ImportFrom) and any(
            alias.name == FROM_SCRATCH and alias.asname in (None, FROM_SCRATCH) for alias in node.names
        ):
            try:
                origin = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            except (ImportError, ValueError):
                origin = ""
            value = bool(origin) and _declared(origin, seen | {module})
    return value


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run when a module loads, in order: into `with`, `if` and `try` blocks, not into definitions."""
    for node in body:
        yield node
        if isinstance(node, ast.With | ast.If | ast.Try):
            for block in ("body", "orelse", "handlers", "finalbody"):
                for part in getattr(node, block, []):
                    yield from _top_level(part.body if isinstance(part, ast.ExceptHandler) else [part])


def _declaring(target_spec: str, module: str) -> object:
    """What holds `module`'s CRASHSWEEP_ARGS: read from its source where that settles it, else the module imported.

    An agent's module imports its framework (8-18 s for the OpenAI Agents SDK): the CLI reads
    the declaration as `declares_from_scratch` reads its flag, and imports the module (its
    import errors as one line) only where its source does not settle it (`_literal_args`).
    """
    found = source(module)
    settled, declared = _literal_args(found[0]) if found is not None else (False, None)
    if settled:
        return SimpleNamespace(**{sweep_scenarios.DECLARED: declared})
    api.load_entry_point(target_spec)
    return sys.modules[module]


def _literal_args(tree: ast.Module) -> tuple[bool, object]:
    """(True, its value) when the source settles CRASHSWEEP_ARGS, else (False, None): only an import can.

    It settles it when every binding of the name is an assignment of a literal at the module's
    top level (not in an `if` or `try`): the last one's value; or when nothing binds it nor
    imports `*` (None: it declares nothing). An import of it, a computed value, a binding in a
    function or a block: not settled.
    """
    name = sweep_scenarios.DECLARED
    stores = [
        node
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load))
        or (isinstance(node, ast.alias) and (node.asname or node.name) in (name, "*"))
    ]
    top = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id == name
    ]
    if len(stores) != len(top):
        return False, None
    try:
        return True, ast.literal_eval(top[-1]) if top else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def program(target_spec: str, args: dict[str, str]) -> api.Target:
    """The program `target_spec` names: a module:function entry point, or a command line.

    `--arg` pairs reach the program as $CRASHSWEEP_ARGS (a JSON object) and name the row; the
    target's module declares the keys it takes (its CRASHSWEEP_ARGS), checked here.
    """
    here = os.getcwd()
    try:
        module_name, _ = api.parse_entry_point(target_spec)
    except ValueError:
        if args:
            raise ValueError(
                "--arg goes with --target module:function; a command takes its options on its own "
                'command line (--target "python agent.py --durability sync")'
            ) from None
        target = api.Target.command(target_spec)
    else:
        if args:
            sweep_scenarios.check_declared(_declaring(target_spec, module_name), module_name, args)
        target = api.Target.entry_point(target_spec, path=[here])
    if args:
        shown = " ".join(shlex.quote(f"{k}={v}") for k, v in args.items())
        env = {**target.env, api.ARGS: json.dumps(args)}
        target = replace(target, env=env, label=f"{target.label} {shown}")
    return target


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
    )
    row = replace(row, upgrade=source.upgrade)
    click.echo(formats.render(fmt, formats.SWEEP, formats.Swept(row, result, source.command, deterministic)), nl=False)
    return 0 if row.holds else 1


def job_args(job_path: Path | None) -> list[str]:
    return [] if job_path is None else ["--job", shipped.typed(job_path)]
