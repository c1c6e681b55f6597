"""Benchmark: how many processes per second this machine can start, beside the sweep's rate.

Three figures, measured one after the other in one run, with the same number of workers:

- bare fork + exit: a lean interpreter forks, the child exits at once (os._exit), the
  parent reaps it;
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

The first two are the machine's limit: `--workers` lean interpreters (fork_limit.py, started
with -S, importing only os, sys, socket, resource and time) fork the children between them,
one child at a time each. The forker must be lean because a fork costs more the more memory
the forking process has (its page tables are copied, and torn down at the child's exit):
forked from this script, which has imported the sweep, a fork + exit costs several times the
CPU. Beside each rate is the CPU time it cost per process: for the limit, the forkers' over
their loops (their children's included) and the tracker service's over the same time; for
the sweep, every process counted (this one, its children, the tracker service, the zygote
and the processes it forked), then split into this process's own (the sweep's bookkeeping:
restoring, reading, digesting and saving worlds, the graph) and its children's (the
program's processes, the zygote, the tracker service). On a machine shared with other work
the rates move with the load, the CPU time much less. The ratio lines give the ratio of
the rates, and how many fork + HTTP + exits one swept process costs in CPU time, all of it
and its processes' alone.

    .venv/bin/python benchmarks/process_rate.py [--count 2000] [--workers N] [--depth 1] [--mode kill|snapshots|every]

The sweep keeps its scratch files where `crashsweep sweep` does (realsweep/process/scratch.py: a
tmpfs when there is one), which the first line names.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fork_limit import cpu  # benchmarks/ is this script's folder, first on sys.path

from crashsweep.realsweep.process import scratch
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.sweep import SweepOptions
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.job import TRIAGE

FORK_LIMIT = Path(__file__).resolve().parent / "fork_limit.py"


def limit(count: int, workers: int, service: ServiceProcess | None) -> tuple[float, float]:
    """The machine's limit: (processes per second, CPU seconds per process) of `count` lean forks.

    `workers` lean interpreters (fork_limit.py) fork `count` children between them, each one
    child at a time, their clocks started together; with a `service`, each child asks it for
    /health first. The CPU is the forkers' over their loops, their children's included, and
    the service's over the same time.
    """
    shares = [count // workers + (i < count % workers) for i in range(workers)]
    url = None if service is None else urlsplit(service.url)
    address = [] if url is None else [str(url.hostname), str(url.port)]
    forkers = [
        subprocess.Popen(
            [sys.executable, "-S", str(FORK_LIMIT), str(share), *address],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for share in shares
    ]
    for forker in forkers:
        assert forker.stdout is not None
        if forker.stdout.readline().strip() != "ready":
            raise RuntimeError("a lean forker did not start")
    served = 0.0 if service is None else process_cpu(service.pid)
    started = time.monotonic()
    for forker in forkers:
        assert forker.stdin is not None
        forker.stdin.write("go\n")
        forker.stdin.flush()
    spent = 0.0
    for forker in forkers:
        out, _ = forker.communicate()
        if forker.returncode != 0:
            raise RuntimeError("a lean forker failed")
        spent += float(out.split()[-2])
    seconds = time.monotonic() - started
    if service is not None:
        spent += process_cpu(service.pid) - served
    return count / seconds, spent / count


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) a running process has used so far (Linux: /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sweep_rate(depth: int, workers: int, mode: str) -> tuple[float, int, float]:
    """The reference loop's real sweep: (processes per second, processes, seconds)."""
    options = SweepOptions(depth=depth, workers=workers, dedup=mode != "every", snapshots=mode == "snapshots")
    result = reference.run("agent-loop", TRIAGE, None, "keyed", options)
    return result.processes / result.seconds, result.processes, result.seconds


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2 (argparse would print the usage first)."""
        self.exit(2, f"process_rate.py: {message}\n")


def main() -> int:
    """Time the three and print them side by side."""
    parser = _Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="children per fork figure")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--depth", type=int, default=1, help="depth of the sweep timed")
    parser.add_argument("--mode", choices=("kill", "snapshots", "every"), default="kill", help="how the sweep runs")
    args = parser.parse_args()
    if args.count < args.workers or args.workers < 1 or args.depth < 1:
        parser.error("--workers and --depth must be at least 1, and --count at least --workers")
    bare, bare_cpu = limit(args.count, args.workers, None)
    with tempfile.TemporaryDirectory(prefix="crashsweep-rate-") as root, ServiceProcess(Path(root), "keyed") as svc:
        TrackerClient(svc.url).health()  # the service is up before the clock starts
        http, http_cpu = limit(args.count, args.workers, svc)
    own, children = cpu()
    swept, processes, seconds = sweep_rate(args.depth, args.workers, args.mode)
    own_after, children_after = cpu()
    bookkeeping, program = (own_after - own) / processes, (children_after - children) / processes
    base = scratch.memory_base() if not os.environ.get("TMPDIR") else None
    where = f"a tmpfs ({base})" if base is not None else f"{tempfile.gettempdir()} (no tmpfs with room)"
    print(f"{args.workers} workers, {os.cpu_count()} cores; the sweep's scratch folders on {where}")
    label = f"sweep (agent-loop, triage, keyed; depth {args.depth}, {args.mode})"
    per = bookkeeping + program
    rows = [
        ("bare fork + exit (lean forker)", f"{bare:8.0f}", f"{bare_cpu * 1000:8.1f}", ""),
        ("fork + HTTP request + exit (lean forker)", f"{http:8.0f}", f"{http_cpu * 1000:8.1f}", ""),
        (label, f"{swept:8.0f}", f"{per * 1000:8.1f}", f"   ({processes} in {seconds:.1f} s)"),
        ("  of which the sweep's own bookkeeping (this process)", "", f"{bookkeeping * 1000:8.1f}", ""),
        ("  of which its processes (program, zygote, tracker)", "", f"{program * 1000:8.1f}", ""),
        ("sweep / fork + HTTP + exit", f"{swept / http:8.2f}", f"{per / http_cpu:7.1f}x", ""),
        ("  its processes alone / fork + HTTP + exit", "", f"{program / http_cpu:7.1f}x", ""),
    ]
    print(f"  {'':<62}{'processes/s':>11}   {'CPU ms/process':>14}")
    for name, speed, cost, note in rows:
        print(f"  {name:<62}{speed:>11}   {cost:>14}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
