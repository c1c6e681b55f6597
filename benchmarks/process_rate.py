"""Benchmark: how many processes per second this machine can start, beside the sweep's rate.

Three figures, side by side:

- bare fork + exit: the parent forks, the child exits at once (os._exit), the parent reaps it;
- fork + one loopback HTTP request + exit: the child asks the tracker service for /health
  (a real service process on 127.0.0.1) before it exits, which is the least a swept process
  of the reference loop does;
- the sweep: a real sweep of the reference loop (design agent-loop, tracker keyed, the triage
  job) at the given depth, its processes divided by its wall time; `--mode` says how it runs:
  `snapshots` (worlds merged, one process per world pausing at its points: the default of
  `crashsweep sweep`), `kill` (worlds merged, a process killed at every point) or `every`
  (every scenario from scratch, `--no-dedup`).

The first two are run one child at a time per worker, on `--workers` threads, like the sweep.

    .venv/bin/python benchmarks/process_rate.py [--count 2000] [--workers N] [--depth 1] [--mode snapshots|kill|every]

Times depend on the machine and its load (other work on the same cores lowers every figure).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.realsweep import reference
from crashsweep.realsweep.engine import SweepOptions
from crashsweep.realsweep.tracker_client import TrackerClient
from crashsweep.realsweep.tracker_service import ServiceProcess
from crashsweep.spec.job import TRIAGE


def forked(child: Callable[[], None]) -> None:
    """Fork; the child runs `child` then exits at once; the parent reaps it and checks its status."""
    pid = os.fork()
    if pid == 0:  # the child: nothing of the parent's cleanup runs
        status = 0
        try:
            child()
        except BaseException:
            status = 1
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("a benchmark child failed")


def rate(count: int, workers: int, child: Callable[[], None]) -> float:
    """Processes per second: `count` forked children, `workers` at a time."""
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda _: forked(child), range(count)))
    return count / (time.monotonic() - started)


def sweep_rate(depth: int, workers: int, mode: str) -> tuple[float, int, float]:
    """The reference loop's real sweep: (processes per second, processes, seconds)."""
    options = SweepOptions(depth=depth, workers=workers, dedup=mode != "every", snapshots=mode == "snapshots")
    result = reference.run("agent-loop", TRIAGE, None, "keyed", options)
    return result.processes / result.seconds, result.processes, result.seconds


def main() -> int:
    """Time the three and print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="children per fork figure")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--depth", type=int, default=1, help="depth of the sweep timed")
    parser.add_argument("--mode", choices=("snapshots", "kill", "every"), default="kill", help="how the sweep runs")
    args = parser.parse_args()
    bare = rate(args.count, args.workers, lambda: None)
    with tempfile.TemporaryDirectory(prefix="crashsweep-rate-") as root, ServiceProcess(Path(root), "keyed") as svc:
        client = TrackerClient(svc.url)
        client.health()  # the service is up before the clock starts
        http = rate(args.count, args.workers, lambda: None if client.health()["ok"] else os._exit(1))
    swept, processes, seconds = sweep_rate(args.depth, args.workers, args.mode)
    print(f"{args.workers} workers, {os.cpu_count()} cores")
    print(f"  bare fork + exit             {bare:8.0f} processes/s")
    print(f"  fork + HTTP request + exit   {http:8.0f} processes/s")
    print(f"  sweep (depth {args.depth}, {args.mode:>9})  {swept:8.0f} processes/s   ({processes} in {seconds:.1f} s)")
    print(f"  sweep / fork + HTTP + exit   {swept / http:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
