"""Benchmark: what a process of a `--points syscalls` sweep costs, in CPU, for a C program and a Python one.

Three sweeps of the docs' examples and the ALICE workload, each printing its processes, wall
seconds, the CPU seconds of this process and every process it waited for (the zygote, the
tracer's shims, the traced programs, the tracker service: getrusage of self and children), and
that CPU per process:

- `my_loop.c` (docs/examples, compiled here with cc) at depth 2, keyless: a C program, whose
  own start makes few system calls, so the shim and the tracer are most of a process's cost;
- `record_upgrade.c` under power loss and the `alice` persistence model at depth 1 (the
  power-loss guide's sweep): cuts with several crash states each;
- the ALICE workload on SQLite's rollback journal under `strict` (benchmarks/alice/, a Python
  program: its interpreter start makes some 1,700 system calls, of which the tracer reads a
  hundred).

    .venv/bin/python benchmarks/syscalls_rate.py [--sweeps my_loop,record_upgrade,alice] [--workers 2] [--runs 1]

Each row is the least CPU of `--runs` sweeps. Figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from crashsweep.realsweep import api

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
ALICE = ROOT / "benchmarks" / "alice"


def cpu_seconds() -> float:
    """The CPU of this process and of every descendant it (or its children) waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def compiled(source: str, folder: Path) -> Path:
    """docs/examples/`source`.c compiled into `folder`."""
    cc = shutil.which("cc")
    if cc is None:
        raise SystemExit("syscalls_rate.py: cc is needed to compile the C examples")
    binary = folder / source
    subprocess.run([cc, "-O2", "-o", str(binary), str(EXAMPLES / f"{source}.c")], check=True)
    return binary


def c_loop(folder: Path, workers: int) -> api.SweepResult:
    check: api.Check = api.load_entry_point("my_c_loop_check:check")  # type: ignore[assignment]
    options = api.SweepOptions(depth=2, points=api.Points.parse("syscalls"), workers=workers, tracker="keyless")
    return api.sweep(api.Target.command([str(compiled("my_loop", folder))]), check, options)


def record_upgrade(folder: Path, workers: int) -> api.SweepResult:
    check: api.Check = api.load_entry_point("record_upgrade_check:check")  # type: ignore[assignment]
    options = api.SweepOptions(depth=1, points=api.Points.parse("syscalls"), workers=workers)
    target = api.Target.command([str(compiled("record_upgrade", folder))])
    return api.sweep(target, check, options, nemesis=api.Nemesis(("power-loss",), persistence="alice"))


def alice_sqlite(folder: Path, workers: int) -> api.SweepResult:
    check: api.Check = api.load_entry_point("alice_check:check")  # type: ignore[assignment]
    points = api.Points.parse("syscalls", exclude="kv.init*")
    options = api.SweepOptions(depth=1, points=points, workers=workers, dedup=False)
    target = api.Target.command([sys.executable, str(ALICE / "workload.py"), "sqlite-rollback"])
    return api.sweep(target, check, options, nemesis=api.Nemesis(("power-loss",), persistence="strict"))


SWEEPS: dict[str, tuple[str, Callable[[Path, int], api.SweepResult]]] = {
    "my_loop": ("my_loop.c, depth 2", c_loop),
    "record_upgrade": ("record_upgrade.c, power loss (alice)", record_upgrade),
    "alice": ("ALICE workload, sqlite-rollback (strict)", alice_sqlite),
}


def fail(message: str) -> NoReturn:
    print(f"syscalls_rate.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweeps", default=",".join(SWEEPS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    chosen = args.sweeps.split(",")
    unknown = [name for name in chosen if name not in SWEEPS]
    if unknown:
        fail(f"unknown sweep {unknown[0]!r} (choose from {', '.join(SWEEPS)})")
    if args.workers < 1 or args.runs < 1:
        fail("--workers and --runs must be at least 1")
    sys.path[:0] = [str(EXAMPLES), str(ALICE)]  # where the checks are found, as `--check` run there finds them
    print(f"{'sweep':42} {'processes':>9} {'wall s':>7} {'CPU s':>7} {'CPU ms/process':>15}")
    for name, sweep in (SWEEPS[key] for key in chosen):
        best: tuple[float, float, int] | None = None
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as folder:
                started, cpu = time.perf_counter(), cpu_seconds()
                result = sweep(Path(folder), args.workers)
                row = (cpu_seconds() - cpu, time.perf_counter() - started, result.processes)
            best = row if best is None or row[0] < best[0] else best
        assert best is not None
        cpu, wall, processes = best
        print(f"{name:42} {processes:>9} {wall:>7.1f} {cpu:>7.1f} {1000 * cpu / processes:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
