"""Benchmark: the full real conformance, every design at depth 2 on the triage job, beside the model.

For each of the five seed designs (tracker keyed) and agent-loop (keyed and keyless) it runs
the real sweep of the reference loop (real processes killed at every crash point and every
crash point of the restart, a real tracker service on SQLite) and the model explorer, and
prints both rows per design, the differences (or "no difference"), the processes run and the
wall time. Exit status 0 when every real row equals the model's, 1 otherwise. By default the
sweep merges worlds and takes snapshots at the points (about 800 processes at depth 2);
`--kill` kills a process at every point instead, `--no-dedup` runs every scenario (about
16,000 processes: minutes). `--variants` picks designs of the matrix (e.g. the five seed
designs at depth 3). CI runs smaller cases (tests/realsweep/reference/test_conformance.py,
test_graph.py); this script is run by hand:

    .venv/bin/python benchmarks/real_conformance.py [--depth 2] [--workers N] [--spawn fork|exec]
        [--no-dedup | --kill] [--variants a,b]

Times depend on the machine and its load; the figures do not.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.cli.sweep import DEFAULT_MATRIX
from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.sweep import SweepOptions
from crashsweep.spec.job import TRIAGE


def main() -> int:
    """Run the matrix and print both rows per design, then the differences."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--spawn", choices=("fork", "exec"), default="fork")
    parser.add_argument("--no-dedup", action="store_true", help="run every scenario")
    parser.add_argument("--kill", action="store_true", help="merge worlds, but kill at every point (no snapshots)")
    parser.add_argument("--variants", help="comma-separated designs of the matrix  [default: all of it]")
    args = parser.parse_args()
    chosen = None if args.variants is None else set(args.variants.split(","))
    started = time.monotonic()
    results = []
    for variant, tracker in DEFAULT_MATRIX:
        if chosen is not None and variant not in chosen:
            continue
        dedup = not args.no_dedup
        options = SweepOptions(
            depth=args.depth, workers=args.workers, spawn=args.spawn, dedup=dedup, snapshots=dedup and not args.kill
        )
        result = conformance.conform(variant, TRIAGE, None, tracker, options)
        results.append(result)
        print(f"  {variant}/{tracker}: {result.sweep.processes} processes, {result.sweep.seconds:.1f} s", flush=True)
    print()
    print(conformance.render(results), end="")
    processes = sum(r.sweep.processes for r in results)
    how = "every scenario" if args.no_dedup else "dedup, killed at every point" if args.kill else "dedup, snapshots"
    print(
        f"\ndepth {args.depth}, {args.workers} workers, spawn {args.spawn}, {how}: {processes} processes in "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0 if all(r.agrees for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
