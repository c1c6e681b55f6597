"""A node's twin: the first node with its state (or key), whose edges it may follow unstepped.

Nodes with equal states, or equal keys, at different crash counts (the search's `same`
chains) have the same future: a key is a bisimulation (explorer/model.py), so from twins one
action leads to twin states (equal keys) by equal counter increments. The search expands
nodes in the order it numbers them, so a node's first twin (its head) has been expanded
before it, and each of the node's edges can take its target's key and its counters from the
head's edge with the same action. Where that edge ends at a new node, the node's state must
be the real successor of the twin's own (every path the search hands out is a real
execution): it is made when first read (explorer/unstepped.py), its actions and finished
flag being its head's meanwhile. What is saved is the key and the probe of the index on
every edge of a later twin, and its step: the same nodes, edges and counters as stepping
every edge. A new node that is a later twin is not checked either: the key keeps what
properties read, so it settles nothing its head left open.

A later twin with no moves left (its crash count is the depth) enables the head's actions
less the moves; one with moves left whose head has none enables more than the head's edges
show, and is stepped as usual.
"""

from __future__ import annotations

from collections.abc import Sequence

from crashsweep.explorer.model import MOVES, Action

__all__ = ["twin_edges"]


def twin_edges(
    steps: Sequence[tuple[Action, int, bool]], numbers: Sequence[int], first: int, end: int, table: Sequence[Action]
) -> list[int] | None:
    """For each of a node's `steps`, its head's edge (of `first`..`end`) with the same action; None if none match.

    `numbers` are the edges' action numbers into `table`; the head's edges a step skips must be
    moves (the node has none left), else the two do not match and the node is stepped as usual.
    """
    found: list[int] = []
    edge = first
    for _, number, _ in steps:
        while edge < end and numbers[edge] != number:
            if table[numbers[edge]].kind not in MOVES:
                return None
            edge += 1
        if edge == end:
            return None
        found.append(edge)
        edge += 1
    for rest in range(edge, end):
        if table[numbers[rest]].kind not in MOVES:
            return None
    return found
