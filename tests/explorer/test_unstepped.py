"""A twin's new node keeps no state until read: made from its BFS parent's, as stepping every edge makes it."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

from crashsweep.explorer.model import MOVES
from crashsweep.explorer.search import enabled, explore
from crashsweep.explorer.unstepped import UNSTEPPED, StandIns, left, made, made_all, stand_in
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import DESIGNS, model


def _stepped_states(subject: Any, depth: int) -> list[Any]:
    """A plain breadth-first search that steps and keys every edge: the state each node first got."""
    key = subject.key
    index: dict[tuple[Hashable, int], int] = {}
    states, crashes = [subject.initial()], [0]
    index[key(states[0]), 0] = 0
    node = 0
    while node < len(states):
        for action in enabled(subject, states[node], crashes[node], depth):
            after, _ = subject.step(states[node], action)
            moved = crashes[node] + (action.kind in MOVES)
            if index.setdefault((key(after), moved), len(states)) == len(states):
                states.append(after)
                crashes.append(moved)
        node += 1
    return states


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_every_node_reads_the_state_stepping_every_edge_gives(design: str) -> None:
    """Some nodes are left unstepped by the search; read, each is the world a plain search stored there."""
    subject = model(design, TRIAGE, KEYED)
    found = explore(subject, 2)
    assert any(left(found.core, node) for node in range(found.states))  # TRIAGE at depth 2: in every design
    assert [found.state(node) for node in range(found.states)] == _stepped_states(subject, 2)
    assert not any(left(found.core, node) for node in range(found.states))  # each read keeps the state made


def test_a_made_state_is_its_parents_stepped_by_the_tree_edge() -> None:
    """`made` steps from the nearest stepped ancestor, keeping every state it makes on the way."""
    subject = model("save-after-reply", TRIAGE, KEYED)
    found = explore(subject, 2)
    core = found.core
    node = max(n for n in range(found.states) if left(core, n))
    parent, choice = found.parents[node]
    state = made(core, node, subject.step)
    action, _ = found.step(parent, choice)
    assert state == subject.step(found.state(parent), action)[0]
    assert core.states[node] is state


def test_stand_ins_are_the_heads_states_never_stepped() -> None:
    """Counting reads an unstepped node's head's state (the same key); nothing is stepped for it."""
    subject = model("attempt-markers", TRIAGE, KEYED)
    core = explore(subject, 2).core
    unstepped = [n for n in range(core.nodes) if left(core, n)]
    stand_ins = StandIns(core)
    assert len(stand_ins) == core.nodes
    for node in unstepped:
        assert stand_in(core, node) is core.states[core.heads[node]]
        assert stand_ins[node] is core.states[core.heads[node]]
        assert subject.key(stand_ins[node]) == subject.key(made(core, node, subject.step))
    assert UNSTEPPED not in list(stand_ins) + stand_ins[0:3]


def test_the_graph_holds_every_state_made() -> None:
    """Reading the networkx graph makes every state first (its nodes carry them)."""
    found = explore(model("idempotency-keys", TRIAGE, KEYED), 2)
    graph = found.graph
    assert all(data["state"] is not UNSTEPPED for _, data in graph.nodes(data=True))
    made_all(found.core, found.model.step)  # nothing left: a second pass makes nothing
    assert repr(UNSTEPPED) == "UNSTEPPED"
