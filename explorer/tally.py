"""A model whose steps also count figures of the state each step reaches.

Counters normally come from a model's own step function. Some figures are better read off
the state a step reaches (which crash point a process stopped at, say) than threaded through
the step function: `Tallied` wraps any model and adds `tally(state reached)` to each step's
counters, so the explorer's path counting sums them over scenarios like any other counter.
The wrapped model's states, actions, properties and measures are unchanged, so its graph,
scenario counts and path codes are exactly the inner model's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from crashsweep.explorer.model import Action, Model, Property

S = TypeVar("S")


@dataclass(frozen=True)
class Tallied(Generic[S]):
    """`inner`, with `tally(state)` added to the counters of every step that reaches `state`."""

    inner: Model[S]
    tally: Callable[[S], Mapping[str, int]]

    def initial(self) -> S:
        """The inner model's initial state."""
        return self.inner.initial()

    def actions(self, state: S) -> Sequence[Action]:
        """The inner model's actions."""
        return self.inner.actions(state)

    def step(self, state: S, action: Action) -> tuple[S, Mapping[str, int]]:
        """The inner step, its counters plus the tally of the state it reaches."""
        after, deltas = self.inner.step(state, action)
        extra = self.tally(after)
        if not extra:
            return after, deltas
        merged = dict(deltas)
        for name, value in extra.items():
            merged[name] = merged.get(name, 0) + value
        return after, merged

    @property
    def key(self) -> Callable[[S], Hashable] | None:
        """The inner model's state key, if it has one (the tally reads only what the key keeps)."""
        return getattr(self.inner, "key", None)

    def is_finished(self, state: S) -> bool:
        """The inner model's end of a scenario."""
        return self.inner.is_finished(state)

    def crash_point(self, state: S) -> str | None:
        """The inner model's crash point."""
        return self.inner.crash_point(state)

    @property
    def properties(self) -> Sequence[Property[S]]:
        """The inner model's properties."""
        return self.inner.properties

    @property
    def measures(self) -> Mapping[str, Callable[[S], int]]:
        """The inner model's measures."""
        return self.inner.measures
