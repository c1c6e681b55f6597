"""What the explorer needs of a model: states, actions, a pure step, properties, measures.

Only these names are needed to write a model. A crash is an ordinary action of kind "crash",
any other move of the environment (a fault) an action of kind "fault", and a failure that a
retry layer answers an action of kind "retry": all are moves of the adversary, and the
explorer enables them only while the path's moves are below the depth. A restart is an
action of kind "restart". Properties are named predicates of three kinds: "always" (every
state), "at_end" (every finished state) and "sometimes" (some state); every always or at_end
property names a sometimes partner, its witness, so a check that is never exercised
fails loudly instead of passing.

A model may also say what of a state its future can observe: an attribute `key`, a function
from a state to a hashable key (or None, the default, for the state itself). The search then
stores one node per key and crash count, stepping the state that first reached it
(`explorer/search.py`); the key must keep everything the model's actions, steps' counters,
crash points, properties and measures can read, now or later (a bisimulation), which is
what makes every count and verdict the same as the full graph's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

S = TypeVar("S")
Kind = Literal["step", "crash", "restart", "fault", "retry"]
PropertyKind = Literal["always", "sometimes", "at_end", "live"]
KINDS: tuple[Kind, ...] = ("step", "crash", "restart", "fault", "retry")
MOVES: frozenset[str] = frozenset({"crash", "fault", "retry"})
"""The kinds of action that are moves of the adversary, bounded together by the depth."""


class ModelDefinitionError(ValueError):
    """A model that cannot be explored; the message names the offender and the fix."""


@dataclass(frozen=True, slots=True)
class Action:
    """An enabled action: its kind and a label for traces (e.g. the crash point it leads to)."""

    kind: Kind
    label: str


@dataclass(frozen=True)
class Property(Generic[S]):
    """A named predicate over states; `witness` names an invariant's sometimes partner."""

    name: str
    kind: PropertyKind
    check: Callable[[S], bool]
    witness: str | None = None
    explain: Callable[[S], str] | None = None

    @classmethod
    def always(
        cls, name: str, check: Callable[[S], bool], *, witness: str, explain: Callable[[S], str] | None = None
    ) -> Property[S]:
        """An invariant checked in every reachable state."""
        return cls(name, "always", check, witness, explain)

    @classmethod
    def at_end(
        cls, name: str, check: Callable[[S], bool], *, witness: str, explain: Callable[[S], str] | None = None
    ) -> Property[S]:
        """An invariant checked in every finished state."""
        return cls(name, "at_end", check, witness, explain)

    @classmethod
    def can_finish(
        cls, name: str, check: Callable[[S], bool], *, witness: str, explain: Callable[[S], str] | None = None
    ) -> Property[S]:
        """Liveness: from every reachable state some finished state is reachable.

        `check` says a state is not stuck; `explain` says what a stuck state waits for.
        """
        return cls(name, "live", check, witness, explain)

    @classmethod
    def sometimes(cls, name: str, check: Callable[[S], bool]) -> Property[S]:
        """A witness: some reachable state must satisfy it."""
        return cls(name, "sometimes", check)


class Model(Protocol[S]):
    """A model the explorer can search. Every method must be pure and deterministic."""

    def initial(self) -> S:
        """The initial state."""

    def actions(self, state: S) -> Sequence[Action]:
        """The actions enabled in `state`, in a fixed order (crash actions included)."""

    def step(self, state: S, action: Action) -> tuple[S, Mapping[str, int]]:
        """The state after `action`, and the counters the action increments."""

    def is_finished(self, state: S) -> bool:
        """Whether `state` ends a scenario."""

    def crash_point(self, state: S) -> str | None:
        """The name of the crash point `state` is at, or None."""

    @property
    def properties(self) -> Sequence[Property[S]]:
        """The named properties to check."""

    @property
    def measures(self) -> Mapping[str, Callable[[S], int]]:
        """Figures of a finished state, summed over the scenarios that end there."""


@dataclass(frozen=True)
class Summed(Generic[S]):
    """A measure that is the sum of one counter's increments along the scenario's path.

    `of(state)` is the figure of a final state; the model promises it equals `counter` summed
    over the steps of any path to that state (a figure that only grows as the path goes, such
    as the duplicates a tracker holds). The explorer then sums the counter along each path and
    reports the total as this measure, never reading the final state: the state key may leave
    out what `of` reads (spec/SEMANTICS.md section 11). The counter itself is no counter of the
    counts, nor one of the graph's edge deltas (an edge keeps it apart, as `summed`).
    """

    counter: str
    of: Callable[[S], int]

    def __call__(self, state: S) -> int:
        """The figure of one final state."""
        return self.of(state)


def summed_counters(measures: Mapping[str, Callable[[S], int]]) -> dict[str, str]:
    """Each `Summed` measure's counter -> the measure's name."""
    return {measure.counter: name for name, measure in measures.items() if isinstance(measure, Summed)}


StateKey = Callable[[S], Hashable]
"""What of a state its future can observe: states with equal keys are one node of the search."""


def state_key(model: object) -> StateKey[object] | None:
    """The model's `key` function, or None when it has none (every state is its own key)."""
    key = getattr(model, "key", None)
    if key is not None and not callable(key):
        raise ModelDefinitionError(f"the model's key is {key!r}: give a function from a state to its key, or None")
    return key


def validate_model(model: Model[S]) -> None:
    """Raise ModelDefinitionError unless the model's properties are well formed."""
    names = [prop.name for prop in model.properties]
    for name in names:
        if names.count(name) > 1:
            raise ModelDefinitionError(f"property {name!r} is defined twice: give each property its own name")
    sometimes = {prop.name for prop in model.properties if prop.kind == "sometimes"}
    for prop in model.properties:
        if prop.kind not in ("always", "sometimes", "at_end", "live"):
            raise ModelDefinitionError(
                f"property {prop.name!r} has kind {prop.kind!r}: use always, sometimes, at_end or live"
            )
        if prop.kind == "sometimes":
            continue
        if prop.witness is None:
            raise ModelDefinitionError(
                f"invariant {prop.name!r} has no sometimes partner: add Property.sometimes(...) that "
                f"shows the check is exercised, and name it in witness="
            )
        if prop.witness not in sometimes:
            raise ModelDefinitionError(
                f"invariant {prop.name!r} names witness {prop.witness!r}, which is not a sometimes "
                f"property of the model (known: {', '.join(sorted(sometimes)) or 'none'})"
            )
