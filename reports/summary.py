"""A design's row: the figures of one exploration, computed once, as a plain value.

The columns follow section 8 of SEMANTICS.md: crash points of the uninterrupted run,
scenarios per crash count (1..depth; the uninterrupted run is not a scenario), and over
those scenarios with_dups, dups, missing, asks and calls+ (model calls beyond those of the
uninterrupted run), plus the graph's size and every property's verdict. With faults
(spec/FAULTS.md) the scenarios are counted by number of moves (crashes and faults), and
`moves` tallies, per number of moves, the moves of each kind over those scenarios. When the
model was explored with its costs tallied (`crashsweep.explorer.tally.Tallied`), the row also carries the
cost of the design (spec/cost.py): on the uninterrupted run, and summed over the scenarios.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crashsweep.explorer.path import shortest_path
from crashsweep.explorer.search import Exploration
from crashsweep.explorer.tally import Tallied
from crashsweep.explorer.worst import most
from crashsweep.reports.layers import Without
from crashsweep.spec import metrics
from crashsweep.spec.cost import Cost, cost_of
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.retries import MOVE, MOVE_COUNTER, SCOPES, Stack, counter, stack_label
from crashsweep.variants.loop_model import LoopModel


@dataclass(frozen=True)
class InvariantVerdict:
    """An invariant's verdict, with the shortest counterexample's code and crash count."""

    name: str
    holds: bool
    witness: str
    witnessed: bool
    counterexample: str | None = None
    crashes: int | None = None
    steps: int | None = None
    decided: bool = True
    """False where the run's histories lack a fact the invariant needs (a real sweep's stack: spec/HISTORY.md 3)."""
    why: str = ""
    """Why it is not decided."""


@dataclass(frozen=True)
class Summary:
    """One design's row and verdicts at one depth, on one job and one tracker."""

    variant: str
    job: str
    depth: int
    tracker: str
    crash_points: int
    scenarios: dict[int, int]
    with_dups: int
    dups: int
    missing: int
    asks: int
    calls_plus: int
    lookups: int
    reruns: int
    approvals: int
    states: int
    edges: int
    invariants: tuple[InvariantVerdict, ...]
    faults: tuple[str, ...] = ()
    fresh_ids: bool = False
    moves: dict[int, dict[str, int]] = field(default_factory=dict)
    """Per number of moves k: how many crashes and faults of each kind the k-move scenarios hold."""
    fsync: str = ""
    """The fsync policy the row's design was given (compare --fsync; "" for the design's own)."""
    unreadable: str = ""
    """What the row's design was given to do on an unreadable checkpoint ("" for its own)."""
    projection: bool = False
    """Whether the search merged states by the model's state key (`states` and `edges` are then
    the merged graph's; every other figure is the same, spec/SEMANTICS.md section 11)."""
    retries: str = ""
    """The design's retry layers in words (spec/RETRIES.md), "" when it has none."""
    retried: dict[str, int] = field(default_factory=dict)
    """Retries per scope (`retry.call`, ...) summed over the scenarios (with retry layers only)."""
    never_finish: int = 0
    """The scenarios that end stuck and never finish (spec/CONVERSATIONS.md 4)."""
    worst_dups: int = 0
    """The most duplicate records of any one scenario, the uninterrupted run's included (with retry layers)."""
    worst_calls: int = 0
    """The most model calls of any one scenario (with retry layers); the run's own are `run_calls`."""
    run_calls: int = 0
    """The model calls of the uninterrupted run (with retry layers)."""
    per_layer: tuple[Without, ...] = ()
    """Each layer's worst scenario without it (reports/layers.py), when asked for (`explore`)."""
    upgrade: str = ""
    """The design every restart ran (a deploy between a crash and its restart, RETRIES.md 2), "" for none."""

    @property
    def moving(self) -> bool:
        """Whether scenarios are counted by moves (faults or retries), not by crashes alone."""
        return bool(self.faults or self.retries)

    @property
    def environment(self) -> str:
        """The faults and call IDs in words ("" for the seed's environment: crashes, stable IDs)."""
        words = []
        if self.faults:
            words.append(f"faults {', '.join(self.faults)}")
        if self.fresh_ids:
            words.append("fresh call IDs")
        if self.upgrade:
            words.append(f"restarts run {self.upgrade}")
        if self.fsync:
            words.append(f"fsync {self.fsync}")
        if self.unreadable:
            words.append(f"unreadable checkpoint: {self.unreadable}")
        return "; ".join(words)

    run_cost: Cost | None = None
    scenario_cost: Cost | None = None

    @property
    def extra_cost(self) -> Cost | None:
        """What crashes add: the scenarios' summed cost less the uninterrupted run's, once per scenario."""
        if self.run_cost is None or self.scenario_cost is None:
            return None
        return self.scenario_cost.minus(self.run_cost, sum(self.scenarios.values()))

    def cost_json(self) -> dict[str, dict[str, int]] | None:
        """The cost as JSON: `run`, `scenarios` (summed) and `extra` (what crashes add)."""
        extra = self.extra_cost
        if self.run_cost is None or self.scenario_cost is None or extra is None:
            return None
        return {"run": self.run_cost.to_json(), "scenarios": self.scenario_cost.to_json(), "extra": extra.to_json()}

    @property
    def holds(self) -> bool:
        """Every invariant holds and every witness was seen."""
        return all(v.holds and v.witnessed for v in self.invariants)

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-ready object with the documented keys (faults, call_ids, moves: with faults only)."""
        faulty: dict[str, Any] = {}
        if self.faults or self.fresh_ids:
            faulty = {"faults": list(self.faults), "call_ids": "fresh" if self.fresh_ids else "stable"}
        if self.moving:
            faulty["moves"] = {str(k): tally for k, tally in self.moves.items()}
        if self.retries:
            faulty["retries"] = {
                "stack": self.retries,
                "retried": dict(self.retried),
                "worst": {"dups": self.worst_dups, "model_calls": self.worst_calls, "run_model_calls": self.run_calls},
            }
            if self.per_layer:
                faulty["retries"]["per_layer"] = [layer.to_json() for layer in self.per_layer]
        if self.never_finish:
            faulty["never_finish"] = self.never_finish
        given = (("fsync", self.fsync), ("unreadable", self.unreadable), ("upgrade_to", self.upgrade))
        faulty.update({name: value for name, value in given if value})
        return {
            "variant": self.variant,
            "job": self.job,
            "depth": self.depth,
            "tracker": self.tracker,
            "crash_points": self.crash_points,
            "scenarios": {str(k): n for k, n in self.scenarios.items()},
            **faulty,
            "with_dups": self.with_dups,
            "dups": self.dups,
            "missing": self.missing,
            "asks": self.asks,
            "calls_plus": self.calls_plus,
            "ladder": {"rerun": self.reruns, "lookup": self.lookups, "person": self.asks},
            "approvals": self.approvals,
            "states": self.states,
            "edges": self.edges,
            "projection": self.projection,
            "invariants": {
                v.name: {
                    "holds": v.holds,
                    "witness": v.witness,
                    "witnessed": v.witnessed,
                    "counterexample": v.counterexample,
                    "crashes": v.crashes,
                    "steps": v.steps,
                    **({} if v.decided else {"decided": False, "why": v.why}),
                }
                for v in self.invariants
            },
            "cost": self.cost_json(),
        }


def _moves(exploration: Exploration[Any], faults: tuple[str, ...], retries: bool) -> dict[int, dict[str, int]]:
    """Per number of moves k: crashes, each fault kind and retries, summed over the k-move scenarios.

    Each fault edge counts itself (counter `fault.<kind>`), each retry move too (`move.retry`);
    the rest of a scenario's k moves are crashes.
    """
    counts = exploration.counts
    named = {kind: fault_counter(kind) for kind in faults}
    if retries:
        named[MOVE] = MOVE_COUNTER
    tallies = {}
    for k in range(1, exploration.depth + 1):
        counters = counts.counters.get(k, {})
        kinds = {kind: counters.get(name, 0) for kind, name in named.items()}
        tallies[k] = {"crash": k * counts.scenarios.get(k, 0) - sum(kinds.values()), **kinds}
    return tallies


def _stack(model: Any) -> Stack:
    """The retry layers of the design a (tallied) loop model explores; none for another model."""
    inner = model.inner if isinstance(model, Tallied) else model
    return inner.design.retries if isinstance(inner, LoopModel) else ()


def _retry_figures(exploration: Exploration[Any], stack: Stack, crashes: range, worst: bool) -> dict[str, Any]:
    """The row's retry figures: the stack in words, retries per scope, the worst scenario's dups and calls.

    The worst scenario is found for a design with retry layers, or for any when `worst` asks.
    """
    if not stack and not worst:
        return {}
    counts = exploration.counts
    dups = exploration.model.measures["dups"]
    words = {"retries": stack_label(stack)} if stack else {}
    return {
        **words,
        "retried": {counter(scope): counts.total(counter(scope), crashes) for scope in SCOPES},
        "worst_dups": most(exploration, measure=dups),
        "worst_calls": most(exploration, metrics.MODEL_CALLS),
        "run_calls": counts.total(metrics.MODEL_CALLS, range(0, 1)),
    }


def summarize(
    exploration: Exploration[Any],
    *,
    variant: str,
    job: str,
    tracker: str,
    faults: tuple[str, ...] = (),
    fresh_ids: bool = False,
    worst: bool = False,
) -> Summary:
    """Compute a design's row from its exploration (`faults`, `fresh_ids`: the environment it was explored in).

    `worst`: find the worst single scenario even for a design without retry layers (the frontier
    crossed with retry stacks compares them; a design with layers always has it).
    """
    counts = exploration.counts
    depth = exploration.depth
    crashes = range(1, depth + 1)
    scenarios = {k: counts.scenarios.get(k, 0) for k in crashes}
    baseline_runs = counts.scenarios.get(0, 0)
    if baseline_runs != 1:
        raise ValueError(f"expected one uninterrupted run, found {baseline_runs}: the model is not deterministic")
    baseline_calls = counts.total(metrics.MODEL_CALLS, range(0, 1))
    calls_plus = counts.total(metrics.MODEL_CALLS, crashes) - baseline_calls * sum(scenarios.values())
    crash_points = sum(
        1
        for node in range(exploration.states)
        if exploration.crashes(node) == 0 and exploration.point(node) is not None
    )
    verdicts = []
    model = exploration.model
    for prop in model.properties:
        if prop.kind == "sometimes":
            continue
        verdict = exploration.verdicts[prop.name]
        assert prop.witness is not None
        witnessed = exploration.verdicts[prop.witness].holds
        if verdict.holds or verdict.node is None:
            verdicts.append(InvariantVerdict(prop.name, True, prop.witness, witnessed))
            continue
        path = shortest_path(exploration, verdict.node)
        verdicts.append(
            InvariantVerdict(prop.name, False, prop.witness, witnessed, path.code, path.crashes, len(path.steps) - 1)
        )
    costed = isinstance(exploration.model, Tallied)
    stack = _stack(model)
    return Summary(
        variant=variant,
        job=job,
        depth=depth,
        tracker=tracker,
        crash_points=crash_points,
        scenarios=scenarios,
        with_dups=counts.total("with_dups", crashes),
        dups=counts.total("dups", crashes),
        missing=counts.total("missing", crashes),
        never_finish=counts.total("never_finish", crashes),
        asks=counts.total(metrics.ASKS, crashes),
        calls_plus=calls_plus,
        lookups=counts.total(metrics.LOOKUPS, crashes),
        reruns=counts.total(metrics.RERUNS, crashes),
        approvals=counts.total(metrics.APPROVALS, crashes),
        states=exploration.states,
        edges=exploration.edges,
        projection=exploration.projected,
        invariants=tuple(verdicts),
        faults=faults,
        fresh_ids=fresh_ids,
        moves=_moves(exploration, faults, bool(stack)),
        **_retry_figures(exploration, stack, crashes, worst),
        run_cost=cost_of(counts.counters.get(0, {})) if costed else None,
        scenario_cost=cost_of(_summed(counts.counters, crashes)) if costed else None,
    )


def _summed(counters: dict[int, dict[str, int]], crashes: range) -> dict[str, int]:
    """Every counter summed over the given crash counts."""
    total: dict[str, int] = {}
    for k in crashes:
        for name, value in counters.get(k, {}).items():
            total[name] = total.get(name, 0) + value
    return total
