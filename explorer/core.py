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
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

import networkx as nx

from crashsweep.explorer.model import Action

S = TypeVar("S")
NO_DELTAS: Mapping[str, int] = {}


class Core(Generic[S]):
    """Nodes (state, crashes, finished) and edges (target, action, counter deltas) as arrays.

    `parent[n]` and `choice[n]` record the edge by which the search first reached node n (the
    root is its own parent). Deltas are interned: equal counter increments share one mapping.
    """

    __slots__ = (
        "_interned",
        "actions",
        "choice",
        "crashes",
        "deltas",
        "finished",
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
        self.offsets = array("I", [0])
        self.targets = array("I")
        self.actions: list[Action] = []
        self.deltas: list[Mapping[str, int]] = []
        self._interned: dict[tuple[tuple[str, int], ...], Mapping[str, int]] = {}

    def add_node(self, state: S, crashes: int, finished: bool, parent: int, choice: int) -> int:
        """Append a node; return its number."""
        node = len(self.states)
        self.states.append(state)
        self.crashes.append(crashes)
        self.finished.append(finished)
        self.parent.append(parent)
        self.choice.append(choice)
        return node

    def add_edge(self, target: int, action: Action, deltas: Mapping[str, int]) -> None:
        """Append an out-edge of the node being expanded (call `close` after its last edge)."""
        self.targets.append(target)
        self.actions.append(action)
        self.deltas.append(self.intern(deltas) if deltas else NO_DELTAS)

    def close(self) -> None:
        """End the out-edges of the node being expanded; the next node's edges start here."""
        self.offsets.append(len(self.targets))

    def intern(self, deltas: Mapping[str, int]) -> Mapping[str, int]:
        """One shared copy of each distinct set of counter increments."""
        key = tuple(deltas.items())
        shared = self._interned.get(key)
        if shared is None:
            shared = self._interned[key] = dict(deltas)
        return shared

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

    def graph(self, point: Callable[[S], str | None]) -> nx.MultiDiGraph:
        """The networkx graph: node attributes state, crashes, finished, point; edges keyed by choice."""
        graph = nx.MultiDiGraph()
        graph.add_nodes_from(
            (node, {"state": state, "crashes": crashes, "finished": bool(done), "point": point(state)})
            for node, (state, crashes, done) in enumerate(zip(self.states, self.crashes, self.finished, strict=True))
        )
        graph.add_edges_from(self._edge_tuples())
        return graph

    def _edge_tuples(self) -> Iterator[tuple[int, int, int, dict[str, object]]]:
        offsets, targets, actions, deltas = self.offsets, self.targets, self.actions, self.deltas
        for node in range(len(offsets) - 1):
            start = offsets[node]
            for edge in range(start, offsets[node + 1]):
                yield node, targets[edge], edge - start, {"action": actions[edge], "deltas": dict(deltas[edge])}


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
