"""Benchmark: the built-in framework agents on the triage job, swept at depth 2, one row per setup.

Each setup is the example agent of realsweep/adapters/ (LangGraph 1.2 with its SQLite saver,
a DBOS 3.4 workflow on SQLite, the OpenAI Agents SDK 0.24 with its SQLiteSession, pydantic-ai
2.68 on DBOS, a Temporal 1.35 workflow on a dev server), with idempotency keys off or on, the
model's call IDs stable (the job's) or fresh (new on every ask), and, for LangGraph, a
durability mode. The
depth-1 figures are the one-crash scenarios of the same sweep. It takes a long while (a few
thousand framework processes), so CI runs depth 1 (tests/realsweep/adapters/test_builtin.py) and
this script is run by hand:

    .venv/bin/python benchmarks/frameworks.py [--depth 2] [--workers N] [--format markdown|json] [--own]

With `--own`, the rows are users' own agents instead (docs/examples: a LangGraph graph, a DBOS
agent, an OpenAI Agents SDK agent, a pydantic-ai agent and a Temporal agent, one each), each
the program and check of `cd docs/examples && crashsweep sweep --target MODULE:run --check
MODULE:check` (the check as the command line makes it: run in a child of the sweep's zygote,
which imported the user's module and its framework, not in this process), swept as the
built-in rows are, every scenario run.

A stack whose extra is not installed is skipped, with one line on stderr naming the extra.

Under durability "async" LangGraph writes checkpoints from background threads, so which
effects a crash interrupts varies from run to run: those rows vary a little between runs,
the others do not. Times depend on the machine and its load.

Beside each sweep's figures, its speed against the agent's own cost, measured in the same run:

- `seconds`: the sweep's wall time, from before its tracker service and zygote start (the
  framework's import included) to its last count; of it, `setup_seconds`: the seconds before its first
  process started (the tracker service, the zygote's interpreter, the framework's import and
  warm-up: paid once per sweep, whatever its size), and `sweep_seconds`, the rest;
  `rate`: processes per second of `sweep_seconds` (`overall_rate`: of `seconds`);
- `own_cpu_per_process`: the median CPU time of one uninterrupted process of the agent forked
  from a warm process, one at a time after the sweep (agent_cpu.py: the zygote's imports and
  `zygote_warm`, then fork, run to the end, exit; no interpreter start, nothing of the
  sweep's); `own_cpu_in_process`: the same run repeated inside the warm process itself, for
  reference (no fork, caches warm: the least the agent's work can cost);
- `ratio`: `rate` against what the cores allow at that cost, `cores / own_cpu_per_process`
  (`overall_ratio`: the same of `overall_rate`, the setup included),
  where `cores` is the fewer of the machine's cores and the processes run at a time (`--workers`,
  by default what `crashsweep sweep` runs: the cores, twice them for Temporal, whose
  processes wait on its server); 1 would be a sweep that
  spends nothing beyond its processes' own work (its processes that die at a point do less
  than a whole run, so it can pass 1);
- `sweep_cpu_per_process`: every CPU second the sweep cost (this process, the tracker service,
  the zygote and its processes) over its processes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.realsweep.adapters import builtin
from crashsweep.realsweep.adapters.frameworks import named
from crashsweep.realsweep.sweep import ScenarioResult, SweepOptions, SweepResult, sweep
from crashsweep.spec.job import TRIAGE

HERE = Path(__file__).resolve().parent
RUNS = 7
"""Uninterrupted processes per setup whose CPU time gives `own_cpu_per_process` (their median)."""

Setup = tuple[str, str, bool, str, str | None]
"""A row's name, its framework, keys on, call IDs (stable or fresh; with --own, the user's module), durability
(LangGraph's only)."""

SETUPS: tuple[Setup, ...] = (
    ("LangGraph sync, no keys", "langgraph", False, "stable", "sync"),
    ("LangGraph sync, keys from (thread_id, tool_call_id)", "langgraph", True, "stable", "sync"),
    ("LangGraph async (the default), no keys", "langgraph", False, "stable", "async"),
    ("LangGraph async (the default), keys", "langgraph", True, "stable", "async"),
    ("LangGraph exit, keys, call IDs stable", "langgraph", True, "stable", "exit"),
    ("LangGraph exit, keys, call IDs fresh on every ask", "langgraph", True, "fresh", "exit"),
    ("DBOS, no keys", "dbos", False, "stable", None),
    ("DBOS, keys from (workflow_id, step id)", "dbos", True, "stable", None),
    ("OpenAI Agents SDK, no keys", "openai-agents", False, "stable", None),
    ("OpenAI Agents SDK, keys from (session, call_id)", "openai-agents", True, "stable", None),
    ("OpenAI Agents SDK, keys, call IDs fresh on every ask", "openai-agents", True, "fresh", None),
    ("pydantic-ai on DBOS, no keys", "pydantic-ai", False, "stable", None),
    ("pydantic-ai on DBOS, keys from (workflow_id, tool call ID)", "pydantic-ai", True, "stable", None),
    ("pydantic-ai on DBOS, keys, call IDs fresh on every ask", "pydantic-ai", True, "fresh", None),
    ("Temporal, no keys", "temporal", False, "stable", None),
    ("Temporal, keys from (workflow_id, activity_id)", "temporal", True, "stable", None),
)


OWN: tuple[Setup, ...] = (
    ("your own LangGraph graph (my_support_graph)", "langgraph", False, "my_support_graph", None),
    ("your own DBOS agent (my_dbos_agent)", "dbos", False, "my_dbos_agent", None),
    ("your own OpenAI Agents SDK agent (my_openai_agent)", "openai-agents", False, "my_openai_agent", None),
    ("your own pydantic-ai agent (my_pydantic_agent)", "pydantic-ai", False, "my_pydantic_agent", None),
    ("your own Temporal agent (my_temporal_agent)", "temporal", False, "my_temporal_agent", None),
)
"""Users' own agents (--own): the fourth field names the module of docs/examples, swept with its `run` and `check`."""
EXAMPLES = HERE.parent / "docs" / "examples"


def installed(setups: Sequence[Setup]) -> tuple[list[Setup], list[str]]:
    """The setups whose framework is installed, and one line per stack left out because its extra is not."""
    kept: list[Setup] = []
    skipped: dict[str, list[str]] = {}
    for setup in setups:
        missing = named(setup[1]).missing()
        if missing is None:
            kept.append(setup)
        else:
            skipped.setdefault(missing, []).append(setup[0])
    return kept, [
        f"frameworks.py: skipping {len(names)} setup{'s' * (len(names) > 1)}: {why}" for why, names in skipped.items()
    ]


def figures(scenarios: list[ScenarioResult]) -> tuple[int, int, int]:
    """with_dups, dups, missing over `scenarios`."""
    return (
        sum(1 for s in scenarios if s.outcome.dups),
        sum(s.outcome.dups for s in scenarios),
        sum(s.outcome.missing for s in scenarios),
    )


def own_cpu(entry: str, args: tuple[str, ...], runs: int, cwd: Path | None = None) -> dict[str, list[float]]:
    """The agent's own CPU seconds per uninterrupted run (agent_cpu.py, in a process of its own, in `cwd`)."""
    done = subprocess.run(
        [sys.executable, str(HERE / "agent_cpu.py"), entry, str(runs), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    if done.returncode != 0:
        raise RuntimeError(f"agent_cpu.py {entry} failed: {done.stderr.strip().splitlines()[-1:]}")
    measured: dict[str, list[float]] = json.loads(done.stdout)
    return measured


def cpu_seconds() -> float:
    """CPU seconds of this process and of its reaped children so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(name: str, framework: str, keys: bool, call_ids: str, durability: str | None, args: Any) -> dict[str, Any]:
    """Sweep one setup, then measure its agent's own cost; the setup's figures."""
    workers = args.workers or default_workers(framework)
    options = SweepOptions(depth=args.depth, workers=workers)
    before = cpu_seconds()
    if args.own:
        result = swept_own(call_ids, options)
        spent = cpu_seconds() - before
        own = own_cpu(f"{call_ids}:run", (), args.runs, EXAMPLES)
    else:
        target = builtin.target(framework, None, keys=keys, call_ids=call_ids, durability=durability)
        result = sweep(target, builtin.check(TRIAGE), options)
        spent = cpu_seconds() - before
        own = own_cpu(named(framework).agent, target.fork_argv, args.runs)
    per_process = statistics.median(own["forked"])
    cores = min(workers, os.cpu_count() or 1)
    sweep_seconds = max(result.seconds - result.setup, 1e-9)
    rate, overall = result.processes / sweep_seconds, result.processes / result.seconds
    one = figures([s for s in result.scenarios if len(s.crashes) == 1])
    every = figures(list(result.scenarios))
    return {
        "setup": name,
        "framework": framework,
        "depth": args.depth,
        "workers": workers,
        "cores": cores,
        "crash_points": len(result.baseline.points),
        "scenarios": len(result.scenarios),
        "with_dups": [one[0], every[0]],
        "dups": [one[1], every[1]],
        "missing": [one[2], every[2]],
        "unreached": len(result.unreached),
        "processes": result.processes,
        "seconds": round(result.seconds, 3),
        "setup_seconds": round(result.setup, 3),
        "sweep_seconds": round(sweep_seconds, 3),
        "rate": round(rate, 2),
        "overall_rate": round(overall, 2),
        "own_cpu_per_process": round(per_process, 4),
        "own_cpu_in_process": round(statistics.median(own["in_process"]), 4),
        "ratio": round(rate / (cores / per_process), 3),
        "overall_ratio": round(overall / (cores / per_process), 3),
        "sweep_cpu_per_process": round(spent / result.processes, 4),
    }


def default_workers(framework: str) -> int:
    """What `crashsweep sweep` runs at a time without --workers: the cores, twice them where state is in a server.

    A stack whose state lives in a server (Temporal's dev server; users' Temporal agents declare
    CRASHSWEEP_FROM_SCRATCH) waits on it: the CLI runs SERVER_WORKERS_PER_CORE processes per core
    (crashsweep/cli/sweep_modes.py), and this measures what a user gets.
    """
    from crashsweep.cli.limits import cores
    from crashsweep.cli.sweep_modes import SERVER_WORKERS_PER_CORE

    return cores() * (SERVER_WORKERS_PER_CORE if named(framework).state_outside_workdir else 1)


def swept_own(module: str, options: SweepOptions) -> SweepResult:
    """A user's agent of docs/examples swept: the program and check the command line makes of it."""
    from crashsweep.cli.sweep_sources import target_source
    from crashsweep.realsweep.api import Nemesis

    here = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        source = target_source(f"{module}:run", f"{module}:check", {}, "keyed", Nemesis(), None)
        return sweep(source.target, source.check, options)
    finally:
        os.chdir(here)


def row(figures_: dict[str, Any]) -> str:
    """One setup's Markdown row: depth 1 / depth N for each count, then the speed against the agent's own cost."""
    cells = [f"{figures_[name][0]} / {figures_[name][1]}" for name in ("with_dups", "dups", "missing")]
    return (
        f"| {figures_['setup']} | {figures_['crash_points']} | {figures_['scenarios']} | {' | '.join(cells)} | "
        f"{figures_['unreached']} | {figures_['processes']} | "
        f"{figures_['setup_seconds']:.1f} | {figures_['sweep_seconds']:.1f} | "
        f"{figures_['rate']:.1f} | {figures_['own_cpu_per_process'] * 1000:.0f} | {figures_['ratio']:.2f} |"
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2 (argparse would print the usage first)."""
        self.exit(2, f"frameworks.py: {message}\n")


def main() -> int:
    """Sweep every setup and print the table (or the JSON list)."""
    parser = _Parser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--workers", type=int, help="processes at a time (default: what crashsweep sweep runs)")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("--only", metavar="TEXT", help="only the setups whose name contains TEXT")
    parser.add_argument("--runs", type=int, default=RUNS, help="uninterrupted processes measured per setup")
    parser.add_argument("--own", action="store_true", help="users' own agents (docs/examples) instead")
    args = parser.parse_args()
    if args.depth < 1 or (args.workers is not None and args.workers < 1) or args.runs < 1:
        parser.error("--depth, --workers and --runs must be at least 1")
    setups = [setup for setup in (OWN if args.own else SETUPS) if args.only is None or args.only in setup[0]]
    if not setups:
        parser.error(f"--only {args.only!r}: no setup's name contains it")
    setups, skipped = installed(setups)
    for line in skipped:
        print(line, file=sys.stderr)
    if not setups:
        return 1  # every chosen stack lacks its extra: nothing measured, and the lines above say why
    markdown = args.format == "markdown"
    if markdown:
        print(
            f"| setup | crash points | scenarios | with_dups (1 / {args.depth}) | dups (1 / {args.depth}) "
            f"| missing (1 / {args.depth}) | unreached | processes | setup s | sweep s | processes/s "
            "| own CPU ms | ratio |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    started = time.monotonic()
    rows = []
    for name, framework, keys, call_ids, durability in setups:
        rows.append(measure(name, framework, keys, call_ids, durability, args))
        if markdown:
            print(row(rows[-1]), flush=True)
    if markdown:
        print(f"\n{time.monotonic() - started:.0f} s in all, {os.cpu_count()} cores")
    else:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
