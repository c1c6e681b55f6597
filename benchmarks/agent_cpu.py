"""The agent's own CPU time per process: its entry point run to the end, uninterrupted, from a warm process.

    .venv/bin/python benchmarks/agent_cpu.py MODULE RUNS [ARG ...]
    .venv/bin/python benchmarks/agent_cpu.py MODULE:FUNCTION RUNS    (a user's own agent, as `--target`)

Run by frameworks.py in a process of its own (the benchmark's process never imports a
framework, as the sweep's never does). This process becomes what a sweep's zygote is: it
imports MODULE (the framework with it), calls its `zygote_warm(ARGS)` if it has one, and
freezes its objects (gc.freeze). Then, one at a time, with nothing else of the benchmark
running:

- `forked`: RUNS processes forked from it, each running `MODULE.main(ARGS)` (or FUNCTION(), as
  a sweep's `--target module:function` runs it, from the current folder) to the end, from a
  fresh work directory and a fresh space of a real tracker service (keyed), its points and
  counters logged, as a sweep's uninterrupted process runs; each one's CPU time is its own
  from fork to exit (user and system, all its threads: `os.wait4`). This is one process of
  the agent that pays no interpreter start and no import, and nothing of the sweep's:
  no zygote protocol, no world restored or read, no check.
- `in_process`: then `main(ARGS)` in this process itself, once to warm up and RUNS more
  times (`time.process_time` around `main` alone): the agent's work with every per-process
  cost gone (no fork, no first run: caches warm), as in a long-lived server.

It prints one JSON object: {"forked": [seconds per run], "in_process": [seconds per run]}.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.process import scratch
from crashsweep.realsweep.process.runner import TRACKER_URL, WORKDIR
from crashsweep.realsweep.process.zygote import WARM
from crashsweep.realsweep.tracker.service import ServiceProcess


def measure(spec: str, runs: int, argv: list[str]) -> dict[str, list[float]]:
    """CPU seconds of `runs` uninterrupted runs of `spec` (MODULE or MODULE:FUNCTION): forked, then in this process."""
    module_name, _, function = spec.partition(":")
    if function:
        sys.path.insert(0, os.getcwd())  # where the CLI finds a user's module (each run then moves to its own folder)
    module = importlib.import_module(module_name)
    entry = _entry(module, function, argv)
    warm = getattr(module, WARM, None)
    if warm is not None:
        warm(list(argv))
    gc.freeze()
    base = scratch.memory_base() if not os.environ.get("TMPDIR") else None
    here = os.getcwd()
    with (
        tempfile.TemporaryDirectory(prefix="crashsweep-agent-cpu-", dir=base) as root,
        ServiceProcess(Path(root) / "tracker", "keyed") as service,
    ):
        forked = []
        for number in range(runs):
            _fresh(Path(root), service, f"forked-{number}")
            forked.append(_forked(entry))
        in_process = []
        for number in range(runs + 1):
            _fresh(Path(root), service, f"in-process-{number}")
            started = time.process_time()
            entry()
            if number:  # the first run in this process warms up
                in_process.append(time.process_time() - started)
        os.chdir(here)  # out of the folder about to be removed
    return {"forked": forked, "in_process": in_process}


def _fresh(root: Path, service: ServiceProcess, name: str) -> None:
    """A fresh work directory and tracker space for the next run, told as a sweep tells its process."""
    workdir = root / name
    workdir.mkdir()
    os.chdir(workdir)  # as a sweep's process starts: in its work directory (a user's agent may write to ".")
    os.environ[WORKDIR] = str(workdir)
    os.environ[TRACKER_URL] = service.space_url(name)
    os.environ[crashpoint.POINTS_LOG] = str(root / f"{name}.points.log")
    os.environ[crashpoint.COUNTERS_LOG] = str(root / f"{name}.counters.log")
    os.environ[crashpoint.CRASH_AT] = "0"
    crashpoint.reset()


def _entry(module: ModuleType, function: str, argv: list[str]) -> Callable[[], object]:
    """What one run calls: `module.main(argv)`, or a user's `function()` as the probe's entry calls it."""
    if not function:
        return lambda: module.main(list(argv))
    sys.argv = [module.__name__]
    named: Callable[[], object] = getattr(module, function)
    return named


def _forked(entry: Callable[[], object]) -> float:
    """One process forked from this one, running `entry` to its end; its CPU seconds, fork to exit."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            result = entry()
            status = result if isinstance(result, int) else 0
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    _, wait_status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(wait_status) != 0:
        raise RuntimeError(f"{entry}: exit status {os.waitstatus_to_exitcode(wait_status)}")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    """Measure, print the JSON object."""
    if len(sys.argv) < 3 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        sys.stderr.write("agent_cpu.py: usage: agent_cpu.py MODULE RUNS [ARG ...] (RUNS at least 1)\n")
        return 2
    print(json.dumps(measure(sys.argv[1], int(sys.argv[2]), sys.argv[3:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
