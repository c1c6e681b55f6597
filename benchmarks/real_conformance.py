"""Benchmark: the full real conformance, every design at depth 2 on the triage job, beside the model.

For each of the five seed designs (tracker keyed) and agent-loop (keyed and keyless) it runs
the real sweep of the reference loop (real processes killed at every crash point and every
crash point of the restart, a real tracker service on SQLite) and the model explorer, and
prints both rows per design, the differences (or "no difference"), the processes run and the
wall time. Exit status 0 when every real row equals the model's, 1 otherwise. It takes
minutes (about 15,000 processes), so CI runs depth 1 of every design and depth 2 of one
(tests/realsweep/test_conformance.py) and this script is run by hand:

    .venv/bin/python benchmarks/real_conformance.py [--depth 2] [--workers N] [--spawn fork|exec]

Times depend on the machine and its load; the figures do not.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.cmd_sweep import DEFAULT_MATRIX
from crashsweep.realsweep import conformance
from crashsweep.realsweep.engine import SweepOptions
from crashsweep.spec.job import TRIAGE


def main() -> int:
    """Run the matrix and print both rows per design, then the differences."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--spawn", choices=("fork", "exec"), default="fork")
    args = parser.parse_args()
    started = time.monotonic()
    results = []
    for variant, tracker in DEFAULT_MATRIX:
        options = SweepOptions(depth=args.depth, workers=args.workers, spawn=args.spawn)
        result = conformance.conform(variant, TRIAGE, None, tracker, options)
        results.append(result)
        print(f"  {variant}/{tracker}: {result.sweep.processes} processes, {result.sweep.seconds:.1f} s", flush=True)
    print()
    print(conformance.render(results), end="")
    processes = sum(r.sweep.processes for r in results)
    print(
        f"\ndepth {args.depth}, {args.workers} workers, spawn {args.spawn}: {processes} processes in "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0 if all(r.agrees for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
