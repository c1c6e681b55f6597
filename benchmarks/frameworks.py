"""Benchmark: the built-in LangGraph and DBOS agents on the triage job, swept at depth 2, one row per setup.

Each setup is the example agent of realsweep/adapters/ (LangGraph 1.2 with its SQLite saver,
or a DBOS 3.4 workflow on SQLite), with idempotency keys off or on, the model's call IDs
stable (the job's) or fresh (new on every ask), and, for LangGraph, a durability mode. The
depth-1 figures are the one-crash scenarios of the same sweep. It takes a long while (a few
thousand framework processes), so CI runs depth 1 (tests/realsweep/adapters/test_builtin.py) and
this script is run by hand:

    .venv/bin/python benchmarks/frameworks.py [--depth 2] [--workers N]

Under durability "async" LangGraph writes checkpoints from background threads, so which
effects a crash interrupts varies from run to run: those rows vary a little between runs,
the others do not. Times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.realsweep.adapters import builtin
from crashsweep.realsweep.sweep import ScenarioResult, SweepOptions, SweepResult, sweep
from crashsweep.spec.job import TRIAGE

SETUPS = (
    ("LangGraph sync, no keys", "langgraph", False, "stable", "sync"),
    ("LangGraph sync, keys from (thread_id, tool_call_id)", "langgraph", True, "stable", "sync"),
    ("LangGraph async (the default), no keys", "langgraph", False, "stable", "async"),
    ("LangGraph async (the default), keys", "langgraph", True, "stable", "async"),
    ("LangGraph exit, keys, call IDs stable", "langgraph", True, "stable", "exit"),
    ("LangGraph exit, keys, call IDs fresh on every ask", "langgraph", True, "fresh", "exit"),
    ("DBOS, no keys", "dbos", False, "stable", None),
    ("DBOS, keys from (workflow_id, step id)", "dbos", True, "stable", None),
)


def figures(scenarios: list[ScenarioResult]) -> tuple[int, int, int]:
    """with_dups, dups, missing over `scenarios`."""
    return (
        sum(1 for s in scenarios if s.outcome.dups),
        sum(s.outcome.dups for s in scenarios),
        sum(s.outcome.missing for s in scenarios),
    )


def row(name: str, result: SweepResult) -> str:
    """One setup's Markdown row: depth 1 / depth N for each figure."""
    one = figures([s for s in result.scenarios if len(s.crashes) == 1])
    every = figures(list(result.scenarios))
    cells = [f"{a} / {b}" for a, b in zip(one, every, strict=True)]
    return (
        f"| {name} | {len(result.baseline.points)} | {len(result.scenarios)} | {' | '.join(cells)} | "
        f"{len(result.unreached)} | {result.processes} | {result.seconds:.0f} |"
    )


def main() -> int:
    """Sweep every setup and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(
        f"| setup | crash points | scenarios | with_dups (1 / {args.depth}) | dups (1 / {args.depth}) "
        f"| missing (1 / {args.depth}) | unreached | processes | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    started = time.monotonic()
    for name, framework, keys, call_ids, durability in SETUPS:
        target = builtin.target(framework, None, keys=keys, call_ids=call_ids, durability=durability)
        result = sweep(target, builtin.check(TRIAGE), SweepOptions(depth=args.depth, workers=args.workers))
        print(row(name, result), flush=True)
    print(f"\n{time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
