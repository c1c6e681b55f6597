"""`crashsweep sweep`'s scenario record: every scenario as JSON lines, the re-run commands, unreached ones.

`--scenarios FILE.jsonl` (and `scenarios.jsonl` in the `--keep` folder) holds one line per
scenario: its crash points (index, name, occurrence), processes, counters and outcome; the
uninterrupted run comes first, with no crashes. The text report adds, for the first
counterexample of each kind, the command that re-runs exactly that scenario (`--crash` once
per crashed process, the point by name and occurrence), and the scenarios whose chosen point
was not reached.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from crashsweep.realsweep import api
from crashsweep.realsweep.api import Crash, ScenarioResult, SweepResult
from crashsweep.spec import invariants

SHOWN_UNREACHED = 10


def parse_args(pairs: Sequence[str]) -> dict[str, str]:
    """`--arg key=value` pairs as a dict; click.BadParameter for one that is not key=value."""
    args: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise click.BadParameter(f"{pair!r}: expected key=value", param_hint="--arg")
        args[name.strip()] = value
    return args


DECLARED = "CRASHSWEEP_ARGS"
"""A target module's declaration of the `--arg` keys it takes: {key: allowed values (empty: any)}."""


def check_declared(module: object, module_name: str, args: dict[str, str]) -> None:
    """Refuse (ValueError) an `--arg` key the target's module does not declare, or a value it does not allow.

    A typo (`durability=synch`) would otherwise sweep the wrong configuration cleanly.
    """
    if not args:
        return
    declared = getattr(module, DECLARED, None)
    if not isinstance(declared, dict):
        first = next(iter(args))
        raise ValueError(
            f"--arg {first}: {module_name} declares no arguments; "
            f"add {DECLARED} = {{{first!r}: (allowed values, or () for any)}} to it"
        )
    for name, value in args.items():
        if name not in declared:
            raise ValueError(
                f"--arg {name}: {module_name} takes {', '.join(map(str, declared)) or 'none'} ({DECLARED})"
            )
        allowed = tuple(declared[name] or ())
        if allowed and value not in allowed:
            raise ValueError(f"--arg {name}={value}: {module_name} allows {', '.join(map(str, allowed))}")


def parse_crash(text: str) -> tuple[str, int]:
    """`--crash NAME` or `NAME#K` (the K-th pass of the point): (name, occurrence).

    Refused (click.BadParameter), as no point can ever match them: an empty name, nothing
    before a `#` (`#0`, `#-1`, `#abc`, `#`) and a pass numbered 0 (`NAME#0`).
    """
    if not text.strip():
        raise click.BadParameter("a crash point's name cannot be empty", param_hint="--crash")
    name, hash_sign, occurrence = text.rpartition("#")
    if hash_sign and not name.strip():
        raise click.BadParameter(f"{text!r} has no name before '#': give NAME or NAME#K", param_hint="--crash")
    if hash_sign and occurrence.isdigit():
        if int(occurrence) < 1:
            raise click.BadParameter(f"{text!r}: passes count from 1 ({name}#1 is the first)", param_hint="--crash")
        return name, int(occurrence)
    return text, 1


def unknown_point(scenario: ScenarioResult) -> str | None:
    """For a re-run whose first process ended without ever passing its point's name: the one line to say so.

    A fresh first process passes every point a run without crashes passes, so a name it never
    passed is unknown to the program (a later process may miss its point for other reasons).
    """
    if scenario.unreached != 1 or scenario.crashes[0].point in scenario.points:
        return None
    known = ", ".join(repr(point) for point in dict.fromkeys(scenario.points)) or "none"
    return f"--crash {scenario.crashes[0].point!r}: the program passes no such point (its points, in order: {known})"


def crash_arguments(crashes: Sequence[Crash]) -> list[str]:
    """The `--crash` options that re-run these crashes."""
    out: list[str] = []
    for crash in crashes:
        point = crash.point
        ambiguous = point.rpartition("#")[2].isdigit() and "#" in point
        label = point if crash.occurrence == 1 and not ambiguous else f"{point}#{crash.occurrence}"
        out += ["--crash", label]
    return out


def rerun_lines(
    result: SweepResult, command: Sequence[str], names: Sequence[str] = (invariants.NO_DUPLICATE, invariants.NO_LOSS)
) -> list[str]:
    """The command that re-runs the first scenario of crashes that violates each property of `names` (the row's).

    `--crash` names crashes only: a scenario with a fault move (crashsweep.realsweep.faults.nemesis) is not offered.
    """
    lines = []
    for name in names:
        first = next((s for s in result.scenarios if api.violates(s, name) and not s.faults), None)
        if first is not None:
            lines.append(
                f"  re-run ({name}, scenario {first.code}):  {shlex.join([*command, *crash_arguments(first.crashes)])}"
            )
    return lines


def unreached_lines(result: SweepResult) -> list[str]:
    """The scenarios whose chosen point was not reached: how many, and which."""
    if not result.unreached:
        return []
    shown = ", ".join(_unreached(s) for s in result.unreached[:SHOWN_UNREACHED])
    more = f", and {len(result.unreached) - SHOWN_UNREACHED} more" if len(result.unreached) > SHOWN_UNREACHED else ""
    return [f"  unreached     {len(result.unreached)} scenario(s) whose chosen point was not reached: {shown}{more}"]


def _unreached(scenario: ScenarioResult) -> str:
    crash = scenario.crashes[scenario.unreached - 1]
    return f"{scenario.code} (process {scenario.unreached}, {crash.label!r})"


def scenarios_file(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """A --scenarios callback: a regular file, or a new name in a folder where a file can be made.

    The record is written by a rename over FILE, so anything else at FILE (a device, a folder,
    a link, a file of /proc) would be replaced or fail at the end: refused here, before any work.
    """
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("expected a file name, got nothing")
    path = Path(value)
    if path.is_symlink():
        raise click.BadParameter(f"{value} is a symbolic link: name the file itself")
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise click.BadParameter(f"{value} exists and is not a regular file")
    folder = path.parent
    if not folder.is_dir():
        raise click.BadParameter(f"{folder}: no such folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise click.BadParameter(f"{value}: cannot write here")
    _probe(folder, value, "a file")
    return path


def keep_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """A --keep callback: a new or empty folder, under folders where one can be made."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("expected a folder name, got nothing")
    path = Path(value)
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise click.BadParameter(f"{value} exists and is not a folder")
        try:
            full = any(path.iterdir())
        except OSError as error:
            raise click.BadParameter(f"{value}: cannot read it: {error.strerror or error}") from None
        if full:
            raise click.BadParameter(f"{value} is not empty: give a new or empty folder to keep the sweep's files in")
    existing = Path(os.path.abspath(path)).parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise click.BadParameter(f"{value}: {existing} is not a folder")
    _probe(existing, value, "a folder")
    return path


def _probe(folder: Path, value: str, what: str) -> None:
    """Refuse `value` unless something can be made in `folder` (os.access says yes to root even in /proc)."""
    try:
        os.rmdir(tempfile.mkdtemp(dir=folder, prefix=".crashsweep-probe-"))
    except OSError as error:
        raise click.BadParameter(f"{value}: cannot create {what} in {folder}: {error.strerror or error}") from None


def write_jsonl(path: Path, result: SweepResult) -> None:
    """Every scenario, the uninterrupted run first, one JSON object a line; written whole or not at all."""
    lines = [json.dumps(s.record()) for s in (result.baseline, *result.scenarios, *result.unreached)]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (path.exists() and not stat.S_ISREG(path.stat().st_mode)):
        raise click.ClickException(f"{path} is no longer a regular file: the scenarios were not written")
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in lines))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def replay_text(label: str, scenario: ScenarioResult) -> str:
    """One re-run scenario in words: its crashes, its outcome and counters."""
    steps = ", restart, ".join(f"crash at {c.label!r}" for c in scenario.crashes) + ", restart to the end"
    if scenario.unreached:
        crash = scenario.crashes[scenario.unreached - 1]
        return f"{label}\n  {steps}\n  process {scenario.unreached} ended without reaching {crash.label!r}\n"
    o = scenario.outcome
    if o.stuck:  # the last process can never go on: no end is reached
        steps = steps.removesuffix(" to the end") + f", stuck for good ({o.stuck})"
    counters = "   ".join(f"{k} {v}" for k, v in sorted(scenario.counters.items())) or "-"
    broken = "".join(f"  {v.invariant}: {v.why}\n" for v in api.violations(scenario))
    return (
        f"{label}\n  {steps}\n  dups {o.dups}   missing {o.missing}   applied {o.applied}\n{broken}"
        f"  counters      {counters}\n"
    )
