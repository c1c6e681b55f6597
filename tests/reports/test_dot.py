"""Tests of crashsweep.reports.dot: the state graph's DOT source, checked without needing `dot`."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from typing import Any

import graphviz
import pytest

from crashsweep.explorer.search import Exploration, explore
from crashsweep.reports import dot
from crashsweep.reports.counterexample import Counterexample, shortest
from crashsweep.spec.job import job_from_mapping
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model

NODE = re.compile(r"^\s*s(\d+) \[(.*)\]$", re.MULTILINE)
EDGE = re.compile(r"^\s*s(\d+) -> s(\d+) \[(.*)\]$", re.MULTILINE)
ODD_ID = 'a"b\\N<i>x</i>'

SCRIPT = """
from crashsweep.explorer.search import explore
from crashsweep.reports import dot, sequence
from crashsweep.reports.counterexample import shortest
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model
import hashlib
e = explore(model("save-after-reply", TRIAGE, KEYED), 2)
cx = shortest(e, variant="save-after-reply", job="triage", job_file=None, tracker="keyed")[0]
text = dot.state_graph(e, cx) + sequence.sequence_diagram(cx)
print(hashlib.sha256(text.encode()).hexdigest())
"""


def odd_job_counterexample() -> tuple[Exploration[Any], Counterexample]:
    """save-once-per-turn on a job whose one write has an ID full of DOT and HTML syntax."""
    job = job_from_mapping(
        {"name": "odd <job>", "turns": [[ODD_ID]], "calls": {ODD_ID: {"tool": "create_issue", "writes": True}}}
    )
    exploration = explore(model("save-once-per-turn", job, KEYED), 1)
    found = shortest(exploration, variant="save-once-per-turn", job=job.name, job_file=None, tracker="keyed")
    return exploration, found[0]


def test_edge_styles_by_kind(small: Exploration[Any], small_cx: Counterexample) -> None:
    """Crash edges are dashed, restart edges bold, and path edges thick."""
    source = dot.state_graph(small, small_cx)
    edges = EDGE.findall(source)
    assert edges
    for _, _, attrs in edges:
        if "label=crash" in attrs:
            assert "style=dashed" in attrs
        elif "label=restart" in attrs:
            assert "style=bold" in attrs
        else:
            assert "style=" not in attrs
    assert sum("penwidth=3" in attrs for _, _, attrs in edges) == len(small_cx.steps)


def test_initial_state_filled_and_violating_states_marked(small: Exploration[Any], small_cx: Counterexample) -> None:
    """The initial state is filled; the first violating state is a pink octagon that says why."""
    nodes = dict(NODE.findall(dot.state_graph(small, small_cx)))
    assert 'style="filled,rounded"' in nodes[str(small.root)]
    bad = nodes[str(small.verdicts["no-duplicate"].node)]
    assert "shape=octagon" in bad
    assert "w has 2 records: #1 and #2" in bad
    assert "step 9" in bad


def test_legend_and_ranks_by_depth(small: Exploration[Any], small_cx: Counterexample) -> None:
    """A legend explains the styles, and each depth is one rank with a ruler label."""
    source = dot.state_graph(small, small_cx)
    assert "crash (dashed)" in source
    assert "restart (bold)" in source
    depths = re.findall(r'depth(\d+) \[label="depth \d+"', source)
    assert depths == [str(d) for d in range(len(depths))]
    assert source.count("rank=same") == len(depths)


def test_small_graph_is_drawn_whole(small: Exploration[Any], small_cx: Counterexample) -> None:
    """A graph of at most FULL_LIMIT states is drawn whole, and the title says so."""
    source = dot.state_graph(small, small_cx)
    assert small.graph.number_of_nodes() <= dot.FULL_LIMIT
    assert len(NODE.findall(source)) == small.graph.number_of_nodes()
    assert f"the whole graph: {small.graph.number_of_nodes()} states" in source
    assert "more states" not in source.replace("n more states", "")


def test_large_graph_shows_the_neighbourhood_and_says_what_is_left_out(
    sar: Exploration[Any], sar_cx: Counterexample
) -> None:
    """A large graph shows the path and its neighbours, and names how much was left out."""
    source = dot.state_graph(sar, sar_cx)
    shown = {int(n) for n, _ in NODE.findall(source)}
    # The path's states and every state one step onward from one of them, read off the graph.
    path = {sar.root}
    node = sar.root
    for choice in sar_cx.choices:
        node = next(v for _, v, k in sar.graph.out_edges(node, keys=True) if k == choice)
        path.add(node)
    near = path | {v for u in path for v in sar.graph.successors(u)}
    assert shown == near
    total, edges = sar.graph.number_of_nodes(), sar.graph.number_of_edges()
    kept = sar.graph.subgraph(near).number_of_edges()
    assert f"showing {len(near)} of {total} states" in source
    assert f"{total - len(near)} states and {edges - kept} edges left out" in source
    assert re.search(r'label="\.\.\. \d+ more states"', source)
    for u, v, _ in EDGE.findall(source):
        assert int(u) in shown
        assert int(v) in shown


def test_job_labels_are_escaped() -> None:
    """Quotes and backslashes of call IDs are escaped, and no label becomes HTML-like."""
    exploration, cx = odd_job_counterexample()
    source = dot.state_graph(exploration, cx)
    assert 'tracker accepted a\\"b\\\\N<i>x</i>' in source
    assert "label=<" not in source.replace("label=<<table", "")
    graph = graphviz.Digraph()
    graph.node("x", dot.label("<b>a\\b</b>"))
    assert 'label="<b>a\\\\b</b>"' in graph.source


@pytest.mark.requires_tool("dot")
def test_dot_renders_escaped_labels_literally() -> None:
    """`dot` accepts the source and shows the odd call ID literally in the SVG."""
    exploration, cx = odd_job_counterexample()
    done = subprocess.run(
        ["dot", "-Tsvg"], input=dot.state_graph(exploration, cx), capture_output=True, text=True, check=True
    )
    assert "a&quot;b\\N&lt;i&gt;x&lt;/i&gt;" in done.stdout or 'a"b\\N&lt;i&gt;x&lt;/i&gt;' in done.stdout


def test_output_is_identical_whatever_the_hash_seed() -> None:
    """The DOT sources are byte-identical across processes with different PYTHONHASHSEED."""
    digests = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True, timeout=120
        )
        digests.add(done.stdout.strip())
    assert len(digests) == 1
    assert len(next(iter(digests))) == len(hashlib.sha256().hexdigest())


def test_a_fault_is_named_a_fault_in_the_state_graph() -> None:
    """With `pause`, the graph says the moves as the trace does: 0 crashes, 1 fault; its states count moves."""
    from crashsweep.reports import trace
    from crashsweep.spec.job import TRIAGE

    exploration = explore(model("agent-loop", TRIAGE, KEYED, faults=("pause",)), 1)
    cx = shortest(exploration, variant="agent-loop", job="triage", job_file=None, tracker="keyed")[0]
    assert "0 crashes, 1 fault" in trace.title(cx)
    source = dot.state_graph(exploration, cx)
    assert f"path {cx.code}: 18 steps, 0 crashes, 1 fault" in source
    assert "1 crash" not in source
    assert "after 1 move" in source
