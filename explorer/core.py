"""The state graph as plain arrays of node numbers, and the networkx graph built from it on demand.

The search numbers nodes in the order it discovers them and expands them in that same order
(breadth first), so the out-edges of every node are appended in one contiguous run: node n's
edges are `offsets[n]:offsets[n + 1]`, and an edge's position in its run is its choice (the
index of its action among those enabled). Flat arrays of machine integers cost a few bytes a
node or an edge, where a networkx node or edge costs hundreds; the networkx graph that
reports, diagrams and users read is built from them in one pass, the first time it is asked for.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar, overload

from crashsweep.explorer.model import Action

if TYPE_CHECKING:  # networkx is imported where a graph is built: the row needs only the arrays
    import networkx as nx

S = TypeVar("S")
T = TypeVar("T")
NO_DELTAS: Mapping[str, int] = {}
_KEPT_IDS = 4096
"""How many action objects are known by identity (past that, by value: slower, same numbers)."""


class Column(Sequence[T]):
    """A column of values stored as 4-byte numbers into a table of the distinct values.

    An edge's action and counter increments are each one of a few distinct values: the
    column keeps a number per edge (4 bytes) where a list would keep a pointer (8 bytes).
    """

    __slots__ = ("numbers", "table")

    def __init__(self, table: list[T]) -> None:
        self.numbers = array("I")
        self.table = table

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self.table[number] for number in self.numbers[index]]
        return self.table[self.numbers[index]]

    def __len__(self) -> int:
        return len(self.numbers)


class Core(Generic[S]):
    """Nodes (state, crashes, finished) and edges (target, action, counter deltas) as arrays.

    `parent[n]` and `choice[n]` record the edge by which the search first reached node n (the
    root is its own parent); `heads[n]` is the first node with n's state or key, n itself when
    n is the first (explorer/twins.py). Actions and deltas are columns of numbers into tables of the
    distinct values: equal counter increments share one mapping (number 0: no increments).
    """

    __slots__ = (
        "_action_numbers",
        "_action_values",
        "_delta_numbers",
        "actions",
        "choice",
        "crashes",
        "deltas",
        "finished",
        "heads",
        "offsets",
        "parent",
        "states",
        "targets",
    )

    def __init__(self) -> None:
        self.states: list[S] = []
        # Four-byte machine integers: up to 4,294,967,295 nodes and edges, far past any state limit.
        self.crashes = array("I")
        self.finished = bytearray()
        self.parent = array("I")
        self.choice = array("I")
        self.heads = array("I")
        self.offsets = array("I", [0])
        self.targets = array("I")
        self.actions: Column[Action] = Column([])
        self.deltas: Column[Mapping[str, int]] = Column([NO_DELTAS])
        # id(action) -> (action, number): the entry keeps the action alive, so its id stays its own
        self._action_numbers: dict[int, tuple[Action, int]] = {}
        self._action_values: dict[Action, int] = {}
        self._delta_numbers: dict[tuple[tuple[str, int], ...], int] = {}

    def add_node(self, state: S, crashes: int, finished: bool, parent: int, choice: int, head: int = -1) -> int:
        """Append a node (its own head unless `head` says which node is); return its number."""
        node = len(self.states)
        self.states.append(state)
        self.crashes.append(crashes)
        self.finished.append(finished)
        self.parent.append(parent)
        self.choice.append(choice)
        self.heads.append(node if head < 0 else head)
        return node

    def add_edge(self, target: int, action: Action, deltas: Mapping[str, int]) -> None:
        """Append an out-edge of the node being expanded (call `close` after its last edge)."""
        self.targets.append(target)
        self.actions.numbers.append(self.action_number(action))
        self.deltas.numbers.append(self.delta_number(deltas) if deltas else 0)

    def close(self) -> None:
        """End the out-edges of the node being expanded; the next node's edges start here."""
        self.offsets.append(len(self.targets))

    def action_number(self, action: Action) -> int:
        """The number of `action` in the table of actions (added on first sight of the object)."""
        known = self._action_numbers.get(id(action))
        if known is not None and known[0] is action:
            return known[1]
        number = self._action_values.get(action)
        if number is None:
            number = self._action_values[action] = len(self.actions.table)
            self.actions.table.append(action)
        if len(self._action_numbers) < _KEPT_IDS:  # a model that makes a new action object per step
            self._action_numbers[id(action)] = (action, number)
        return number

    def delta_number(self, deltas: Mapping[str, int]) -> int:
        """The number of one shared copy of this set of counter increments (0: none)."""
        if not deltas:
            return 0
        key = tuple(deltas.items())
        number = self._delta_numbers.get(key)
        if number is None:
            number = self._delta_numbers[key] = len(self.deltas.table)
            self.deltas.table.append(dict(deltas))
        return number

    @property
    def nodes(self) -> int:
        """How many nodes there are."""
        return len(self.states)

    @property
    def edges(self) -> int:
        """How many edges there are."""
        return len(self.targets)

    def out_edges(self, node: int) -> range:
        """The edge numbers leaving `node` (empty for a node not expanded)."""
        if node + 1 >= len(self.offsets):
            return range(0)
        return range(self.offsets[node], self.offsets[node + 1])

    def edge(self, node: int, choice: int) -> int:
        """The edge number of `node`'s out-edge with this choice; IndexError if there is none."""
        edges = self.out_edges(node)
        if not 0 <= choice < len(edges):
            raise IndexError(f"node {node} has no edge {choice}")
        return edges[choice]

    def graph(self, point: Callable[[S], str | None], hidden: Collection[str] = ()) -> nx.MultiDiGraph:
        """The networkx graph: node attributes state, crashes, finished, point; edges keyed by choice.

        An edge's attributes are its action and its deltas; the increments of the `hidden`
        counters (those a `Summed` measure sums, explorer/model.py) are kept apart, as `summed`
        (only where the edge has some), so that no reader takes them for the model's counters.
        """
        import networkx as nx  # here: a command that needs only the row never pays its import

        graph = nx.MultiDiGraph()
        graph.add_nodes_from(
            (node, {"state": state, "crashes": crashes, "finished": done == 1, "point": point(state)})
            for node, (state, crashes, done) in enumerate(zip(self.states, self.crashes, self.finished, strict=True))
        )
        graph.add_edges_from(self._edge_tuples(frozenset(hidden)))
        return graph

    def _edge_tuples(self, hidden: frozenset[str]) -> Iterator[tuple[int, int, int, dict[str, object]]]:
        offsets, targets = self.offsets, self.targets
        actions, action_table = self.actions.numbers, self.actions.table
        deltas, delta_table = self.deltas.numbers, self.deltas.table
        for node in range(len(offsets) - 1):
            start = offsets[node]
            for edge in range(start, offsets[node + 1]):
                delta = delta_table[deltas[edge]]
                data: dict[str, object] = {"action": action_table[actions[edge]]}
                if hidden and not hidden.isdisjoint(delta):
                    data["deltas"] = {name: value for name, value in delta.items() if name not in hidden}
                    data["summed"] = {name: value for name, value in delta.items() if name in hidden}
                else:
                    data["deltas"] = dict(delta)
                yield node, targets[edge], edge - start, data


class Parents(Mapping[int, tuple[int, int]]):
    """node -> (parent, choice): the edge by which BFS first reached each node but the root."""

    __slots__ = ("_core", "_root")

    def __init__(self, core: Core[S], root: int) -> None:
        self._core: Core[object] = core  # type: ignore[assignment]
        self._root = root

    def __getitem__(self, node: int) -> tuple[int, int]:
        if node == self._root or not 0 <= node < self._core.nodes:
            raise KeyError(node)
        return self._core.parent[node], self._core.choice[node]

    def __iter__(self) -> Iterator[int]:
        return (node for node in range(self._core.nodes) if node != self._root)

    def __len__(self) -> int:
        return max(0, self._core.nodes - 1)
