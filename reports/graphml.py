"""The explored state graph as GraphML, for networkx, Gephi, yEd and other graph tools.

Every node of the exploration (a world and its crash count) and every edge (one action from
it) is written, parallel edges kept (a multigraph: the edge's `id` is its choice). Only the
attribute types GraphML and networkx's reader know (string, int, boolean) are used.

Node attributes: `label` (the node's number and crash point, what yEd and Gephi show),
`state` (the whole world in one line), `point` (the crash point the process is at, "" when
none), `crashes` (moves so far: crashes and faults), `finished`, `root`, `violates` (the
invariants this state violates, comma-separated, "" for none) and `counterexample` (the
invariants whose shortest counterexample passes here). Edge attributes: `label` and `action`
(the action's label), `kind` (step, crash, restart or fault), `choice` (its index among the
actions enabled, as in path codes), `counters` (what it bumped, "name=n, ..."), and each
counter it bumped as an int attribute of its own name. Graph attributes: the variant, job,
tracker, depth, the graph's size, `projection` (true: a node stands for every world with its
state key, and `state` is the world that first reached it; --no-projection exports one node
per world), and per invariant its verdict and shortest path code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from crashsweep.explorer.search import Exploration
from crashsweep.reports.counterexample import Counterexample, path_nodes, violated
from crashsweep.reports.describe import world_text
from crashsweep.reports.summary import Summary
from crashsweep.spec.world import World

EDGE_FIELDS = ("label", "action", "kind", "choice", "counters")
"""The edge attributes every edge has; a counter of the same name would be renamed counter:NAME."""


def _verdict(holds: bool, witnessed: bool) -> str:
    if not witnessed:
        return "never exercised"
    return "holds" if holds else "violated"


def _graph_attributes(summary: Summary) -> dict[str, Any]:
    """What the graph was explored under, and every invariant's verdict and shortest path."""
    attributes: dict[str, Any] = {
        "variant": summary.variant,
        "job": summary.job,
        "tracker": summary.tracker,
        "depth": summary.depth,
        "states": summary.states,
        "edges": summary.edges,
        "projection": summary.projection,
    }
    if summary.environment:
        attributes["environment"] = summary.environment
    for verdict in summary.invariants:
        attributes[f"verdict:{verdict.name}"] = _verdict(verdict.holds, verdict.witnessed)
        attributes[f"path:{verdict.name}"] = verdict.counterexample or ""
    return attributes


def _state_text(state: Any) -> str:
    return world_text(state) if isinstance(state, World) else repr(state)


def state_graph(
    exploration: Exploration[Any], summary: Summary, counterexamples: Sequence[Counterexample] = ()
) -> nx.MultiDiGraph:
    """The exploration's graph with plain attributes only, ready for GraphML."""
    model = exploration.model
    on_path: dict[int, list[str]] = {}
    for cx in counterexamples:
        for node in path_nodes(exploration, cx.choices):
            on_path.setdefault(node, []).append(cx.invariant or "path")
    graph = nx.MultiDiGraph(**_graph_attributes(summary))
    source = exploration.graph
    for node, data in source.nodes(data=True):
        point = data["point"] or ""
        graph.add_node(
            node,
            label=f"{node}: {point}" if point else str(node),
            state=_state_text(data["state"]),
            point=point,
            crashes=int(data["crashes"]),
            finished=bool(data["finished"]),
            root=node == exploration.root,
            violates=", ".join(prop.name for prop in violated(model, data["state"])),
            counterexample=", ".join(dict.fromkeys(on_path.get(node, []))),
        )
    for tail, head, choice, data in source.edges(keys=True, data=True):
        action, deltas = data["action"], {k: v for k, v in sorted(data["deltas"].items()) if v}
        counters = {(f"counter:{k}" if k in EDGE_FIELDS else k): int(v) for k, v in deltas.items()}
        graph.add_edge(
            tail,
            head,
            key=choice,
            label=action.label,
            action=action.label,
            kind=action.kind,
            choice=int(choice),
            counters=", ".join(f"{k}={v}" for k, v in deltas.items()),
            **counters,
        )
    return graph


def to_graphml(exploration: Exploration[Any], summary: Summary, counterexamples: Sequence[Counterexample] = ()) -> str:
    """The state graph as a GraphML document, with a final newline."""
    return "\n".join(nx.generate_graphml(state_graph(exploration, summary, counterexamples))) + "\n"
