"""crashsweep in a test suite: a design explored, or a target swept, as a test that fails with the counterexample.

What the pytest plugin (crashsweep/pytest_plugin.py, installed with crashsweep as entry point
`pytest11`) runs, imported only when a test uses it:

- the marker `@pytest.mark.crashsweep(VARIANT, design=FILE, job=FILE, tracker=..., depth=...,
  faults=(...), call_ids=...)` explores the design before the test body runs and fails the test
  when an invariant is violated or never exercised;
- the fixture `crashsweep` offers the same as calls: `crashsweep.check(...)` (explore, and fail
  the test unless every invariant holds), `crashsweep.explore(...)` (the row and counterexamples,
  to assert on), `crashsweep.check_sweep(...)` and `crashsweep.sweep(...)` (a real sweep of a
  design, a framework's example agent or your program, with `target="module:function"` and
  `check="module:function"`).

A failed test's message is the shortest counterexample's headline, the command that replays
it (`crashsweep replay --path ...`, or for a sweep `crashsweep sweep ... --crash ...`) and, for
an exploration, its whole trace. The exploration runs in the test's process; a sweep runs
`python -m crashsweep sweep --format junit` and reads its JUnit report, so the commands it
prints are the ones crashsweep prints.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli import runs
from crashsweep.reports import trace
from crashsweep.reports.counterexample import Counterexample, shortest
from crashsweep.reports.describe import plural
from crashsweep.reports.replay import PROGRAM, replay_command
from crashsweep.reports.summary import Summary
from crashsweep.spec.design import Design
from crashsweep.spec.faults import parse_call_ids, parse_faults
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.design_file import load_design


@dataclass(frozen=True)
class Explored:
    """An exploration's row and the shortest counterexample of each violated invariant."""

    row: Summary
    counterexamples: tuple[Counterexample, ...]

    @property
    def holds(self) -> bool:
        """Every invariant holds and every witness was seen."""
        return self.row.holds

    @property
    def shortest(self) -> Counterexample | None:
        """The shortest of the counterexamples (fewest steps; the model's order breaks ties), or None."""
        return min(self.counterexamples, key=lambda cx: len(cx.steps), default=None)

    def failure(self, program: Sequence[str] = PROGRAM) -> str:
        """Why the design fails: its shortest counterexample and replay command, or what was never exercised."""
        row = self.row
        head = f"{row.variant} (job {row.job}, tracker {row.tracker}, depth {row.depth})"
        cx = self.shortest
        if cx is None:
            unseen = ", ".join(f"{v.name} (witness {v.witness!r})" for v in row.invariants if not v.witnessed)
            return f"{head}: NEVER EXERCISED: {unseen}: the check proves nothing"
        size = plural(cx.crashes, "move" if cx.faults else "crash")
        return (
            f"{head}: {cx.invariant} VIOLATED: shortest counterexample: {size}, "
            f"{plural(len(cx.steps), 'step')}, path {cx.code}\n"
            f"replay: {replay_command(cx, program=program)}\n\n{trace.text(cx, program=program)}"
        )


@dataclass(frozen=True)
class Swept:
    """A real sweep's verdicts, read from its JUnit report: each failure's message and text (the re-run command)."""

    status: int
    failures: tuple[tuple[str, str], ...]
    report: str

    @property
    def holds(self) -> bool:
        """Every invariant the sweep decides held in every scenario."""
        return self.status == 0 and not self.failures


def explore(
    variant: str | None = None,
    *,
    design: str | Path | None = None,
    job: str | Path | None = None,
    tracker: str = "keyed",
    depth: int = 1,
    faults: Sequence[str] | str = (),
    call_ids: str = "stable",
    max_states: int = runs.DEFAULT_MAX_STATES,
) -> Explored:
    """Explore the design named `variant`, or the design file `design`, as `crashsweep explore` does."""
    if (variant is None) == (design is None):
        raise ValueError("crashsweep: give a variant name or design=FILE (one of them)")
    if tracker not in TRACKERS:
        raise ValueError(f"crashsweep: unknown tracker {tracker!r} (known: {', '.join(TRACKERS)})")
    kinds = parse_faults(faults if isinstance(faults, str) else ",".join(faults))
    job_path = None if job is None else Path(job)
    design_path = None if design is None else Path(design)
    loaded, source = runs.read_job(job_path)
    choices = runs.Choices(
        loaded, source, runs.tracker_kind(tracker), depth, max_states, kinds, parse_call_ids(call_ids)
    )
    chosen: str | Design = load_design(design_path).design if design_path is not None else str(variant)
    exploration, row = runs.run(chosen, choices)
    found = shortest(
        exploration,
        variant=row.variant,
        job=row.job,
        job_file=None if job_path is None else str(job_path.resolve()),
        tracker=row.tracker,
        design_file=None if design_path is None else str(design_path.resolve()),
    )
    return Explored(row, tuple(found))


def check(variant: str | None = None, **options: Any) -> Explored:
    """Explore (the arguments of `explore`) and fail the running test unless every invariant holds."""
    explored = explore(variant, **options)
    if not explored.holds:
        pytest.fail(explored.failure(), pytrace=False)
    return explored


def sweep(
    variant: str | None = None,
    *,
    design: str | Path | None = None,
    target: str | None = None,
    check: str | None = None,
    framework: str | None = None,
    args: Mapping[str, str] | None = None,
    job: str | Path | None = None,
    tracker: str = "keyed",
    depth: int = 1,
    options: Sequence[str] = (),
) -> Swept:
    """Sweep for real (`crashsweep sweep`): a design, a framework's agent, or `target` checked by `check`.

    `options` are further `crashsweep sweep` options as words (e.g. ["--workers", "2"]).
    A usage error of the sweep (exit 2) or an internal one fails the test with crashsweep's line.
    """
    words = [sys.executable, "-m", "crashsweep", "sweep", "--depth", str(depth), "--tracker", tracker]
    named = (("--variant", variant), ("--design", design), ("--target", target), ("--check", check))
    words += [word for option, value in named if value is not None for word in (option, str(value))]
    words += ["--framework", framework] if framework is not None else []
    words += ["--job", str(job)] if job is not None else []
    words += [word for key, value in (args or {}).items() for word in ("--arg", f"{key}={value}")]
    done = subprocess.run([*words, *options, "--format", "junit"], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        said = done.stderr.strip().splitlines()
        pytest.fail(f"crashsweep sweep exited {done.returncode}: {said[-1] if said else ''}", pytrace=False)
    failures = tuple(
        (element.get("message", ""), element.text or "") for element in ET.fromstring(done.stdout).iter("failure")
    )
    return Swept(done.returncode, failures, done.stdout)


def check_sweep(variant: str | None = None, **options: Any) -> Swept:
    """Sweep (the arguments of `sweep`) and fail the running test unless every invariant it decides held."""
    swept = sweep(variant, **options)
    if not swept.holds:
        pytest.fail("\n".join(f"{message}\n{text}" for message, text in swept.failures), pytrace=False)
    return swept
