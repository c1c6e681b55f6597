"""A later twin follows its head's edges unstepped: the same graph as stepping every edge (explorer/twins.py)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import pytest

from crashsweep.explorer.model import MOVES, Action
from crashsweep.explorer.search import enabled, explore
from crashsweep.explorer.twins import twin_edges
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import DESIGNS, model

STEP, CRASH, FAULT, OTHER = Action("step", "go"), Action("crash", "crash"), Action("fault", "f"), Action("step", "x")
TABLE = [STEP, CRASH, FAULT, OTHER]


def _steps(*actions: Action) -> tuple[tuple[Action, int, bool], ...]:
    """The search's plan of a node offering `actions`: each with its number in TABLE and whether it is a move."""
    return tuple((a, TABLE.index(a), a.kind in MOVES) for a in actions)


def test_a_twin_with_the_heads_actions_takes_its_edges_in_order() -> None:
    numbers = [9, 0, 1, 9]  # the head's edges are 1 and 2 (others' around them)
    assert twin_edges(_steps(STEP, CRASH), numbers, 1, 3, TABLE) == [1, 2]


def test_a_twin_with_no_moves_left_skips_the_heads_moves() -> None:
    assert twin_edges(_steps(STEP), [0, 1, 2], 0, 3, TABLE) == [0]


def test_a_twin_whose_actions_differ_from_its_heads_is_stepped() -> None:
    assert twin_edges(_steps(STEP, CRASH), [0], 0, 1, TABLE) is None  # moves the head had no edge for
    assert twin_edges(_steps(STEP), [3, 0], 0, 2, TABLE) is None  # a step the twin does not take
    assert twin_edges(_steps(STEP), [0, 3], 0, 2, TABLE) is None


def _stepped_everywhere(subject: Any, depth: int) -> tuple[list[int], list[int], list[Mapping[str, int]], list[int]]:
    """A plain breadth-first search that steps and keys every edge: targets, crashes, deltas, parents."""
    key = subject.key
    index: dict[tuple[Hashable, int], int] = {}
    states, crashes, parents = [subject.initial()], [0], [0]
    index[key(states[0]), 0] = 0
    targets: list[int] = []
    deltas: list[Mapping[str, int]] = []
    node = 0
    while node < len(states):
        for action in enabled(subject, states[node], crashes[node], depth):
            after, counters = subject.step(states[node], action)
            moved = crashes[node] + (action.kind in MOVES)
            target = index.setdefault((key(after), moved), len(states))
            if target == len(states):
                states.append(after)
                crashes.append(moved)
                parents.append(node)
            targets.append(target)
            deltas.append(dict(counters))
        node += 1
    return targets, crashes, deltas, parents


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_the_merged_graph_is_the_one_stepping_every_edge_gives(design: str) -> None:
    """Nodes, edges, counters and BFS parents as a search that steps and keys every edge finds them."""
    subject = model(design, TRIAGE, KEYED)
    found = explore(subject, 2)
    targets, crashes, deltas, parents = _stepped_everywhere(subject, 2)
    core = found.core
    assert list(core.targets) == targets
    assert list(core.crashes) == crashes
    assert list(core.parent) == parents
    assert [dict(d) for d in core.deltas] == deltas


class _Counted:
    """A model that counts its steps (every other name is the inner model's)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.steps = inner, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def step(self, state: Any, action: Action) -> Any:
        """The inner step, counted."""
        self.steps += 1
        return self.inner.step(state, action)


def test_a_twins_edge_into_a_known_node_is_not_stepped() -> None:
    """The saving is real: fewer steps than edges, with the same graph (the test above)."""
    counted = _Counted(model("save-after-reply", TRIAGE, KEYED))
    found = explore(counted, 2)
    assert counted.steps < found.edges
