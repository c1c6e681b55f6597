"""Breadth-first search of a model's state graph, with property checks and path counts.

A node is a pair (state, moves so far), a move being a crash or a fault, the adversary's
actions, bounded together by the depth ("crashes" in the code counts moves): pairing the
state with the path's moves keeps the graph stratified even when the model's state does not
record them, which is what lets `counting` sum scenarios per number of moves. Crash and
fault actions are enabled only while moves < depth. Equal pairs are one node, so histories
that reach the same place merge.
BFS discovers every node by a shortest path; the first violating node of each property is
therefore the end of a shortest counterexample.

With a model's state key (`explorer/model.py`) a node is a pair (key, moves): states whose
futures the model says are alike are one node, which stores the state that first reached it
and is expanded from that state alone. Each node's state is its BFS parent's state stepped
by the tree edge, so every path the search hands out (counterexamples, witnesses) is a real
execution of the model; a key that merges only states with the same future gives the same
scenarios, counters, measures and verdicts as the full graph, on fewer nodes. A node whose
state (or key) an earlier node has, at another crash count, follows that node's edges
without keying its successors again (explorer/twins.py), and a new node such an edge
reaches keeps no state until one is read (explorer/unstepped.py): the same graph, for less
work.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from crashsweep.explorer import collector
from crashsweep.explorer.core import Core, Parents
from crashsweep.explorer.counting import Arrays, Counts, CycleFound, count_arrays, cycle_error
from crashsweep.explorer.model import (
    MOVES,
    Action,
    Model,
    ModelDefinitionError,
    Property,
    PropertyKind,
    StateKey,
    state_key,
    summed_counters,
    validate_model,
)
from crashsweep.explorer.twins import twin_edges
from crashsweep.explorer.unstepped import UNSTEPPED, StandIns, made, made_all

if TYPE_CHECKING:  # networkx is imported where a graph is built: the row needs only the arrays
    import networkx as nx

S = TypeVar("S", bound=Hashable)
ROOT = 0
STUCK = 2
"""`Core.finished` of a stuck node: an end of its paths (they are counted as scenarios), never finished."""
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
    """The result of a search: the verdicts, the counts, the BFS tree, and the graph on demand.

    The search keeps the graph as arrays (`core`); `graph`, the networkx MultiDiGraph with node
    attributes state, crashes, finished and point and edges keyed by choice with attributes
    action and deltas, is built from them in one pass the first time it is read. `projected`
    says whether nodes stood for a state key (the model's) rather than a state.
    """

    model: Model[S]
    depth: int
    core: Core[S] = field(repr=False)
    root: int
    verdicts: dict[str, Verdict]
    counts: Counts
    parents: Mapping[int, tuple[int, int]] = field(repr=False)
    projected: bool = False

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        """The state graph as networkx (built once, on first use: every node's state made first)."""
        made_all(self.core, self.model.step)
        return self.core.graph(self.model.crash_point, summed_counters(self.model.measures))

    @property
    def states(self) -> int:
        """How many distinct nodes (state, crashes) the search found."""
        return self.core.nodes

    @property
    def edges(self) -> int:
        """How many edges the search stored, one per enabled action of a node (not all stepped: twins.py)."""
        return self.core.edges

    def state(self, node: int) -> S:
        """The model state of `node` (made on first read when the search left it unstepped: explorer/unstepped.py)."""
        state: S = made(self.core, node, self.model.step)
        return state

    def crashes(self, node: int) -> int:
        """The crashes on the paths that reach `node`."""
        return self.core.crashes[node]

    def finished(self, node: int) -> bool:
        """Whether `node`'s state is finished (a stuck node ends its scenarios but is not finished)."""
        return self.core.finished[node] == 1

    def stuck(self, node: int) -> bool:
        """Whether `node`'s state is stuck: not finished, and no action leaves it."""
        return self.core.finished[node] == STUCK

    def point(self, node: int) -> str | None:
        """The crash point `node`'s state is at, or None."""
        return self.model.crash_point(self.state(node))

    def step(self, node: int, choice: int) -> tuple[Action, int]:
        """The action of `node`'s out-edge `choice`, and the node it leads to (IndexError if none)."""
        edge = self.core.edge(node, choice)
        return self.core.actions[edge], self.core.targets[edge]

    @property
    def holds(self) -> bool:
        """Whether every property holds (invariants kept, witnesses seen)."""
        return all(verdict.holds for verdict in self.verdicts.values())


def enabled(model: Model[S], state: S, crashes: int, depth: int) -> list[Action]:
    """The actions the explorer takes from `state`: crashes only while crashes < depth."""
    return [a for a in model.actions(state) if a.kind not in MOVES or crashes < depth]


def explore(
    model: Model[S],
    depth: int,
    *,
    max_states: int | None = None,
    progress: Progress | None = None,
    progress_every: int = 20_000,
    projection: bool = True,
) -> Exploration[S]:
    """Explore every path with at most `depth` crashes; check properties; count scenarios.

    `projection` uses the model's state key, if it has one (`projection=False`: one node per
    state, the full graph).
    """
    if depth < 0:
        raise ValueError(f"depth must be at least 0, got {depth}")
    validate_model(model)
    properties = list(model.properties)
    key = state_key(model) if projection else None
    search = _Search(model, depth, properties, max_states, progress, progress_every, key)
    # The search and its counting make millions of objects that live as long as the result
    # and form no cycles: the cyclic collector is paused meanwhile, and kept off them after
    # (explorer/collector.py says why and what it costs otherwise).
    with collector.paused() as collecting:
        try:
            search.run()
        except KeyboardInterrupt:
            core = search.core
            raise ExplorationInterrupted(core.nodes, core.edges, max(core.crashes)) from None
        first, core, projected = search.first, search.core, key is not None
        del search, key  # its index of states (and the key's tables) are not needed to count: free them first
        verdicts = {
            prop.name: Verdict(
                prop.name, prop.kind, (prop.name in first) == (prop.kind == "sometimes"), first.get(prop.name)
            )
            for prop in properties
        }
        arrays = Arrays(StandIns(core), core.crashes, core.finished, core.offsets, core.targets, core.deltas)
        try:
            counts = count_arrays(arrays, ROOT, model.measures)
        except CycleFound:
            made_all(core, model.step)
            raise cycle_error(core.graph(model.crash_point)) from None
        parents = Parents(core, ROOT)
        exploration = Exploration(model, depth, core, ROOT, verdicts, counts, parents, projected)
        collector.keep_out(exploration, collecting)
    return exploration


class _Search(Generic[S]):
    """One breadth-first search: nodes are numbered as found and expanded in that order."""

    def __init__(
        self,
        model: Model[S],
        depth: int,
        properties: list[Property[S]],
        max_states: int | None,
        progress: Progress | None,
        progress_every: int,
        key: StateKey[S] | None = None,
    ) -> None:
        self.model, self.depth, self.core, self.key = model, depth, Core[S](), key
        self.max_states, self.progress, self.progress_every = max_states, progress, progress_every
        # (name, check, sometimes) of each property with no first violation (or sighting) yet:
        # those checked in every state, and those checked in finished states only.
        self.every: list[_Check[S]] = [
            (p.name, p.check, p.kind == "sometimes") for p in properties if p.kind in ("always", "sometimes")
        ]
        # With a live property, a state that is not finished and enables no action is stuck:
        # its paths end there (scenarios that never finish); without one it is a model error.
        # The first stuck node found ends a shortest counterexample of every live property.
        self.live = [p.name for p in properties if p.kind == "live"]
        self.ending: list[_Check[S]] = [(p.name, p.check, False) for p in properties if p.kind == "at_end"]
        self.first: dict[str, int] = {}  # property name -> first violating (or witnessing) node
        # state (or its key) -> its first node; `same[n]` is the next node with n's state (0:
        # none, the root being no state's later node). Without a key, a state reached with
        # several crash counts is stored once: its nodes share the one object, and the index
        # holds it once. With one, each node keeps the state that reached it (a real execution).
        self.index: dict[Hashable, int] = {}
        self.same = array("I")
        self.most_crashes = 0
        self.add(model.initial(), 0, ROOT, 0)

    def add(self, state: S, crashes: int, parent: int, choice: int) -> int:
        """Number a new node, note its properties, and return its number."""
        finished = self.model.is_finished(state)
        node = self.core.add_node(state, crashes, finished, parent, choice)
        self.index[state if self.key is None else self.key(state)] = node
        self.same.append(0)
        self._check(state, node, finished)
        return node

    def _check(self, state: S, node: int, finished: bool) -> None:
        """Note the properties `state` settles: an invariant's first violation, a witness's first sighting."""
        settled = False
        for name, check, sometimes in (*self.every, *self.ending) if finished else self.every:
            if check(state) == sometimes:
                self.first[name] = node
                settled = True
        if settled:
            self.every = [entry for entry in self.every if entry[0] not in self.first]
            self.ending = [entry for entry in self.ending if entry[0] not in self.first]

    def run(self) -> None:
        """Expand nodes in the order they were found until none is left (the hot loop: kept flat)."""
        model, core, depth, index, same = self.model, self.core, self.depth, self.index, self.same
        states, all_crashes, finished = core.states, core.crashes, core.finished
        step, is_finished, actions_of = model.step, model.is_finished, model.actions
        action_number, delta_number = core.action_number, core.delta_number
        limit = sys.maxsize if self.max_states is None else self.max_states
        progress, every = self.progress, self.progress_every
        targets, offsets = core.targets, core.offsets
        add_target, add_action, add_deltas = targets.append, core.actions.numbers.append, core.deltas.numbers.append
        add_state, add_crashes, add_finished = states.append, all_crashes.append, finished.append
        add_parent, add_choice = core.parent.append, core.choice.append  # Core.add_node, inlined
        add_offset = core.offsets.append  # Core.close, inlined
        add_same, probe, key = same.append, index.setdefault, self.key
        # `heads[n]`: the first node with n's state (or key), whose edges n's edges follow
        # (explorer/twins.py): n's own when n is the first.
        heads, add_head = core.heads, core.heads.append
        numbers, delta_numbers, table = core.actions.numbers, core.deltas.numbers, core.actions.table
        # What a node does with the sequence of actions the model returned, kept per sequence
        # (models mostly return a few shared ones): each enabled action with its number in the
        # table of actions and whether it is a move; a node with no moves left drops the moves.
        plans: tuple[dict[int, _Plan], dict[int, _Plan]] = ({}, {})
        node = 0
        while node < len(states):
            state, crashes, head = states[node], all_crashes[node], heads[node]
            # A node left unstepped (explorer/unstepped.py) enables its head's actions: the same key.
            actions = actions_of(state if state is not UNSTEPPED else states[head])
            spent = crashes >= depth
            known = plans[spent].get(id(actions))
            if known is None or known[0] is not actions:
                known = (actions, _steps(actions, spent, action_number))
                if len(plans[spent]) < _KEPT_FILTERS:  # the entry keeps `actions` alive: its id stays its own
                    plans[spent][id(actions)] = known
            steps = known[1]
            twins = None if head == node else twin_edges(steps, numbers, offsets[head], offsets[head + 1], table)
            if state is UNSTEPPED and twins is None and steps:  # its edges do not follow its head's: stepped
                state = made(core, node, step)
                steps = _steps(actions_of(state), spent, action_number)
            if finished[node]:
                if steps:
                    raise ModelDefinitionError(
                        f"finished state {made(core, node, step)!r} enables {steps[0][0]!r}: "
                        "a finished state ends its scenario"
                    )
            elif not steps:
                if not self.live:
                    raise ModelDefinitionError(
                        f"state {made(core, node, step)!r} is neither finished nor has an enabled action"
                    )
                finished[node] = STUCK
                for name in self.live:
                    self.first.setdefault(name, node)
            for choice, (action, number, move) in enumerate(steps):
                after_crashes = crashes + 1 if move else crashes
                fresh = len(states)
                if twins is None:
                    after, deltas = step(state, action)
                    target = probe(after if key is None else key(after), fresh)  # one probe: hashed once
                    deltas_number = delta_number(deltas) if deltas else 0
                else:  # the twin's edge: its target's first node, and its counters (explorer/twins.py)
                    twin = twins[choice]
                    after, target, deltas_number = None, heads[targets[twin]], delta_numbers[twin]
                first = target
                if target != fresh:
                    # A state seen before: its node with these crashes, or the end of its chain.
                    while all_crashes[target] != after_crashes:
                        later = same[target]
                        if not later:
                            same[target] = fresh
                            if key is None:
                                after = states[target]  # the one stored object of this state
                            target = fresh
                            break
                        target = later
                if target == fresh:
                    if target >= limit:
                        raise StateLimitExceeded(limit, target, core.edges, self.most_crashes)
                    if after is None:
                        # A new node by a twin's edge: its state is this node's own step, made when
                        # first read; its key is `first`'s, so is whether it is finished.
                        after, done = _LEFT_UNSTEPPED, finished[first] == 1
                    else:
                        done = is_finished(after)
                    add_state(after)
                    add_crashes(after_crashes)
                    add_finished(done)
                    add_parent(node)
                    add_choice(choice)
                    add_same(0)
                    add_head(first)
                    # A later twin (first < target) settles nothing its head left open: the key keeps
                    # what properties read, so its checks answer as its head's did (explorer/twins.py).
                    if first == target and (self.every or (done and self.ending)):
                        self._check(after, target, done)
                    if after_crashes > self.most_crashes:
                        self.most_crashes = after_crashes
                    if progress is not None and (target + 1) % every == 0:
                        progress(target + 1, target - node, self.most_crashes)
                add_target(target)
                add_action(number)
                add_deltas(deltas_number)
            add_offset(len(targets))
            node += 1


_LEFT_UNSTEPPED: Any = UNSTEPPED
"""`UNSTEPPED` where the search keeps a state (core.states holds it in a node's place)."""
_KEPT_FILTERS = 256
"""How many of the model's action sequences keep their plan (a bound, never a change of result)."""
_Check = tuple[str, Callable[[S], bool], bool]
"""A property's name, its check, and whether it is a witness (settled when the check holds)."""
_Plan = tuple[Sequence[Action], tuple[tuple[Action, int, bool], ...]]
"""The model's sequence of actions (kept alive, so its id stays its own) and the steps it enables."""


def _steps(
    actions: Sequence[Action], spent: bool, number: Callable[[Action], int]
) -> tuple[tuple[Action, int, bool], ...]:
    """(action, its number, whether it is a move) for each action enabled; no moves when `spent`."""
    return tuple((a, number(a), a.kind in MOVES) for a in actions if not (spent and a.kind in MOVES))
