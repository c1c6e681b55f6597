"""Benchmark: how many processes per second this machine can start, beside the sweep's rate.

Three figures, measured one after the other in one run, with the same number of workers:

- bare fork + exit: the parent forks, the child exits at once (os._exit), the parent reaps it;
- fork + one loopback HTTP request + exit: the child asks the tracker service for /health
  (a real service process on 127.0.0.1, a new connection) before it exits, which is the least
  a swept process of the reference loop does;
- the sweep: a real sweep of the reference loop (design agent-loop, tracker keyed, the triage
  job) at the given depth, its processes (every process the engine started: the baseline's,
  the killed ones, the restarts) divided by its wall time, which the engine measures from
  before it starts its tracker service and zygote to its last count; `--mode` says how it
  runs: `kill` (worlds merged, a process killed for real at every point), `snapshots` (worlds
  merged, one process per world pausing at its points: the default of `crashsweep sweep`) or
  `every` (every scenario from scratch, `--no-dedup`).

The first two are run one child at a time per worker, on `--workers` threads, like the
sweep's pool. Beside each rate is the CPU time it cost per process, every process counted
(this one, its children, the tracker service, the zygote and the processes it forked): on a
machine shared with other work the rates move with the load, the CPU time much less. The
last line is the ratio of the rates, and how many fork + HTTP + exits one swept process costs
in CPU time.

    .venv/bin/python benchmarks/process_rate.py [--count 2000] [--workers N] [--depth 1] [--mode kill|snapshots|every]

The sweep keeps its scratch files where `crashsweep sweep` does (realsweep/scratch.py: a
tmpfs when there is one), which the first line names.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.realsweep import reference, scratch
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


def cpu_seconds() -> float:
    """CPU time (user and system) of this process and of every child it has reaped so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextmanager
def cpu_used(into: list[float]) -> Iterator[None]:
    """Append the CPU seconds the block cost (its children reaped by its end) to `into`."""
    before = cpu_seconds()
    yield
    into.append(cpu_seconds() - before)


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
    parser.add_argument("--mode", choices=("kill", "snapshots", "every"), default="kill", help="how the sweep runs")
    args = parser.parse_args()
    cpu: list[float] = []
    with cpu_used(cpu):
        bare = rate(args.count, args.workers, lambda: None)
    with (
        cpu_used(cpu),
        tempfile.TemporaryDirectory(prefix="crashsweep-rate-") as root,
        ServiceProcess(Path(root), "keyed") as svc,
    ):
        client = TrackerClient(svc.url)
        client.health()  # the service is up before the clock starts
        http = rate(args.count, args.workers, lambda: None if client.health()["ok"] else os._exit(1))
    with cpu_used(cpu):
        swept, processes, seconds = sweep_rate(args.depth, args.workers, args.mode)
    base = scratch.memory_base() if not os.environ.get("TMPDIR") else None
    where = f"a tmpfs ({base})" if base is not None else f"{tempfile.gettempdir()} (no tmpfs with room)"
    per = [cpu[0] / args.count, cpu[1] / args.count, cpu[2] / processes]
    print(f"{args.workers} workers, {os.cpu_count()} cores; the sweep's scratch folders on {where}")
    label = f"sweep (agent-loop, triage, keyed; depth {args.depth}, {args.mode})"
    rows = [
        ("bare fork + exit", f"{bare:8.0f}", f"{per[0] * 1000:8.1f}", ""),
        ("fork + HTTP request + exit", f"{http:8.0f}", f"{per[1] * 1000:8.1f}", ""),
        (label, f"{swept:8.0f}", f"{per[2] * 1000:8.1f}", f"   ({processes} in {seconds:.1f} s)"),
        ("sweep / fork + HTTP + exit", f"{swept / http:8.2f}", f"{per[2] / per[1]:7.1f}x", ""),
    ]
    print(f"  {'':<55}{'processes/s':>11}   {'CPU ms/process':>14}")
    for name, speed, cost, note in rows:
        print(f"  {name:<55}{speed:>11}   {cost:>14}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
