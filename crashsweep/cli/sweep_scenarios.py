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
from dataclasses import dataclass
from pathlib import Path

import click

from crashsweep.realsweep import api
from crashsweep.realsweep.api import Crash, ScenarioResult, SweepResult
from crashsweep.spec import invariants, points_file

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
    before a `#` (`#0`, `#-1`, `#abc`, `#`), a pass numbered 0 (`NAME#0`) and one beyond
    MOST_PASSES (a 23-digit K), before any process runs; a K beyond the passes the program
    makes is refused after its first process (`unknown_point`).
    """
    if not text.strip():
        raise click.BadParameter("a crash point's name cannot be empty", param_hint="--crash")
    name, hash_sign, occurrence = text.rpartition("#")
    if hash_sign and not name.strip():
        raise click.BadParameter(f"{text!r} has no name before '#': give NAME or NAME#K", param_hint="--crash")
    if hash_sign and occurrence.isascii() and occurrence.isdigit():
        if int(occurrence) < 1:
            raise click.BadParameter(f"{text!r}: passes count from 1 ({name}#1 is the first)", param_hint="--crash")
        if len(occurrence) > len(str(MOST_PASSES)) or int(occurrence) > MOST_PASSES:
            raise click.BadParameter(
                f"{text!r}: a pass beyond {MOST_PASSES:,} (no sweep lists that many points)", param_hint="--crash"
            )
        return name, int(occurrence)
    return text, 1


MOST_PASSES = points_file.MOST_PASSES
"""The highest pass `--crash NAME#K` takes, as a points file's (spec/points_file.py)."""


def unknown_point(scenario: ScenarioResult, first: tuple[str, int] | None = None) -> str | None:
    """For a re-run whose first process ended before its point: the one line to say so (a usage error).

    A fresh first process passes every point a run without crashes passes (what --list-points
    lists), so a name it never passed is unknown to the program, and a pass beyond those it made
    of a name is too (a later process may miss its point for other reasons). `first`: the first
    --crash as (name, pass), the point of a re-run power cut; the scenario's first crash by default.
    """
    if scenario.unreached != 1:
        return None
    crash = Crash(0, *first) if first is not None else scenario.crashes[0]
    said = points_file.passes_words(crash.point, scenario.points)  # as a points file's point not passed
    if crash.point in scenario.points:
        return f"--crash {crash.label!r}: {said}"
    known = ", ".join(repr(point) for point in dict.fromkeys(scenario.points)) or "none"
    return f"--crash {crash.point!r}: {said} (its points, in order: {known})"


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
    """The command that re-runs the first scenario that violates each property of `names` (the row's).

    `--crash` names crashes, and with `--faults power-loss` one power cut: a scenario with another
    fault move (crashsweep.realsweep.faults.nemesis) is not offered.
    """
    lines = []
    for name in names:
        first = next((s for s in result.scenarios if api.violates(s, name) and _rerun(s) is not None), None)
        if first is not None:
            failed = f", its restart exits with status {first.outcome.exit_status}" if first.outcome.exit_status else ""
            rerun = shlex.join([*command, *(_rerun(first) or [])])
            lines.append(f"  re-run ({name}, scenario {first.code}{failed}):  {rerun}")
    return lines


CUT = "power-loss at "
"""How a power cut's label begins; the rest is its point as `--crash` takes it (faults/power_loss.py)."""


def _rerun(scenario: ScenarioResult) -> list[str] | None:
    """The options that re-run `scenario`: its crashes, or its one power cut; None for another fault move."""
    if not scenario.faults:
        return crash_arguments(scenario.crashes)
    if not scenario.crashes and len(scenario.faults) == 1 and scenario.faults[0].startswith(CUT):
        return ["--faults", "power-loss", "--crash", scenario.faults[0].removeprefix(CUT)]
    return None


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
        os.chmod(temp, file_mode(path))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def file_mode(path: Path) -> int:
    """The mode a record written over `path` gets: the existing file's, else the umask's default (0666 & ~umask).

    It is written through a temporary file, which mkstemp makes 0600 whatever the user's umask.
    """
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0o077)  # read by setting it (to the strictest meanwhile): put back at once
        os.umask(mask)
        return 0o666 & ~mask


@dataclass(frozen=True)
class Partial:
    """The scenarios a sweep has finished so far, each one JSON line appended as it ends, beside `path`.

    `--scenarios FILE` is written whole at the end (`write_jsonl`, sorted); when the sweep is
    interrupted, `keep` puts the lines so far in its place instead: whole up to the last finished
    scenario. A value holding only paths (the sweep's options carry it, even to a cluster).
    """

    path: Path
    temp: Path

    @classmethod
    def beside(cls, path: Path) -> Partial:
        """A new, empty record beside `path` (a hidden temporary file in its folder)."""
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
        os.close(fd)
        return cls(path, Path(temp))

    def __call__(self, scenario: ScenarioResult) -> None:
        """Append `scenario`'s line, in one write."""
        line = (json.dumps(scenario.record()) + "\n").encode()
        fd = os.open(self.temp, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def keep(self) -> int:
        """Put the whole lines so far in place of `path` (none: `path` is left as it was); how many."""
        text = self.temp.read_bytes() if self.temp.exists() else b""
        whole = text[: text.rfind(b"\n") + 1]
        if whole:
            self.temp.write_bytes(whole)
            os.chmod(self.temp, file_mode(self.path))
            os.replace(self.temp, self.path)
        self.drop()
        return whole.count(b"\n")

    def drop(self) -> None:
        """Remove the record (the sweep wrote `path` whole, or failed)."""
        self.temp.unlink(missing_ok=True)


def replay_text(label: str, scenario: ScenarioResult) -> str:
    """One re-run scenario in words: its crashes, its outcome and counters."""
    moves = [f"crash at {c.label!r}" for c in scenario.crashes]
    moves += [f"{fault}: {api.cut_words((fault,))}" for fault in scenario.faults]
    steps = ", restart, ".join(moves) + ", restart to the end"
    if scenario.unreached:
        missed = scenario.crashes[scenario.unreached - 1].label if scenario.crashes else scenario.faults[0]
        return f"{label}\n  {steps}\n  process {scenario.unreached} ended without reaching {missed!r}\n"
    o = scenario.outcome
    if o.stuck:  # the last process can never go on: no end is reached (stuck, or a restart that cannot recover)
        end = "which cannot recover" if o.exit_status else "stuck for good"
        steps = steps.removesuffix(" to the end") + f", {end} ({o.stuck})"
    counters = "   ".join(f"{k} {v}" for k, v in sorted(scenario.counters.items())) or "-"
    broken = "".join(f"  {v.invariant}: {v.why}\n" for v in api.violations(scenario))
    return (
        f"{label}\n  {steps}\n  dups {o.dups}   missing {o.missing}   applied {o.applied}\n{broken}"
        f"  counters      {counters}\n"
    )
