"""An invariant as a value: its name, kind, witness, the facts it needs, and its check over a History.

Stateright's `Property` and Hypothesis's `@invariant` are values a checker collects; so is an
`Invariant` here. Its `check` reads a `History` (spec/history.py) and answers the `Violation`
(the few events that prove it) or None; `seen` is its "sometimes" witness over the same
history. The explorer must not build a history in every state, so an invariant may also carry
a `ModelCheck`: the same verdict computed straight from the model's world, incrementally; a test
holds it equal to `check` over the world's projection (spec/projection.py) on every state of
explored graphs. An invariant without one is judged by the explorer on the projected history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from crashsweep.spec.history import Event, History
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

Kind = Literal["always", "at_end", "live"]
"""always: in every state (and over every history); at_end: once the run is finished; live: from
every reachable state a finished one is reachable (over one history: it does not end stuck)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """Why an invariant fails on a history, in words, and the few events that show it."""

    invariant: str
    why: str
    evidence: tuple[Event, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelCheck:
    """The explorer's incremental form of an invariant: holds, witness and words, from a world and the job."""

    holds: Callable[[World, Job], bool]
    seen: Callable[[World, Job], bool]
    explain: Callable[[World, Job], str]


@dataclass(frozen=True, slots=True)
class Invariant:
    """One invariant: what every producer of histories is judged by (spec/HISTORY.md 3)."""

    name: str
    kind: Kind
    witness: str
    """The name of its "sometimes" partner: a check never exercised proves nothing."""
    needs: tuple[str, ...]
    """The families of facts (history.FACTS) a history must hold for this invariant to be decided."""
    summary: str
    check: Callable[[History], Violation | None]
    seen: Callable[[History], bool]
    model: ModelCheck | None = None

    def judge(self, history: History) -> Verdict:
        """The verdict on `history`: not decided (a needed fact unseen), violated, or holds; and the witness."""
        missing = history.missing(self.needs)
        if missing is not None:
            return Verdict(self.name, decided=False, why=missing)
        return Verdict(self.name, violation=self.check(history), witnessed=self.seen(history))


@dataclass(frozen=True, slots=True)
class Verdict:
    """An invariant's verdict on one history: decided or not (and why not), its violation, its witness."""

    name: str
    decided: bool = True
    violation: Violation | None = None
    witnessed: bool = False
    why: str = ""

    @property
    def holds(self) -> bool:
        """Decided, and no violation."""
        return self.decided and self.violation is None
