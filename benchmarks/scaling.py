"""Benchmark: how the explorer scales with the job's length and the depth, for every design.

Generated jobs of N calls (turns of --per-turn calls; every third call reads, the rest write;
`--per-turn 4` at 40 calls is the 40-call job of explore_vs_replay.py), against the keyed
tracker. Each cell is one exploration, of the graph merged by the state key (`merged`, what
crashsweep explores by default) or of the full graph (`full`, --no-projection), with --graph
choosing which (both by default): distinct states, edges (one per enabled action of a stored state), wall
seconds and states per wall second, the process's CPU seconds and states per CPU second
(what one core does, even on a machine shared with other work), each the best of --repeat
runs (the least disturbed by other work on a shared machine), and the peak memory per
stored state (tracemalloc's peak during
a second, traced run, divided by the states; tracing slows a run, so it is not timed, and
only cells that took at most --memory-budget seconds are traced), and the peak resident
memory of the process during the cell (MB; Linux's VmHWM, reset before the cell, so memory an
earlier cell left resident counts too: with --isolate each cell runs in a fresh process of its
own, and the figure is that cell's alone). A cell
predicted to take more than --budget seconds is skipped: the prediction scales the same
design and depth at fewer calls by the calls' ratio (times 1.2) on the merged graph, which
grows linearly, and by its square on the full graph, whose states grow that way.
The end lists the targets of a fast core, each met or not, judged on CPU time (one core's
work; wall clock in brackets): among them 10,000 calls at depth 2 in under 10 s and 1 GB,
100,000 calls at depth 1 in under 30 s, and each tenfold step in calls at most twelvefold
in CPU time (the ratio printed for every pair of cells ten times apart); under a 1,000-call
cell that misses its target, the CPU time of the explorer alone on as many states (`Chain`:
a model whose step only counts), the floor no design can go under with this search.

With --frontier, one more cell: `crashsweep frontier`'s work, every one of the 512 designs of
the policy space explored on the triage job at depth 2 on this machine's cores, with its
target (under 60 s of wall clock), on the merged graphs as `crashsweep frontier` explores
them (the full graphs' work, states and edges, is pinned by tests/cli/test_frontier.py).

    .venv/bin/python benchmarks/scaling.py [--calls 10,40,100,400,1000] [--depths 1,2,3,4]
        [--designs all] [--graph merged,full] [--per-turn 4] [--budget 60] [--memory-budget 5]
        [--repeat 1] [--frontier] [--isolate]

    e.g. the issue's scale: --calls 1000,10000,100000 --depths 1 --graph merged --budget 600
    and --calls 1000,10000 --depths 2 --graph merged

Figures depend on the machine and its load: run it on a quiet machine, and once.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashsweep.cli.frontier import Task, explore_all
from crashsweep.explorer import Action, Property, explore
from crashsweep.spec.job import TRIAGE, Call, Job
from crashsweep.spec.policy import all_policies
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import DESIGNS, model

MAX_STATES = 20_000_000


def generated(calls: int, per_turn: int) -> Job:
    """`calls` calls in turns of `per_turn` (the last turn may be shorter); every third call reads."""
    numbered = []
    for n in range(1, calls + 1):
        writes = n % 3 != 0
        numbered.append(Call(f"c{n:02d}", "create_issue" if writes else "search_issues", writes))
    turns = tuple(tuple(numbered[i : i + per_turn]) for i in range(0, calls, per_turn))
    return Job(f"generated-{calls}", turns)


@dataclass(frozen=True)
class Cell:
    """One exploration's figures."""

    design: str
    calls: int
    depth: int
    states: int
    edges: int
    seconds: float
    cpu: float
    bytes_per_state: float | None
    merged: bool = False
    """Whether the graph was merged by the state key (False: the full graph, --no-projection)."""
    peak_mb: float | None = None
    """The process's peak resident memory during the cell, MB (None where it cannot be read)."""

    @property
    def graph(self) -> str:
        """merged or full."""
        return "merged" if self.merged else "full"

    @property
    def rate(self) -> float:
        """Distinct states per wall second."""
        return self.states / self.seconds if self.seconds else float("inf")

    @property
    def cpu_rate(self) -> float:
        """Distinct states per CPU second of this process."""
        return self.states / self.cpu if self.cpu else float("inf")


def measure(design: str, job: Job, depth: int, repeat: int = 1, merged: bool = False) -> Cell:
    """Explore `repeat` times; the cell's times are the best wall and the best CPU time of those runs."""
    seconds = cpu = float("inf")
    states = edges = 0
    peak = None
    for _ in range(repeat):
        _reset_peak()
        start, cpu_start = time.perf_counter(), time.process_time()
        exploration = explore(model(design, job, KEYED), depth, max_states=MAX_STATES, projection=merged)
        seconds = min(seconds, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - cpu_start)
        states, edges = exploration.states, exploration.edges
        del exploration
        peak = _peak_mb() if peak is None else max(peak, _peak_mb() or 0.0)
    return Cell(design, len(job.calls), depth, states, edges, seconds, cpu, None, merged, peak)


def _measure_generated(design: str, calls: int, per_turn: int, depth: int, repeat: int, merged: bool) -> Cell:
    """`measure` on the generated job (what a fresh process is handed: the job is made there)."""
    return measure(design, generated(calls, per_turn), depth, repeat, merged)


def isolated(design: str, calls: int, per_turn: int, depth: int, repeat: int, merged: bool) -> Cell:
    """`measure` in a fresh process (spawned: nothing of this one is shared), so its peak memory is the cell's."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        cell: Cell = pool.apply(_measure_generated, (design, calls, per_turn, depth, repeat, merged))
    return cell


_STATUS = Path("/proc/self/status")


def _reset_peak() -> None:
    """Reset the process's peak resident memory (Linux: 5 to /proc/self/clear_refs); nothing elsewhere."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak_mb() -> float | None:
    """The process's peak resident memory since the last reset, MB (VmHWM), or None where it cannot be read."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


FRONTIER_TARGET = 60.0
"""Seconds of wall clock the frontier's whole space (triage, depth 2, every core) should take at most."""


@dataclass(frozen=True)
class FrontierCell:
    """The frontier's work on triage at depth 2: designs, states and edges summed, wall and CPU seconds."""

    designs: int
    states: int
    edges: int
    workers: int
    seconds: float
    cpu: float


def measure_frontier(depth: int = 2, workers: int | None = None) -> FrontierCell:
    """Every design of the policy space explored on triage at `depth`, in a pool of `workers` (every core)."""
    workers = workers or os.cpu_count() or 1
    tasks = [Task(n, policy, TRIAGE, "keyed", depth, MAX_STATES) for n, policy in enumerate(all_policies(), start=1)]
    start, cpu_start = time.perf_counter(), _cpu_with_children()
    rows = explore_all(tasks, workers)
    seconds, cpu = time.perf_counter() - start, _cpu_with_children() - cpu_start
    summaries = [row for row in rows if not isinstance(row, str)]
    assert len(summaries) == len(tasks), [row for row in rows if isinstance(row, str)]
    states = sum(row.states for row in summaries)
    edges = sum(row.edges for row in summaries)
    return FrontierCell(len(tasks), states, edges, workers, seconds, cpu)


def _cpu_with_children() -> float:
    """CPU seconds of this process and its reaped children (the pool's workers, once shut down)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def frontier_target(cell: FrontierCell) -> None:
    """The frontier cell and its target, judged on wall clock (the pool uses every core)."""
    print(
        f"\nfrontier, triage, depth 2, merged: {cell.designs} designs, {cell.states:,} states, {cell.edges:,} edges, "
        f"{cell.workers} workers: {cell.seconds:.2f} s wall [{cell.cpu:.2f} s CPU] "
        f"(target < {FRONTIER_TARGET:g} s: {_met(cell.seconds < FRONTIER_TARGET)})"
    )


def peak_per_state(design: str, job: Job, depth: int, merged: bool = False) -> float:
    """tracemalloc's peak during one more exploration, divided by its states (tracing slows it: not timed)."""
    tracemalloc.start()
    traced = explore(model(design, job, KEYED), depth, max_states=MAX_STATES, projection=merged)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / traced.states


_NEXT = (Action("step", "next"),)
"""The chain's one action, one shared sequence as a loop model returns (the search plans it once)."""


@dataclass(frozen=True)
class Chain:
    """The explorer's floor: a model of `length` + 1 states in a row, whose step only counts.

    Each state has one action and one successor, as most states of a 1,000-call job at depth
    1 have (the restart after the one crash runs to the end). Its invariant fails and its
    witness shows in the first state after the root, and then neither is checked again, as
    no-duplicate and its witness are settled early in the designs whose 1,000-call cells are
    slow (those without keys); a measure is read in the finished state. Exploring it costs the
    search, its index of states, its arrays and its counting, and next to nothing of a model:
    no design can be explored faster than this on as many states.
    """

    length: int

    def initial(self) -> int:
        """The first state."""
        return 0

    def actions(self, state: int) -> tuple[Action, ...]:
        """The one action, until the last state."""
        return () if state == self.length else _NEXT

    def step(self, state: int, action: Action) -> tuple[int, dict[str, int]]:
        """The next number."""
        return state + 1, {}

    def is_finished(self, state: int) -> bool:
        """The last state ends the one scenario."""
        return state == self.length

    def crash_point(self, state: int) -> str | None:
        """No crash points."""
        return None

    @property
    def properties(self) -> tuple[Property[int], ...]:
        """An invariant that the first step breaks, and its witness, which the first step shows."""
        return (
            Property.always("at-the-root", lambda state: state == 0, witness="moved"),
            Property.sometimes("moved", lambda state: state > 0),
        )

    @property
    def measures(self) -> dict[str, Callable[[int], int]]:
        """One figure of the finished state."""
        return {"last": lambda state: state}


def floor(states: int) -> float:
    """CPU seconds to explore a Chain of `states` states (the explorer alone; see Chain)."""
    cpu_start = time.process_time()
    exploration = explore(Chain(states - 1), 1, max_states=MAX_STATES)
    spent = time.process_time() - cpu_start
    assert exploration.states == states
    return spent


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2 (argparse would print the usage first)."""
        self.exit(2, f"scaling.py: {message}\n")


def parse() -> argparse.Namespace:
    """The grid to run, from the command line; a bad value exits 2 with one line."""
    parser = _Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="10,40,100,400,1000", help="job lengths, comma-separated")
    parser.add_argument("--depths", default="1,2,3,4", help="depths, comma-separated")
    parser.add_argument("--designs", default="all", help="design names, comma-separated, or all")
    parser.add_argument("--graph", default="merged,full", help="merged (by the state key), full, or both")
    parser.add_argument("--per-turn", type=int, default=4, help="calls per tool turn")
    parser.add_argument("--budget", type=float, default=60.0, help="skip a cell predicted to take longer (s)")
    parser.add_argument(
        "--memory-budget", type=float, default=5.0, help="trace memory only in cells that took at most this (s)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell; the best times are kept")
    parser.add_argument(
        "--frontier", action="store_true", help="also time the frontier's 512 designs on triage at depth 2"
    )
    parser.add_argument("--isolate", action="store_true", help="run each cell in a fresh process (its own peak memory)")
    args = parser.parse_args()
    try:
        args.calls = sorted({int(n) for n in args.calls.split(",")})
        args.depths = sorted({int(d) for d in args.depths.split(",")})
    except ValueError:
        parser.error("--calls and --depths take comma-separated whole numbers, e.g. --calls 10,40")
    if min(args.calls) < 1 or min(args.depths) < 0 or args.per_turn < 1 or args.repeat < 1:
        parser.error("--calls, --per-turn and --repeat must be at least 1, --depths at least 0")
    args.graph = args.graph.split(",")
    if not args.graph or any(graph not in GRAPHS for graph in args.graph):
        parser.error(f"--graph takes {' or '.join(GRAPHS)}, comma-separated, e.g. --graph merged")
    args.designs = list(DESIGNS) if args.designs == "all" else args.designs.split(",")
    unknown = [name for name in args.designs if name not in DESIGNS]
    if unknown:
        parser.error(f"unknown design {unknown[0]!r} (known: {', '.join(DESIGNS)})")
    return args


GRAPHS = ("merged", "full")
"""The graphs a cell may explore: merged by the state key (crashsweep's default) or full (--no-projection)."""


def run(args: argparse.Namespace) -> list[Cell]:
    """Every cell of the grid that fits the budget, printed as it is measured."""
    header = (
        f"{'design':<20}{'calls':>6}{'d':>3}{'states':>11}{'edges':>11}{'seconds':>9}{'states/s':>10}"
        f"{'cpu s':>8}{'states/cpu-s':>13}{'B/state':>9}{'peak MB':>9}  graph"
    )
    print(header)
    print("-" * len(header), flush=True)
    cells: list[Cell] = []
    for design in args.designs:
        for depth in args.depths:
            for graph in args.graph:
                cells.extend(_row_of_cells(args, design, depth, graph == "merged"))
    return cells


def _row_of_cells(args: argparse.Namespace, design: str, depth: int, merged: bool) -> list[Cell]:
    """One design and depth on one graph, for every job length that fits the budget."""
    cells: list[Cell] = []
    graph = GRAPHS[0] if merged else GRAPHS[1]
    for calls in args.calls:
        last = cells[-1] if cells else None
        ratio = 0.0 if last is None else calls / last.calls
        predicted = 0.0 if last is None else last.seconds * (ratio * 1.2 if merged else ratio**2)
        if predicted > args.budget:
            print(f"{design:<20}{calls:>6}{depth:>3}   skipped: predicted ~{predicted:.0f} s  {graph}", flush=True)
            continue
        job = generated(calls, args.per_turn)
        cell = isolated(design, calls, args.per_turn, depth, args.repeat, merged) if args.isolate else None
        cell = cell or measure(design, job, depth, args.repeat, merged)
        if cell.seconds <= args.memory_budget:
            cell = replace(cell, bytes_per_state=peak_per_state(design, job, depth, merged))
        memory = "-" if cell.bytes_per_state is None else f"{cell.bytes_per_state:,.0f}"
        peak = "-" if cell.peak_mb is None else f"{cell.peak_mb:,.0f}"
        print(
            f"{design:<20}{calls:>6}{depth:>3}{cell.states:>11,}{cell.edges:>11,}{cell.seconds:>9.2f}"
            f"{cell.rate:>10,.0f}{cell.cpu:>8.2f}{cell.cpu_rate:>13,.0f}{memory:>9}{peak:>9}  {graph}",
            flush=True,
        )
        cells.append(cell)
    return cells


MERGED_STATES = 40_000
"""The most states a design's merged graph may store at 1,000 calls, depth 1."""


def merged_targets(cells: list[Cell]) -> None:
    """The merged graph's targets: 1,000 calls at depth 1 in <= 40,000 states and < 1 s; 40 calls at depth 4 < 1 s."""
    for cell in cells:
        if not cell.merged:
            continue
        if (cell.calls, cell.depth) == (1000, 1):
            met = cell.states <= MERGED_STATES and cell.cpu < 1
            print(
                f"  {cell.design} 1,000 calls depth 1, merged: {cell.states:,} states, {cell.cpu:.2f} s "
                f"[{cell.seconds:.2f}] (target <= {MERGED_STATES:,} states and < 1 s: {_met(met)})"
            )
        if (cell.calls, cell.depth) == (40, 4):
            print(
                f"  {cell.design} 40 calls depth 4, merged: {cell.states:,} states, {cell.cpu:.2f} s "
                f"[{cell.seconds:.2f}] (target < 1 s: {_met(cell.cpu < 1)})"
            )


LARGE_TARGETS = {(10_000, 2): 10.0, (100_000, 1): 30.0}
"""(calls, depth) -> the CPU seconds a merged cell of that size may take at most."""
LARGE_MB = {(10_000, 2): 1024.0}
"""(calls, depth) -> the peak resident memory (MB) a merged cell of that size may take at most."""
STEP_RATIO = 12.0
"""The most a tenfold step in calls may multiply the CPU time by (linear, with room for the machine's caches)."""


def large_targets(cells: list[Cell]) -> None:
    """The issue's scale: 10,000 calls at depth 2 under 10 s and 1 GB, 100,000 at depth 1 under 30 s (merged)."""
    for cell in cells:
        limit = LARGE_TARGETS.get((cell.calls, cell.depth))
        if not cell.merged or limit is None:
            continue
        most_mb = LARGE_MB.get((cell.calls, cell.depth))
        met = cell.cpu < limit
        peak = "peak memory unknown" if cell.peak_mb is None else f"{cell.peak_mb:,.0f} MB"
        wanted = f"< {limit:g} s"
        if most_mb is not None:
            met = met and cell.peak_mb is not None and cell.peak_mb < most_mb
            wanted += f" and < {most_mb / 1024:g} GB"
        print(
            f"  {cell.design} {cell.calls:,} calls depth {cell.depth}, merged: {cell.states:,} states, "
            f"{cell.cpu:.2f} s [{cell.seconds:.2f}], {peak} (target {wanted}: {_met(met)})"
        )


def step_ratios(cells: list[Cell]) -> None:
    """For each pair of cells of one design, depth and graph ten times apart in calls: the CPU time's ratio."""
    found = {(c.design, c.depth, c.merged, c.calls): c for c in cells}
    for (design, depth, merged, calls), cell in found.items():
        smaller = found.get((design, depth, merged, calls // 10)) if calls % 10 == 0 else None
        if smaller is None or not smaller.cpu:
            continue
        ratio = cell.cpu / smaller.cpu
        graph = GRAPHS[0] if merged else GRAPHS[1]
        print(
            f"  {design} depth {depth}, {graph}: {calls:,} calls / {calls // 10:,} calls = {ratio:.2f} in CPU time "
            f"[{cell.seconds / smaller.seconds:.2f}] (target <= {STEP_RATIO:g}: {_met(ratio <= STEP_RATIO)})"
        )


def targets(cells: list[Cell]) -> None:
    """The targets of a fast core, each judged on CPU time (one core's work), with the wall clock beside it.

    The merged graph's targets first; the others are the full graph's (the explorer's own speed).
    """
    print("\ntargets (CPU time of this process, one core; in brackets, wall clock)")
    merged_targets(cells)
    large_targets(cells)
    step_ratios(cells)
    found = {(c.design, c.calls, c.depth): c for c in cells if not c.merged}
    for design in ("keys-and-markers", "agent-loop"):
        cell = found.get((design, 40, 4))
        if cell is not None:
            rates = f"{cell.cpu_rate:,.0f} states/s [{cell.rate:,.0f}]"
            print(f"  40 calls, depth 4, {design}: {rates} (target >= 100,000: {_met(cell.cpu_rate >= 100_000)})")
            if cell.bytes_per_state is not None:
                memory = cell.bytes_per_state
                print(f"  40 calls, depth 4, {design}: {memory:,.0f} B/state (target <= 300: {_met(memory <= 300)})")
    for (design, calls, depth), cell in found.items():
        if calls == 400 and (design, 40, depth) in found:
            forty = found[(design, 40, depth)]
            ratio, cpu_ratio = forty.rate / cell.rate, forty.cpu_rate / cell.cpu_rate
            print(
                f"  {design} depth {depth}: 40-call rate / 400-call rate = {cpu_ratio:.2f} [{ratio:.2f}] "
                f"(target <= 2: {_met(cpu_ratio <= 2)})"
            )
        if calls == 1000 and depth == 1:
            print(
                f"  {design} 1,000 calls depth 1: {cell.cpu:.2f} s [{cell.seconds:.2f}] "
                f"(target < 10 s: {_met(cell.cpu < 10)})"
            )
            if cell.cpu >= 10:
                print(
                    f"    the explorer alone on as many states (a chain whose step only counts): "
                    f"{floor(cell.states):.2f} s"
                )


def _met(met: bool) -> str:
    return "met" if met else "not met"


def main() -> None:
    """Run the grid and list the targets (and the frontier's, with --frontier)."""
    args = parse()
    targets(run(args))
    if args.frontier:
        frontier_target(measure_frontier())


if __name__ == "__main__":
    main()
