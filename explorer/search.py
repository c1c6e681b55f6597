"""Breadth-first search of a model's state graph, with property checks and path counts.

A node is a pair (state, crashes so far): pairing the state with the path's crash count keeps
the graph stratified by crashes even when the model's state does not record them, which is
what lets `counting` sum scenarios per crash count. Crash actions are enabled only while
crashes < depth. Equal pairs are one node, so histories that reach the same place merge.
BFS discovers every node by a shortest path; the first violating node of each property is
therefore the end of a shortest counterexample.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

import networkx as nx

from explorer.counting import Counts, count_paths
from explorer.model import Action, Model, ModelDefinitionError, PropertyKind, validate_model

S = TypeVar("S", bound=Hashable)
Progress = Callable[[int, int, int], None]
"""Called now and then with (states, frontier size, most crashes on a path so far)."""


class StateLimitExceeded(RuntimeError):
    """The search met its state limit; the figures say how far it got."""

    def __init__(self, limit: int, states: int, edges: int, crashes: int) -> None:
        super().__init__(
            f"state limit reached: {states} states, {edges} edges explored, paths with up to "
            f"{crashes} crashes seen (limit {limit}; raise it with --max-states or lower --depth)"
        )
        self.limit, self.states, self.edges, self.crashes = limit, states, edges, crashes


class ExplorationInterrupted(KeyboardInterrupt):
    """Ctrl-C during a search; the figures say how far it got."""

    def __init__(self, states: int, edges: int, crashes: int) -> None:
        super().__init__(
            f"interrupted after {states} states and {edges} edges, paths with up to {crashes} crashes seen"
        )
        self.states, self.edges, self.crashes = states, edges, crashes


@dataclass(frozen=True, slots=True)
class Verdict:
    """A property's outcome: whether it holds, and the node that shows it (violation or witness)."""

    name: str
    kind: PropertyKind
    holds: bool
    node: int | None


@dataclass(frozen=True)
class Exploration(Generic[S]):
    """The result of a search: the graph, the verdicts, the counts, and the BFS tree."""

    model: Model[S]
    depth: int
    graph: nx.MultiDiGraph
    root: int
    verdicts: dict[str, Verdict]
    counts: Counts
    parents: dict[int, tuple[int, int]]

    def state(self, node: int) -> S:
        """The model state of `node`."""
        state: S = self.graph.nodes[node]["state"]
        return state

    @property
    def holds(self) -> bool:
        """Whether every property holds (invariants kept, witnesses seen)."""
        return all(verdict.holds for verdict in self.verdicts.values())


def enabled(model: Model[S], state: S, crashes: int, depth: int) -> list[Action]:
    """The actions the explorer takes from `state`: crashes only while crashes < depth."""
    return [a for a in model.actions(state) if a.kind != "crash" or crashes < depth]


def explore(
    model: Model[S],
    depth: int,
    *,
    max_states: int | None = None,
    progress: Progress | None = None,
    progress_every: int = 20_000,
) -> Exploration[S]:
    """Explore every path with at most `depth` crashes; check properties; count scenarios."""
    if depth < 0:
        raise ValueError(f"depth must be at least 0, got {depth}")
    validate_model(model)
    properties = list(model.properties)
    graph = nx.MultiDiGraph()
    index: dict[tuple[S, int], int] = {}
    parents: dict[int, tuple[int, int]] = {}
    first: dict[str, int] = {}  # property name -> first violating (or witnessing) node

    def add(state: S, crashes: int) -> int:
        node = len(index)
        index[(state, crashes)] = node
        finished = model.is_finished(state)
        graph.add_node(node, state=state, crashes=crashes, finished=finished, point=model.crash_point(state))
        for prop in properties:
            if prop.name in first or (prop.kind == "at_end" and not finished):
                continue
            # Invariants record their first violation; witnesses their first sighting.
            if prop.check(state) == (prop.kind == "sometimes"):
                first[prop.name] = node
        return node

    root = add(model.initial(), 0)
    queue = deque([root])
    try:
        _search(model, depth, graph, index, parents, queue, add, max_states, progress, progress_every)
    except KeyboardInterrupt:
        raise ExplorationInterrupted(len(index), graph.number_of_edges(), max(c for _, c in index)) from None
    verdicts = {
        prop.name: Verdict(
            prop.name, prop.kind, (prop.name in first) == (prop.kind == "sometimes"), first.get(prop.name)
        )
        for prop in properties
    }
    counts = count_paths(graph, root, model.measures)
    return Exploration(model, depth, graph, root, verdicts, counts, parents)


def _search(
    model: Model[S],
    depth: int,
    graph: nx.MultiDiGraph,
    index: dict[tuple[S, int], int],
    parents: dict[int, tuple[int, int]],
    queue: deque[int],
    add: Callable[[S, int], int],
    max_states: int | None,
    progress: Progress | None,
    progress_every: int,
) -> None:
    """The BFS loop proper: expand nodes until the queue is empty."""
    edges = 0
    most_crashes = 0
    while queue:
        node = queue.popleft()
        state, crashes = graph.nodes[node]["state"], graph.nodes[node]["crashes"]
        actions = enabled(model, state, crashes, depth)
        if graph.nodes[node]["finished"]:
            if actions:
                raise ModelDefinitionError(
                    f"finished state {state!r} enables {actions[0]!r}: a finished state ends its scenario"
                )
            continue
        if not actions:
            raise ModelDefinitionError(f"state {state!r} is neither finished nor has an enabled action")
        for choice, action in enumerate(actions):
            after, deltas = model.step(state, action)
            after_crashes = crashes + (action.kind == "crash")
            target = index.get((after, after_crashes))
            if target is None:
                if max_states is not None and len(index) >= max_states:
                    raise StateLimitExceeded(max_states, len(index), edges, most_crashes)
                target = add(after, after_crashes)
                parents[target] = (node, choice)
                queue.append(target)
                most_crashes = max(most_crashes, after_crashes)
                if progress is not None and len(index) % progress_every == 0:
                    progress(len(index), len(queue), most_crashes)
            graph.add_edge(node, target, key=choice, action=action, deltas=dict(deltas))
            edges += 1
