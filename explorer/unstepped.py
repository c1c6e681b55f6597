"""Nodes whose state the search did not step: made on demand from their BFS parent's.

A later twin (explorer/twins.py) follows its head's edges without stepping: where such an
edge ends at a new node, that node's key is its target's, and its actions, properties,
measures and finished flag are those of the first node with that key (its head: a state
with the same future, which the key promises). The search numbers it, counts it and
expands it by its head's state alone, so its own state is never needed there: it keeps
`UNSTEPPED` in its place and saves the step. Its state is still a real execution, made
when first read: its BFS parent's state stepped by the tree edge, as the search would have
made it (the step is pure), after the parent's own when that one is unstepped too.

`stand_in(core, node)` is what counting and worst-case passes read of a finished node: its
state, or its head's (equal measures, by the key's promise), never stepping anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from crashsweep.explorer.core import Core
from crashsweep.explorer.model import Action

__all__ = ["UNSTEPPED", "StandIns", "Unstepped", "left", "made", "made_all", "stand_in"]

S = TypeVar("S")
Step = Callable[[Any, Action], tuple[Any, Mapping[str, int]]]


class Unstepped:
    """The place of a state the search did not step (one object: compared by identity)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSTEPPED"


UNSTEPPED = Unstepped()


def left(core: Core[Any], node: int) -> bool:
    """Whether the search left `node` unstepped (and no read has made its state yet)."""
    return core.states[node] is UNSTEPPED


def made(core: Core[Any], node: int, step: Step) -> Any:
    """The state of `node`, stepped (and kept) from its BFS parent's, and the parent's first if need be."""
    states, parents, choices = core.states, core.parent, core.choice
    waiting: list[int] = []
    while states[node] is UNSTEPPED:
        waiting.append(node)
        node = parents[node]
    state = states[node]
    for later in reversed(waiting):
        parent = parents[later]
        state = step(state, core.actions[core.offsets[parent] + choices[later]])[0]
        states[later] = state
    return state


def made_all(core: Core[Any], step: Step) -> None:
    """Make every node's state (in node order: a parent's is made before its children's)."""
    states = core.states
    for node in range(len(states)):
        if states[node] is UNSTEPPED:
            made(core, node, step)


def stand_in(core: Core[Any], node: int) -> Any:
    """The state of `node`, or of its head when the search left it unstepped (the same key, the same measures)."""
    state = core.states[node]
    return core.states[core.heads[node]] if state is UNSTEPPED else state


class StandIns(Sequence[Any]):
    """The nodes' states as counting reads them: each unstepped node's by its head's (`stand_in`)."""

    __slots__ = ("_core",)

    def __init__(self, core: Core[Any]) -> None:
        self._core = core

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [stand_in(self._core, node) for node in range(len(self))[index]]
        return stand_in(self._core, index)

    def __len__(self) -> int:
        return len(self._core.states)

    def __iter__(self) -> Iterator[Any]:
        return (stand_in(self._core, node) for node in range(len(self)))
