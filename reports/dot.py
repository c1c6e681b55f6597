"""The state graph as DOT, with a counterexample's path highlighted.

Crash edges are dashed and red, restart edges bold and blue, the initial state is filled,
states that violate an invariant are pink octagons, and the path is drawn thick; a legend
explains this, and states are ranked by their distance from the initial state (a ruler on
the left). A small graph is drawn whole. A large one is cut to the path and the states one
step from it; a grey box stands for the states reachable beyond each cut, and the title says
how many states and edges were left out. Output is byte-identical across runs: nodes and
edges are emitted in graph order and named by their BFS index.

Labels that come from job files (call IDs in crash-point names) are escaped for DOT:
backslashes are doubled, quotes escaped, and no label can turn into an HTML-like label.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import graphviz

from crashsweep.explorer.search import Exploration
from crashsweep.reports.counterexample import Counterexample, explain, moves_words, path_nodes, violated
from crashsweep.reports.describe import plural

if TYPE_CHECKING:  # networkx is imported where a graph is walked or built, not at start
    import networkx as nx

FULL_LIMIT = 60
"""Graphs with at most this many states are drawn whole."""

FONT = "Helvetica"
_STEP, _CRASH, _RESTART = "#333333", "#d62728", "#1f77b4"
_FADED = {_STEP: "#b0b0b0", _CRASH: "#f0a8a8", _RESTART: "#a8c8e8"}
_PATH = "#1f3b73"


def text(value: str) -> str:
    """One line of label text, escaped for a DOT string (backslashes, newlines)."""
    return value.replace("\\", "\\\\").replace("\r", "").replace("\n", "\\n")


def label(*lines: str) -> str:
    """A DOT label of several lines of literal text (never read as HTML)."""
    quoted: str = graphviz.nohtml("\\n".join(text(line) for line in lines))
    return quoted


def _status(exploration: Exploration[Any], node: int) -> str:
    data = exploration.graph.nodes[node]
    if data["point"] is not None:
        return str(data["point"])
    if data["finished"]:
        return "finished"
    return "initial: nothing yet" if node == exploration.root else "down (crashed)"


def neighbourhood(exploration: Exploration[Any], path: list[int], radius: int = 1) -> list[int]:
    """The states to draw: all of a small graph, else the path and those `radius` steps from it."""
    graph = exploration.graph
    if graph.number_of_nodes() <= FULL_LIMIT:
        return sorted(graph.nodes)
    shown = set(path)
    frontier = sorted(shown)
    for _ in range(radius):
        frontier = sorted({v for u in frontier for v in graph.successors(u)} - shown)
        shown.update(frontier)
    return sorted(shown)


LEGEND = (
    '<<table border="0" cellborder="0" cellspacing="2" cellpadding="3">'
    '<tr><td colspan="2"><b>legend</b></td></tr>'
    '<tr><td border="1" style="rounded" bgcolor="#cfe0ff">initial state</td><td align="left">filled</td></tr>'
    f'<tr><td border="1" color="{_PATH}">state on the path</td><td align="left">thick outline</td></tr>'
    '<tr><td border="1" bgcolor="#ffd0d0">violating state</td><td align="left">pink octagon</td></tr>'
    '<tr><td border="1" color="#9a9a9a"><font color="#555555">other state</font></td><td align="left">grey</td></tr>'
    '<tr><td border="1" color="#bbbbbb"><font color="#777777">... n more states</font></td>'
    '<td align="left">not drawn</td></tr>'
    f'<tr><td><font color="{_STEP}">&#8212;&#8212;&#9654;</font></td><td align="left">step</td></tr>'
    f'<tr><td><font color="{_CRASH}">- - - &#9654;</font></td><td align="left">crash (dashed)</td></tr>'
    f'<tr><td><font color="{_RESTART}"><b>&#9473;&#9473;&#9655;</b></font></td>'
    '<td align="left">restart (bold)</td></tr>'
    f'<tr><td><font color="{_PATH}"><b>&#9473;&#9473;&#9654;</b></font></td>'
    '<td align="left">the path (thick)</td></tr>'
    "</table>>"
)
"""The legend: a fixed HTML-like label (no user text in it)."""


def state_graph(exploration: Exploration[Any], cx: Counterexample, *, radius: int = 1) -> str:
    """The DOT source of the state graph around `cx`'s path (all of it when small)."""
    graph = exploration.graph
    model = exploration.model
    path = path_nodes(exploration, cx.choices)
    on_path = {node: index for index, node in enumerate(path)}
    path_edges = {(path[i], path[i + 1], cx.choices[i]) for i in range(len(cx.choices))}
    shown = neighbourhood(exploration, path, radius)
    visible = set(shown)
    import networkx as nx

    depth = nx.single_source_shortest_path_length(graph, exploration.root)
    edges = sorted((u, v, k) for u in shown for _, v, k in graph.out_edges(u, keys=True) if v in visible)
    hidden_states = graph.number_of_nodes() - len(shown)
    hidden_edges = graph.number_of_edges() - len(edges)
    head = f"{cx.variant}: shortest counterexample to {cx.invariant}" if cx.invariant else f"{cx.variant}: path"
    lines = [head, cx.violation, f"path {cx.code}: {plural(len(cx.steps), 'step')}, {moves_words(cx)}"]
    if hidden_states:
        lines.append(
            f"showing {len(shown)} of {graph.number_of_nodes()} states and {len(edges)} of "
            f"{graph.number_of_edges()} edges: the path and every state {plural(radius, 'step')} from it; "
            f"{hidden_states} states and {hidden_edges} edges left out"
        )
    else:
        lines.append(f"the whole graph: {len(shown)} states, {len(edges)} edges")
    if exploration.projected:  # a node stands for every world with its state key (spec/key.py)
        lines[-1] += "; states merged by state key (--no-projection: one per world)"
    g = graphviz.Digraph("states")
    g.attr(label=label(*lines), labelloc="t", fontname=FONT, fontsize="13", rankdir="TB", nodesep="0.3", ranksep="0.4")
    g.attr("node", shape="box", style="rounded", fontname=FONT, fontsize="10")
    g.attr("edge", fontname=FONT, fontsize="9")
    levels = sorted({depth[node] for node in shown})
    for level in levels:
        g.node(f"depth{level}", label(f"depth {level}"), shape="plaintext", fontcolor="#888888")
    g.node("legend", LEGEND, shape="plaintext", fontsize="9")
    for a, b in itertools.pairwise(levels):
        g.edge(f"depth{a}", f"depth{b}", style="invis")
    for level in levels:
        with g.subgraph() as rank:
            rank.attr(rank="same")
            rank.node(f"depth{level}")
            if level == levels[0]:
                rank.node("legend")
            for node in shown:
                if depth[node] == level:
                    rank.node(f"s{node}")
    for node in shown:
        data = graph.nodes[node]
        state = data["state"]
        words = [_status(exploration, node)]
        if node in on_path:
            words.insert(0, f"step {on_path[node]}")
        if data["crashes"]:  # moves (crashes and faults) when faults are on, as the explorer counts them
            words.append(f"after {plural(data['crashes'], 'move' if cx.faults else 'crash')}")
        attrs: dict[str, str] = {}
        broken = violated(model, state)
        if broken:
            words.append(explain(broken[0], state))
            attrs.update(shape="octagon", style="filled", fillcolor="#ffd0d0")
        if node == exploration.root:
            attrs.update(style="filled,rounded", fillcolor="#cfe0ff")
        if node in on_path:
            attrs.update(color=_PATH, penwidth="2.5")
        else:
            attrs.update(color="#9a9a9a", fontcolor="#555555")
        g.node(f"s{node}", label(*words), **attrs)
    for u, v, k in edges:
        action = graph.edges[u, v, k]["action"]
        colour = {"crash": _CRASH, "fault": _CRASH, "retry": _CRASH, "restart": _RESTART}.get(action.kind, _STEP)
        attrs = {"color": colour if (u, v, k) in path_edges else _FADED[colour]}
        if action.kind in ("crash", "fault", "retry"):
            attrs["style"] = "dashed"
        elif action.kind == "restart":
            attrs.update(style="bold", arrowhead="onormal")
        if (u, v, k) in path_edges:
            attrs.update(penwidth="3", weight="20")
        name = (
            action.kind if action.kind in ("crash", "restart") else ("" if action.label == "continue" else action.label)
        )
        g.edge(f"s{u}", f"s{v}", label=label(name) if name else None, **attrs)
    for node in shown:
        if node in on_path:
            continue
        beyond = _descendants(graph, node) - visible
        if beyond:
            g.node(
                f"more{node}",
                label(f"... {len(beyond)} more states"),
                shape="note",
                color="#bbbbbb",
                fontcolor="#777777",
            )
            g.edge(f"s{node}", f"more{node}", style="dotted", color="#bbbbbb", arrowhead="none")
    return str(g.source)


def _descendants(graph: nx.MultiDiGraph, node: int) -> set[int]:
    """The nodes reachable from `node` (networkx's, imported here rather than at start)."""
    import networkx as nx

    return set(nx.descendants(graph, node))
