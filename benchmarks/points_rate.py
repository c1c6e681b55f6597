"""Benchmark: what finding crash points without marks costs a sweep, in processes per second.

The same real sweep, one after the other in one run, with the same workers: the reference loop
(a design, tracker keyed, the triage job) with its marks (`--points marked`), then with its
marks passed silently and its effects found by the probe's audit hooks and interposition
(`--points auto`), and with both (`marked,auto`). Each process is killed for real at its point
(`--mode kill`, worlds merged), so a process costs the same work in every row but for the
hooks, and the rate (processes over the sweep's wall time) measures what the hooks cost each
process. An auto sweep passes more points, so it runs more processes: the total is beside the
rate. The ratio line is auto's rate over marked's (spec/POINTS.md; issue target: at least 0.5,
i.e. an auto sweep costs at most 2x the marked sweep's processes per second).

    .venv/bin/python benchmarks/points_rate.py [--design agent-loop] [--depth 1] [--workers N] [--runs 3]

Each row is the best of `--runs` sweeps (the least disturbed by other work on the machine).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from crashsweep.realsweep import api
from crashsweep.realsweep.reference import target as reference
from crashsweep.spec.job import TRIAGE

MODES = ("marked", "auto", "marked,auto")


def rate(design: str, depth: int, workers: int, points: str) -> tuple[float, int, int, float]:
    """One sweep: (processes per second, processes, crash points of the uninterrupted run, seconds)."""
    options = api.SweepOptions(
        depth=depth, workers=workers, dedup=True, snapshots=False, points=api.Points.parse(points)
    )
    result = reference.run(design, TRIAGE, None, "keyed", options)
    return result.processes / result.seconds, result.processes, len(result.baseline.points), result.seconds


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2 (argparse would print the usage first)."""
        self.exit(2, f"points_rate.py: {message}\n")


def main() -> int:
    """Time the three modes and print them side by side, with auto's rate over marked's."""
    parser = _Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--design", default="agent-loop", choices=api.REFERENCE_DESIGNS)
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=3, help="sweeps per mode; the best is shown")
    args = parser.parse_args()
    if args.depth < 1 or args.workers < 1 or args.runs < 1:
        parser.error("--depth, --workers and --runs must be at least 1")
    best = {}
    for _ in range(args.runs):  # interleaved: a burst of load slows every mode alike
        for mode in MODES:
            found = rate(args.design, args.depth, args.workers, mode)
            best[mode] = max(best.get(mode, found), found)
    print(f"{args.design}, triage, keyed; depth {args.depth}; {args.workers} workers; best of {args.runs}")
    print(f"  {'--points':<14}{'points':>8}{'processes':>11}{'processes/s':>13}")
    for mode in MODES:
        speed, processes, points, _ = best[mode]
        print(f"  {mode:<14}{points:>8}{processes:>11}{speed:>13.1f}")
    print(f"  auto / marked, processes per second: {best['auto'][0] / best['marked'][0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
