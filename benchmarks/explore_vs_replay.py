"""Benchmark: the explorer's path counting against the seed's method, replaying every scenario.

In one run, for each seed design at depths 1..6 on the triage job, it prints the scenarios, the
explorer's distinct states and steps (edges: one per enabled action of a stored state), its wall time and peak
memory, and the same for the naive replay sweep of tests/replay_oracle.py (replay's steps are
measured where it runs, and otherwise computed by path counting; it is not run once its
predicted time passes --replay-budget seconds), with the ratios. Then a generated job of 40
calls (10 turns, mixed reads and writes) at depths 1..4: distinct states per second.

    .venv/bin/python benchmarks/explore_vs_replay.py [--max-depth 6] [--replay-budget 60]

Ratios are measured in one run on one machine, so they compare like with like; absolute
times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.explorer import explore
from crashsweep.spec.job import TRIAGE, Call, Job
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import SEED_DESIGNS, model
from tests.replay_oracle import sweep


def forty_calls() -> Job:
    """10 turns of 4 calls; every third call reads, the rest write."""
    turns = []
    for t in range(10):
        turn = []
        for c in range(4):
            n = 4 * t + c + 1
            writes = n % 3 != 0
            turn.append(Call(f"c{n:02d}", "create_issue" if writes else "search_issues", writes))
        turns.append(tuple(turn))
    return Job("forty", tuple(turns))


def measure_explorer(name: str, job: Job, depth: int) -> tuple[float, int, int, int, int]:
    """(seconds, states, edges, scenarios, replay steps by path counting) of one exploration."""
    start = time.perf_counter()
    exploration = explore(model(name, job, KEYED), depth, max_states=5_000_000)
    seconds = time.perf_counter() - start
    counts = exploration.counts
    scenarios = sum(counts.scenarios.get(k, 0) for k in range(1, depth + 1))
    replay_steps = sum(counts.steps.get(k, 0) for k in range(0, depth + 1))
    return seconds, exploration.states, exploration.edges, scenarios, replay_steps


def peak_mib(name: str, job: Job, depth: int) -> float:
    """Peak traced memory of one exploration, in MiB (a separate run: tracing slows it down)."""
    tracemalloc.start()
    explore(model(name, job, KEYED), depth, max_states=5_000_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def seed_designs(max_depth: int, budget: float) -> None:
    """The seed designs on triage: explorer against replay, per depth."""
    header = (
        f"{'design':<20}{'d':>2}{'scenarios':>14}{'states':>8}{'explorer steps':>15}{'replay steps':>16}"
        f"{'steps ratio':>13}{'explorer s':>11}{'replay s':>10}{'time ratio':>11}{'peak MiB':>9}"
    )
    print(header)
    print("-" * len(header))
    for design in SEED_DESIGNS:
        replay_rate: float | None = None  # seconds per replayed step, from the last replay run
        for depth in range(1, max_depth + 1):
            seconds, states, edges, scenarios, replay_steps = measure_explorer(design.name, TRIAGE, depth)
            memory = peak_mib(design.name, TRIAGE, depth)
            predicted = replay_steps * replay_rate if replay_rate is not None else 0.0
            if predicted <= budget:
                start = time.perf_counter()
                oracle = sweep(design.name, TRIAGE, "keyed", depth)
                replay_seconds = time.perf_counter() - start
                if oracle.steps != replay_steps:
                    found = f"replay made {oracle.steps} steps, path counting says {replay_steps}"
                    raise SystemExit(f"{design.name} depth {depth}: {found}")
                replay_rate = replay_seconds / oracle.steps
                replay_cell, ratio_cell = f"{replay_seconds:10.2f}", f"{replay_seconds / seconds:11.1f}"
                steps_cell = f"{oracle.steps:16,}"
            else:
                replay_cell, ratio_cell = (
                    f"{'~' + format(predicted, '.0f'):>10}",
                    f"{'~' + format(predicted / seconds, '.1f'):>11}",
                )
                steps_cell = f"{'=' + format(replay_steps, ','):>16}"
            print(
                f"{design.name:<20}{depth:>2}{scenarios:>14,}{states:>8,}{edges:>15,}{steps_cell}"
                f"{replay_steps / edges:>13,.0f}{seconds:>11.2f}{replay_cell}{ratio_cell}{memory:>9.1f}",
                flush=True,
            )


def forty(max_depth: int, names: list[str]) -> None:
    """The 40-call job: distinct states per second."""
    job = forty_calls()
    print(f"\n40-call job ({len(job.writes)} writes, {len(job.calls) - len(job.writes)} reads, {len(job.turns)} turns)")
    header = f"{'design':<20}{'d':>2}{'scenarios':>22}{'states':>10}{'edges':>10}{'seconds':>9}{'states/s':>10}"
    print(header)
    print("-" * len(header))
    for name in names:
        for depth in range(1, max_depth + 1):
            seconds, states, edges, scenarios, _ = measure_explorer(name, job, depth)
            print(
                f"{name:<20}{depth:>2}{scenarios:>22,}{states:>10,}{edges:>10,}{seconds:>9.2f}"
                f"{states / seconds:>10,.0f}",
                flush=True,
            )


def main() -> None:
    """Run both parts with the chosen limits."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-depth", type=int, default=6)
    parser.add_argument("--replay-budget", type=float, default=60.0, help="skip a replay predicted to take longer (s)")
    parser.add_argument("--forty-depth", type=int, default=4)
    parser.add_argument("--forty-designs", default="keys-and-markers,agent-loop")
    args = parser.parse_args()
    seed_designs(args.max_depth, args.replay_budget)
    forty(args.forty_depth, args.forty_designs.split(","))
    start = time.perf_counter()
    exploration = explore(model("keys-and-markers", TRIAGE, KEYED), 8)
    seconds = time.perf_counter() - start
    total = sum(exploration.counts.scenarios.get(k, 0) for k in range(1, 9))
    print(f"\nkeys-and-markers at depth 8: {total:,} scenarios, {exploration.states:,} states, {seconds:.2f} s")


if __name__ == "__main__":
    main()
