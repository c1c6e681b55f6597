"""A real sweep's figures as the explorer's row (crashsweep.reports.summary.Summary), and its text report.

The columns are the explorer's (SEMANTICS.md section 8), computed from the scenarios the
sweep ran: crash points of the uninterrupted run; scenarios per crash count; over them
with_dups, dups, missing, asks, calls+ (model calls beyond the uninterrupted run's), lookups
and reruns. no-duplicate and no-loss are checked in each scenario's final world (the tracker
never removes a record, so a duplicate once made is still there at the end); the shortest
violating scenario is the counterexample, as "5,12" (process 1 dies at its point 5, the
restart at its point 12). A real sweep has no state graph: states and edges are 0, and the
text and JSON reports give the processes run and the time taken instead.
"""

from __future__ import annotations

import json
from typing import Any

from crashsweep.realsweep import histories
from crashsweep.realsweep.faults.registry import kind_of
from crashsweep.realsweep.sweep import ScenarioResult, SweepResult
from crashsweep.realsweep.values import CANNOT_RECOVER
from crashsweep.reports import table
from crashsweep.reports.summary import InvariantVerdict, Summary
from crashsweep.spec import invariants, metrics, points_file
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.retries import MOVE, MOVE_COUNTER, SCOPES, Stack, counter, stack_label


def summary(
    result: SweepResult,
    *,
    variant: str,
    job: str,
    tracker: str,
    faults: tuple[str, ...] = (),
    fresh_ids: bool = False,
    retries: Stack = (),
) -> Summary:
    """The sweep's row, in the explorer's shape.

    By paths when the sweep deduplicated worlds; with `faults`: scenarios by moves, and the moves'
    tally; with `retries` (the program's retry layers, spec/RETRIES.md): the retry moves in the
    tally, the retries per scope and the worst scenario (1.5). Every registered invariant's verdict
    comes from the scenarios' histories (realsweep/histories.py): decided where they hold the facts
    it needs, "not decided" (with why) where they do not.
    """
    per_k, figures = _figures(result)
    baseline_calls = result.baseline.counters.get(metrics.MODEL_CALLS, 0)
    verdicts = verdicts_of(result)
    return Summary(
        variant=variant,
        job=job,
        depth=result.depth,
        tracker=tracker,
        crash_points=_crash_points(result),
        scenarios=per_k,
        with_dups=figures["with_dups"],
        dups=figures["dups"],
        missing=figures["missing"],
        never_finish=figures["never_finish"],
        asks=figures[metrics.ASKS],
        calls_plus=figures[metrics.MODEL_CALLS] - baseline_calls * sum(per_k.values()),
        lookups=figures[metrics.LOOKUPS],
        reruns=figures[metrics.RERUNS],
        approvals=figures[metrics.APPROVALS],
        states=0,
        edges=0,
        invariants=verdicts,
        faults=faults,
        fresh_ids=fresh_ids,
        moves=_moves(result, faults, bool(retries)) if faults or retries else {},
        **_retry_figures(result, retries),
    )


def _crash_points(result: SweepResult) -> int:
    """The uninterrupted run's points a crash was tried at: every one, or those `--points from:FILE` lists."""
    points = result.baseline.points
    return len(points) if result.listed is None else result.listed.kept(points)


def _retry_figures(result: SweepResult, stack: Stack) -> dict[str, Any]:
    """The row's retry figures (spec/RETRIES.md 1.5), as the model's summary gives them; none without layers."""
    if not stack:
        return {}
    depths = range(1, result.depth + 1)
    every = (result.baseline, *result.scenarios)
    calls = [s.counters.get(metrics.MODEL_CALLS, 0) for s in every]
    if result.counts is not None:
        retried = {counter(scope): result.counts.total(counter(scope), depths) for scope in SCOPES}
    else:
        retried = {counter(scope): sum(s.counters.get(counter(scope), 0) for s in result.scenarios) for scope in SCOPES}
    return {
        "retries": stack_label(stack),
        "retried": retried,
        "worst_dups": max(s.outcome.dups for s in every),  # one scenario per final world is every final world
        "worst_calls": max(calls) if result.most_calls is None else result.most_calls,
        "run_calls": calls[0],
    }


def _figures(result: SweepResult) -> tuple[dict[int, int], dict[str, int]]:
    """Scenarios per number of moves (crashes and faults), and the outcomes and counters summed over every scenario.

    A sweep of every scenario sums its scenarios; a deduplicating one reads the explorer's
    path counts (result.counts), where each final world counts once per path to it.
    """
    depths = range(1, result.depth + 1)
    counters = (metrics.ASKS, metrics.MODEL_CALLS, metrics.LOOKUPS, metrics.RERUNS, metrics.APPROVALS)
    names = ("with_dups", "dups", "missing", "applied", "never_finish", *counters)
    counts = result.counts
    if counts is not None:
        return {k: counts.scenarios.get(k, 0) for k in depths}, {name: counts.total(name, depths) for name in names}
    scenarios = result.scenarios
    per_k = {k: sum(1 for s in scenarios if s.moves == k) for k in depths}
    outcomes = {
        "with_dups": sum(1 for s in scenarios if s.outcome.dups > 0),
        "dups": sum(s.outcome.dups for s in scenarios),
        "missing": sum(s.outcome.missing for s in scenarios),
        "applied": sum(s.outcome.applied for s in scenarios),
        "never_finish": sum(1 for s in scenarios if s.outcome.stuck),
    }
    return per_k, {name: outcomes.get(name, sum(s.counters.get(name, 0) for s in scenarios)) for name in names}


def _moves(result: SweepResult, faults: tuple[str, ...], retries: bool) -> dict[int, dict[str, int]]:
    """Per number of moves k: the crashes, the faults of each kind and the retries the k-move scenarios hold.

    A merging sweep reads the `fault.<kind>` (and `move.retry`) counters its fault edges carry,
    summed over the paths (as the model's summary does); a sweep of every scenario reads its
    scenarios' faults.
    """
    counts, depth, scenarios = result.counts, result.depth, result.scenarios
    named = {kind: fault_counter(kind) for kind in faults}
    if retries:
        named[MOVE] = MOVE_COUNTER
    tally: dict[int, dict[str, int]] = {}
    if counts is not None:
        for k in range(1, depth + 1):
            summed = counts.counters.get(k, {})
            kinds = {kind: summed.get(name, 0) for kind, name in named.items()}
            tally[k] = {"crash": k * counts.scenarios.get(k, 0) - sum(kinds.values()), **kinds}
        return tally
    for k in range(1, depth + 1):
        chosen = [s for s in scenarios if s.moves == k]
        kinds = {"crash": sum(len(s.crashes) for s in chosen), **dict.fromkeys(named, 0)}
        for s in chosen:
            for fault in s.faults:
                kind = kind_of(fault)  # a label: "lost-reply at tracker accepted create_a"
                kinds[kind] = kinds.get(kind, 0) + 1
        tally[k] = kinds
    return tally


def verdicts_of(result: SweepResult) -> tuple[InvariantVerdict, ...]:
    """Each registered invariant's verdict over the baseline and the scenarios.

    The first violating scenario is its counterexample; one history without a fact it needs
    leaves it not decided.
    """
    judged = [(s, histories.judge(s)) for s in (result.baseline, *result.scenarios)]
    found = []
    for n, invariant in enumerate(invariants.registered()):
        undecided = next((v[n] for _, v in judged if not v[n].decided), None)
        if undecided is not None:
            found.append(
                InvariantVerdict(invariant.name, True, invariant.witness, True, decided=False, why=undecided.why)
            )
            continue
        witnessed = any(v[n].witnessed for _, v in judged)
        bad = next((s for s, v in judged[1:] if v[n].violation is not None), None)
        if bad is None:
            found.append(InvariantVerdict(invariant.name, True, invariant.witness, witnessed))
        else:
            crashes = len(bad.crashes)
            verdict = InvariantVerdict(
                invariant.name, False, invariant.witness, witnessed, bad.code, crashes, crashes + 1
            )
            found.append(verdict)
    return tuple(found)


def violation(scenario: ScenarioResult, name: str) -> invariants.Violation | None:
    """What breaks invariant `name` in `scenario` (None: it holds there, or is not decided)."""
    history = histories.scenario_history(scenario)
    verdict = invariants.by_name(name).judge(history)
    return verdict.violation


def violations(scenario: ScenarioResult) -> tuple[invariants.Violation, ...]:
    """What breaks each registered invariant in `scenario`, in the registry's order (none: every one holds)."""
    return tuple(v.violation for v in histories.judge(scenario) if v.violation is not None)


def violates(scenario: ScenarioResult, name: str) -> bool:
    """Whether `scenario` violates invariant `name` (a registered one)."""
    return violation(scenario, name) is not None


def row_text(row: Summary, result: SweepResult, counterexamples: dict[str, str]) -> str:
    """One design's real sweep in words, like `explore`'s report."""
    scenarios = table.scenarios_words(row)  # by crashes, or by moves with their tally: as explore's row says it
    figures = [row.with_dups, row.dups, row.missing, row.asks, row.calls_plus]
    environment = f", {row.environment}" if row.environment else ""
    environment += f", retries {row.retries}" if row.retries else ""
    lines = [
        f"{row.variant}  (real sweep; {f'job {row.job}, ' if row.job != '-' else ''}tracker {row.tracker}, "
        f"depth {row.depth}{environment})",
        f"  crash points  {row.crash_points}{_found(result)}",
        f"  scenarios     {scenarios}   ({sum(row.scenarios.values())} in all{table.never_words(row)})",
        "  " + "   ".join(f"{name} {value}" for name, value in zip(table.FIGURES, figures, strict=True)),
        f"  processes     {result.processes} in {result.seconds:.1f} s, {_how(result)}",
    ]
    lines += recovery_lines(result)
    if row.retries:
        lines.append(table.retry_line(row))
    for v in row.invariants:
        if not v.decided:
            lines.append(f"  {v.name:<13} not decided ({v.why})")
        elif not v.witnessed:
            lines.append(f"  {v.name:<13} NEVER EXERCISED (witness {v.witness!r} was never seen)")
        elif v.holds:
            lines.append(f"  {v.name:<13} holds")
        else:
            lines.append(f"  {v.name:<13} VIOLATED  first in scenario {v.counterexample}: {counterexamples[v.name]}")
    return "\n".join(lines) + "\n"


def unrecovered(result: SweepResult) -> tuple[int, ScenarioResult | None]:
    """The scenarios whose restart could not recover (spec/POINTS.md 5), by paths when merged, and the first of them."""
    if result.counts is not None:
        count = result.counts.total(CANNOT_RECOVER, range(1, result.depth + 1))
    else:
        count = sum(s.counters.get(CANNOT_RECOVER, 0) for s in result.scenarios)
    return count, next((s for s in result.scenarios if s.outcome.exit_status), None)


def recovery_lines(result: SweepResult) -> list[str]:
    """The row's line for the restarts that could not recover: how many scenarios, and the first one's words."""
    count, first = unrecovered(result)
    if first is None:
        return []
    said = f"first {first.code}: {first.outcome.stuck}"
    return [f"  unrecovered   {count} scenario(s) end in a restart that cannot recover ({said})"]


FOUND = {
    "auto": "  (auto: at the program's effects, no marks)",
    "marked,auto": "  (marked and auto: the program's marks and its effects)",
    "syscalls": "  (syscalls: at the system calls that make an effect visible)",
}
"""How the points were found, in the row's words (spec/POINTS.md); marked points, the default, say nothing."""


def _found(result: SweepResult) -> str:
    """After the row's crash points: how they were found, or of how many they were kept and why (from FILE)."""
    if result.listed is not None:
        return f" of {len(result.baseline.points)} kept  (from {result.listed.source})"
    return FOUND.get(result.points, "")


def _how(result: SweepResult) -> str:
    """How the sweep ran: every scenario, or once per distinct world; killed for real, or snapshots."""
    if result.counts is None:
        return "every scenario run, killed for real"
    distinct, reached = result.worlds
    how = "snapshots at the points" if result.snapshots else "killed for real"
    return f"once per world ({distinct} distinct of {reached} reached), {how}"


def counterexamples(result: SweepResult) -> dict[str, str]:
    """Each violated invariant's first scenario, in words: the scenario, then what breaks the invariant there."""
    found: dict[str, str] = {}
    for s in result.scenarios:
        for verdict in histories.judge(s):
            if verdict.violation is not None:
                found.setdefault(verdict.name, f"{s.describe()}: {verdict.violation.why}")
    return found


def to_json(row: Summary, result: SweepResult) -> str:
    """The row as JSON: the explorer's keys, with processes and seconds instead of states and edges."""
    data = row.to_json()
    del data["states"], data["edges"]
    data["processes"] = result.processes
    data["seconds"] = round(result.seconds, 3)
    data["points"] = result.points
    if result.listed is not None:  # crash_points are those kept of the points the run passed
        data["points"] = f"{points_file.FROM}{result.listed.source}"
        data["points_passed"] = len(result.baseline.points)
    count, first = unrecovered(result)
    if first is not None:
        data["cannot_recover"] = {
            "scenarios": count,
            "first": first.code,
            "exit_status": first.outcome.exit_status,
            "detail": first.outcome.stuck,
        }
    if result.counts is not None:
        data["worlds"] = {"distinct": result.worlds[0], "reached": result.worlds[1]}
        data["crashed_worlds"] = "snapshots" if result.snapshots else "killed"
    return json.dumps(data, indent=2) + "\n"
