"""An anomaly as a value: a named finding about a history and the few events that prove it (spec/HISTORY.md 8).

Elle names each anomaly it finds in a database's history and proves it by a minimal set of
operations; an `Anomaly` here is that for tool calls: its rule's name, whether it is definite or
only possible (its witness rests on an outcome nobody knows), the run it is about, words for a
person, and a witness of at most three events whose `src` points back into the raw record. A
`Rule` is the value that finds one kind of anomaly: its name, the invariant it is a case of
(where one is), when it is found, and `find` over a joined History.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from crashsweep.spec.history import Event, History

WITNESS_MAX = 3
"""A witness holds at most this many events (spec/HISTORY.md 8)."""


@dataclass(frozen=True, slots=True)
class Anomaly:
    """One finding: its rule's name, definite or possible, its run and call, why, and its witness."""

    name: str
    definite: bool
    run: str
    call: str
    why: str
    witness: tuple[Event, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.witness) <= WITNESS_MAX:
            raise ValueError(f"{self.name}: a witness holds 1 to {WITNESS_MAX} events, not {len(self.witness)}")


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of anomaly: its name, the invariant it is a case of ("" for none), and how it is found."""

    name: str
    invariant: str
    summary: str
    find: Callable[[History], Iterable[Anomaly]]
