"""Benchmark: ALICE's published table (OSDI'14, Table 3) beside crashsweep's sweeps of the same engines.

Each engine runnable here (SQLite in both journal modes, LMDB, LevelDB, GDBM) runs the same
key-value workload (benchmarks/alice/workload.py: open, check, insert rows each made durable,
say so at the tracker), swept under `--points syscalls --faults power-loss` at depth 1 under
each persistence model (spec/PERSISTENCE.md). A row gives, per engine and model:

- states: the power cuts' crash states tried (one per cut under strict);
- failing: the scenarios whose restart cannot recover, process crashes (the same under every
  model: a crash loses nothing of what the kernel holds) + power cuts;
- vulnerabilities: the distinct (system call at the cut, consequence) pairs among them, the
  closest thing to ALICE's "static vulnerabilities" (one per source line: the same call on
  the same file at another pass, `#K`, or in another state counts once), with their
  consequences (cannot open, corrupt, out of order, lost);
- ALICE's figure for the engine (Table 3(a), the safest configuration), and the version it
  studied where it differs.

    .venv/bin/python benchmarks/alice_table.py [--engines gdbm,lmdb] [--models strict,alice] [--workers 2]

The reasons for each difference are in docs/benchmarks/alice.md, beside this output.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from crashsweep.realsweep import api

FOLDER = Path(__file__).resolve().parent / "alice"
PAPER = {
    "sqlite-rollback": ("Sqlite-Roll", "1"),
    "sqlite-wal": ("Sqlite-WAL", "0"),
    "lmdb": ("LMDB", "1"),
    "leveldb": ("Leveldb1.10 / 1.15", "10 / 6"),
    "gdbm": ("GDBM", "5"),
}
"""ALICE's name for each engine and its count of static vulnerabilities (Table 3(a), last column)."""

EXCLUDE = "kv.init*"
"""The set-up's calls are no cut points: ALICE makes its database before it records (workload.set_up)."""


@dataclass(frozen=True)
class Row:
    """One engine under one model: what the sweep tried and found."""

    engine: str
    model: str
    states: int
    scenarios: int
    failing: int
    crashes_failing: int
    """Of `failing`, the process crashes (no power cut): the same under every model."""
    vulnerabilities: tuple[tuple[str, str], ...]
    seconds: float


def workload() -> ModuleType:
    """benchmarks/alice/workload.py, imported from its folder (as the check beside it imports it)."""
    if str(FOLDER) not in sys.path:
        sys.path.insert(0, str(FOLDER))
    return importlib.import_module("workload")


def consequence(stuck: str) -> str:
    """The restart's last line's first words: "cannot open", "corrupt", "out of order", "failed write", "lost".

    The sweep says it as "the restart exited with status 4: lost: row 2 ..."; what the
    workload printed follows the first ": ".
    """
    said = re.sub(r"^the restart exited with status -?\d+: ", "", stuck)
    return said.partition(":")[0] or "failed"


def call(label: str) -> str:
    """A cut's or crash's point without its pass and its state: "fsync kv.gdbm#3 / state 2" -> "fsync kv.gdbm"."""
    point = api.split_state(label)[0]
    point = re.sub(r"^(power-loss|crash) at ", "", point)
    return re.sub(r"#\d+$", "", point)


def sweep(engine: str, model: str, workers: int) -> Row:
    """The workload of `engine` swept at depth 1 under power loss and the persistence `model`."""
    workload()  # its folder on sys.path, where `--check alice_check:check` run from there finds the check
    check: api.Check = api.load_entry_point("alice_check:check")  # type: ignore[assignment]

    options = api.SweepOptions(
        depth=1, points=api.Points.parse("syscalls", exclude=EXCLUDE), workers=workers, dedup=False
    )
    target = api.Target.command([sys.executable, str(FOLDER / "workload.py"), engine])
    started = time.perf_counter()
    result = api.sweep(target, check, options, nemesis=api.Nemesis(("power-loss",), persistence=model))
    seconds = time.perf_counter() - started
    failing = [s for s in result.scenarios if s.outcome.exit_status]
    found = {(call(_label(s)), consequence(s.outcome.stuck)) for s in failing}
    states = sum(1 for s in result.scenarios if s.faults)
    crashed = sum(1 for s in failing if not s.faults)
    return Row(engine, model, states, len(result.scenarios), len(failing), crashed, tuple(sorted(found)), seconds)


def _label(scenario: api.ScenarioResult) -> str:
    """The scenario's one move, in words: its fault's label, or "crash at POINT" for a crash."""
    if scenario.faults:
        return scenario.faults[0]
    return f"crash at {scenario.crashes[0].point}" if scenario.crashes else "uninterrupted"


def table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table, ALICE's figure beside each engine's first row."""
    lines = [
        "| engine | model | crash states | failing: crashes + cuts | vulnerabilities | consequences"
        " | ALICE (Table 3a) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        kinds = sorted({kind for _, kind in row.vulnerabilities})
        counted = ", ".join(f"{kind} {sum(1 for _, k in row.vulnerabilities if k == kind)}" for kind in kinds)
        name, figure = PAPER[row.engine]
        lines.append(
            f"| {row.engine} | {row.model} | {row.states} | {row.crashes_failing} + {row.failing - row.crashes_failing}"
            f" | {len(row.vulnerabilities)}"
            f" | {counted or '-'} | {name}: {figure} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--engines", default=",".join(PAPER))
    parser.add_argument("--models", default=",".join(api.PERSISTENCE_MODELS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--details", action="store_true", help="list each vulnerability under the table")
    args = parser.parse_args(argv)
    engines, models = args.engines.split(","), args.models.split(",")
    if args.workers < 1:
        fail(f"--workers must be at least 1, got {args.workers}")
    for engine in engines:
        if engine not in PAPER:
            fail(f"unknown engine {engine!r} (choose from {', '.join(PAPER)})")
    for model in models:
        if model not in api.PERSISTENCE_MODELS:
            fail(f"unknown persistence model {model!r} (choose from {', '.join(api.PERSISTENCE_MODELS)})")
    versions = workload().versions()
    print("versions: " + ", ".join(f"{name} {version}" for name, version in versions.items()))
    rows = []
    for engine in engines:
        for model in models:
            rows.append(sweep(engine, model, args.workers))
            done = rows[-1]
            print(f"alice_table: {engine} {model}: {done.states} crash states in {done.seconds:.0f} s", file=sys.stderr)
    print(table(rows))
    print(f"swept in {sum(row.seconds for row in rows):.0f} s, {sum(row.scenarios for row in rows)} scenarios")
    if args.details:
        for row in rows:
            for point, kind in row.vulnerabilities:
                print(f"  {row.engine} {row.model}: {kind} after a cut or crash at {point}")
    return 0


def fail(message: str) -> NoReturn:
    print(f"alice_table: {message}", file=sys.stderr)
    raise SystemExit(2)


if __name__ == "__main__":
    sys.exit(main())
