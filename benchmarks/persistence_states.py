"""Benchmark: crash states swept per second under `--persistence alice`, the kill of a cut shared or not.

docs/examples/record_upgrade.c (and with --wal), compiled with cc, swept for real at depth 1
with `--points syscalls --faults power-loss --persistence alice`, every scenario run. A cut's
crash states share the process killed at the cut (realsweep/process/cuts.py): the first
state's strike kills it, the others lay their disk out from its journal and restart. The
same sweep with the sharing off (`cuts.unshared`, an internal switch) kills once per state,
as before. Both rows come from one run, interleaved, with the same workers.

A row: the crash states (power-loss scenarios), the processes the sweep started, the
sweep's wall seconds, states per second (states over wall seconds, the whole sweep's: its
crash scenarios and uninterrupted run included) and CPU seconds (this process and its
children: the shims, the program, the tracker service). Wall time is the best of `--runs`
(the least disturbed by other work on the machine), CPU the least.

    .venv/bin/python benchmarks/persistence_states.py [--workers 2] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.probe.entry import load as load_entry_point
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.process import cuts
from crashsweep.realsweep.sweep import SweepOptions, Target, sweep
from crashsweep.realsweep.values import Check

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
PROGRAMS = ((), ("--wal",))
MODES = (True, False)
"""Shared, then unshared."""


def load_check() -> Check:
    """record_upgrade_check:check, found as `--check` finds it run from docs/examples."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    found: Check = load_entry_point("record_upgrade_check:check")  # type: ignore[assignment]
    return found


def cpu() -> float:
    """CPU seconds so far of this process and its children that were waited for (user and system)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one(binary: Path, args: tuple[str, ...], shared: bool, workers: int, check: Check) -> tuple[int, int, float, float]:
    """One sweep: (crash states, processes, wall seconds, CPU seconds)."""
    options = SweepOptions(depth=1, points=Points(("syscalls",)), workers=workers, dedup=False, tracker="keyed")
    nemesis = Nemesis(("power-loss",), persistence="alice")
    target = Target.command([str(binary), *args])
    before, started = cpu(), time.monotonic()
    if shared:
        result = sweep(target, check, options, nemesis=nemesis)
    else:
        with cuts.unshared():
            result = sweep(target, check, options, nemesis=nemesis)
    seconds, used = time.monotonic() - started, cpu() - before
    states = len([s for s in result.scenarios if s.faults])
    return states, result.processes, seconds, used


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2 (argparse would print the usage first)."""
        self.exit(2, f"persistence_states.py: {message}\n")


def main() -> int:
    """Sweep both programs shared and unshared, interleaved, and print the rows with the rate's ratio."""
    parser = _Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--runs", type=int, default=3, help="sweeps per row; the best wall time, the least CPU")
    args = parser.parse_args()
    if args.workers < 1 or args.runs < 1:
        parser.error("--workers and --runs must be at least 1")
    cc = shutil.which("cc")
    if cc is None:
        parser.error("cc not found: the benchmark compiles docs/examples/record_upgrade.c")
    check = load_check()
    rows: dict[tuple[tuple[str, ...], bool], tuple[int, int, float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="persistence-states-") as folder:
        binary = Path(folder) / "record_upgrade"
        subprocess.run([cc, "-O2", "-o", str(binary), str(EXAMPLES / "record_upgrade.c")], check=True)
        for _ in range(args.runs):  # interleaved: a burst of load slows every row alike
            for program in PROGRAMS:
                for shared in MODES:
                    states, processes, seconds, used = one(binary, program, shared, args.workers, check)
                    old = rows.get((program, shared), (states, processes, seconds, used))
                    rows[program, shared] = (states, processes, min(seconds, old[2]), min(used, old[3]))
    print(f"record_upgrade.c, alice, depth 1; {args.workers} workers; best of {args.runs}")
    print(f"  {'program':<22}{'sharing':>8}{'states':>8}{'processes':>11}{'seconds':>9}{'states/s':>10}{'CPU s':>8}")
    ratios = []
    for program in PROGRAMS:
        name = " ".join(("record_upgrade", *program))
        for shared in MODES:
            states, processes, seconds, used = rows[program, shared]
            mode, rate = "on" if shared else "off", states / seconds
            print(f"  {name:<22}{mode:>8}{states:>8}{processes:>11}{seconds:>9.2f}{rate:>10.1f}{used:>8.2f}")
        on, off = rows[program, True], rows[program, False]
        ratios.append(f"{name} {off[2] / on[2]:.2f} (CPU {on[3] / off[3]:.2f} of unshared's)")
    print(f"  states/s, shared over unshared: {'; '.join(ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
