"""Counterexamples as values: the steps of a violating path, each with its kind, point and state.

A `Counterexample` is what every other report renders (text and JSON traces, the replay
command and pytest snippet, the state graph, the sequence diagram). It is built either from
an exploration (the BFS path to an invariant's first violation, which is a shortest one) or
from a replayed path code. Each step records its action and kind (step, crash, restart, fault), the
crash point's name (for a crash, the point the process crashed at; otherwise the point it
reached, or None when it exited), the world before and after, and the counters it bumped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crashsweep.explorer.model import Kind, Model, Property, PropertyKind
from crashsweep.explorer.path import Path, shortest_path
from crashsweep.explorer.search import Exploration
from crashsweep.reports.describe import plural
from crashsweep.spec.world import World


@dataclass(frozen=True)
class Step:
    """One step of a counterexample: action, kind, crash point, the worlds around it, counters."""

    index: int
    kind: Kind
    action: str
    choice: int
    point: str | None
    before: World
    state: World
    crashes: int
    counters: tuple[tuple[str, int], ...]

    def counter(self, name: str) -> int:
        """How much this step bumped counter `name`."""
        return dict(self.counters).get(name, 0)


@dataclass(frozen=True)
class Counterexample:
    """A path from the initial world and the invariant its last state violates (if any).

    `invariant` is None for a replayed path that violates nothing; `violation` then says so.
    `job_file` is the job file the user gave (None for the built-in job), for replaying;
    `design_file` likewise the design file (None for a registered variant); `upgrade` the
    design every restart ran, as `--upgrade-to` names it (a name or a design file), or None.
    """

    variant: str
    job: str
    job_file: str | None
    depth: int
    tracker: str
    invariant: str | None
    invariant_kind: PropertyKind | None
    violated: bool
    violation: str
    code: str
    initial: World
    steps: tuple[Step, ...]
    design_file: str | None = None
    faults: tuple[str, ...] = ()
    fresh_ids: bool = False
    upgrade: str | None = None
    named: bool = False
    """Whether replay must be told the invariant (`--invariant`): it is not the first its path's end violates."""

    @property
    def crashes(self) -> int:
        """How many moves (crash and fault steps) the path takes."""
        return self.steps[-1].crashes if self.steps else 0

    @property
    def end(self) -> World:
        """The last world of the path."""
        return self.steps[-1].state if self.steps else self.initial

    @property
    def choices(self) -> tuple[int, ...]:
        """The action index taken at each step (the path's choices)."""
        return tuple(step.choice for step in self.steps)


def moves_words(cx: Counterexample) -> str:
    """The path's moves in words: "1 crash", or, when faults or retries were on, "0 crashes, 1 fault, 1 retry"."""
    faults = sum(step.kind == "fault" for step in cx.steps)
    retries = sum(step.kind == "retry" for step in cx.steps)
    if not cx.faults and not retries:
        return plural(cx.crashes, "crash")
    words = [plural(cx.crashes - faults - retries, "crash")]
    if cx.faults:
        words.append(plural(faults, "fault"))
    if retries:
        words.append(plural(retries, "retry"))
    return ", ".join(words)


def environment_of(model: Model[Any]) -> tuple[tuple[str, ...], bool]:
    """The fault kinds and whether call IDs are fresh, of a loop model (none for any other model).

    A wrapping model (crashsweep.explorer.tally.Tallied) is looked through to the model it wraps.
    """
    while hasattr(model, "inner"):
        model = model.inner
    env = getattr(model, "env", None)
    return tuple(getattr(env, "faults", ())), bool(getattr(env, "fresh_ids", False))


def violates(prop: Property[Any], model: Model[Any], state: Any) -> bool:
    """Whether `state` violates invariant `prop` (an at_end one only in a finished state)."""
    if prop.kind == "sometimes" or (prop.kind == "at_end" and not model.is_finished(state)):
        return False
    return not prop.check(state)


def explain(prop: Property[Any], state: Any) -> str:
    """The violation of `prop` in `state`, in words."""
    words = prop.explain(state) if prop.explain is not None else ""
    return words or f"{prop.name} does not hold"


def violated(model: Model[Any], state: Any) -> list[Property[Any]]:
    """The invariants `state` violates, in the model's order."""
    return [prop for prop in model.properties if violates(prop, model, state)]


def from_path(
    model: Model[Any],
    path: Path[Any],
    *,
    variant: str,
    job: str,
    job_file: str | None,
    depth: int,
    tracker: str,
    invariant: str | None = None,
    design_file: str | None = None,
    upgrade: str | None = None,
) -> Counterexample:
    """The counterexample along `path`; `invariant` defaults to the first one its end violates."""
    props = {prop.name: prop for prop in model.properties}
    failing = violated(model, path.end)
    first = failing[0].name if failing else None
    named = invariant is not None and invariant != first
    if invariant is None:
        invariant = first
    prop = props[invariant] if invariant is not None else None
    broken = prop is not None and violates(prop, model, path.end)
    if prop is None:
        words = "no invariant is violated at the end of this path"
    elif broken:
        words = explain(prop, path.end)
    else:
        words = f"{prop.name} holds at the end of this path"
    steps: list[Step] = []
    for index, (before, after) in enumerate(zip(path.steps, path.steps[1:], strict=False), start=1):
        action = after.action
        assert action is not None
        _, counters = model.step(before.state, action)
        point = model.crash_point(before.state if action.kind == "crash" else after.state)
        if point is None and action.kind == "fault":
            point = model.crash_point(before.state)  # a fault that stopped the process (a power cut): where
        steps.append(
            Step(
                index=index,
                kind=action.kind,
                action=action.label,
                choice=after.choice,
                point=point,
                before=before.state,
                state=after.state,
                crashes=after.crashes,
                counters=tuple(sorted((k, v) for k, v in counters.items() if v)),
            )
        )
    faults, fresh_ids = environment_of(model)
    return Counterexample(
        variant=variant,
        job=job,
        job_file=job_file,
        depth=depth,
        tracker=tracker,
        invariant=invariant,
        invariant_kind=prop.kind if prop is not None else None,
        violated=broken,
        violation=words,
        code=path.code,
        initial=path.steps[0].state,
        steps=tuple(steps),
        design_file=design_file,
        faults=faults,
        fresh_ids=fresh_ids,
        upgrade=upgrade,
        named=named,
    )


def shortest(
    exploration: Exploration[Any],
    *,
    variant: str,
    job: str,
    job_file: str | None,
    tracker: str,
    design_file: str | None = None,
    upgrade: str | None = None,
) -> list[Counterexample]:
    """The shortest counterexample of every violated invariant, in the model's order."""
    found = []
    for prop in exploration.model.properties:
        verdict = exploration.verdicts[prop.name]
        if prop.kind == "sometimes" or verdict.holds or verdict.node is None:
            continue
        path = shortest_path(exploration, verdict.node)
        found.append(
            from_path(
                exploration.model,
                path,
                variant=variant,
                job=job,
                job_file=job_file,
                depth=exploration.depth,
                tracker=tracker,
                invariant=prop.name,
                design_file=design_file,
                upgrade=upgrade,
            )
        )
    return found


def path_nodes(exploration: Exploration[Any], choices: Sequence[int]) -> list[int]:
    """The graph nodes a path visits, following its choices from the root (edges keyed by choice)."""
    graph = exploration.graph
    nodes = [exploration.root]
    for choice in choices:
        nexts = [v for _, v, key in graph.out_edges(nodes[-1], keys=True) if key == choice]
        if not nexts:
            raise ValueError(f"the path leaves the explored graph at step {len(nodes)}")
        nodes.append(nexts[0])
    return nodes
