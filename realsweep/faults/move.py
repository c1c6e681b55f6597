"""A fault move: one fault of a kind (kind.py) at one place of one process, a value the sweep passes around.

The move holds where it strikes; its kind says what that means (label, code, counter,
position, environment). It is frozen and hashable: the merging sweep keys its units by their
moves, and the Ray engine ships moves to other machines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crashsweep.realsweep.faults.kind import FaultKind, Pauses, R, Stage


@dataclass(frozen=True)
class Fault:
    """One fault move: `kind` at the `occurrence`-th pass of `point`, after `index` points of its process.

    lost-reply, power-loss: `point` is the `index`-th point (from 1) and `occurrence` its pass;
    wrong-answer: `point` is the pause, `index` the points passed before it, `occurrence`
    its number among the process's pauses; key-expiry: `point` is "restart"; pause: `point`
    is the `index`-th point, where process 1 is paused, and `wake` the point of the restart
    where it wakes (its index from 1, and its name as a label, "point#k" past the first
    pass), 0 and "" when it wakes as the restart stops.
    """

    kind: FaultKind
    index: int
    point: str
    occurrence: int = 1
    wake: int = 0
    wake_at: str = ""
    detail: str = ""
    """What the move carries to the process that suffers it, read off the chance (a timeout: the layer's retry)."""

    @property
    def name(self) -> str:
        """Its kind's name, as spec/faults.py's: "lost-reply"."""
        return self.kind.name

    @property
    def label(self) -> str:
        """The fault in words: "lost-reply at tracker accepted create_a" (#k past the first pass)."""
        return self.kind.label(self)

    @property
    def code(self) -> str:
        """A short name for folders and tracker spaces: "lost-reply-3" (its place among the points), "pause-3-5"."""
        return self.kind.code(self)

    @property
    def position(self) -> tuple[int, int]:
        """Where it strikes in its process: (points passed, 0) at a point, (points passed, q) at the q-th pause."""
        return self.kind.position(self)

    @property
    def counter(self) -> str:
        """The counter that tallies it (`fault.lost-reply`), as the model's fault edges do."""
        return self.kind.counter(self)

    @property
    def crash_at(self) -> str:
        """Where a process dies at this move's point ("k:<point>"): a power cut kills it there."""
        return f"{self.occurrence}:{self.point}"

    def env(self) -> dict[str, str]:
        """The environment that makes the process suffer this fault alone (a power cut and a pause need none)."""
        return self.kind.env((self,))

    def struck(self, points: Sequence[str], pauses: Sequence[tuple[int, str]]) -> bool:
        """Whether it struck where it was found, in a process that passed `points` and `pauses`."""
        return self.kind.struck(self, points, pauses)

    def reached(self, points: Sequence[str]) -> bool:
        """Whether the process it ended got to where it strikes, having passed `points` (power loss at exit: always)."""
        return self.kind.reached(self, points)

    def next_moves(self, points: Sequence[str]) -> list[Fault]:
        """The moves its scenario opens once run, its restart having passed `points` (pause: its wakes)."""
        return self.kind.next_moves(self, points)

    def restart_env(self) -> dict[str, str]:
        """What the restart beside a paused process is told (a timeout's new attempt); none for a pause."""
        return self.kind.restart_env(self)

    def before_restart(self, space: Path | None, files: Path | None = None) -> None:
        """Carry it out on a saved world's tracker `space` and files before a restart (key-expiry: forget every key)."""
        self.kind.before_restart(space, files)

    def alone(self, runner: Pauses[R]) -> R | None:
        """Its scenario, when its kind runs one of its own (pause: `runner.pause`); else None."""
        return self.kind.alone(self, runner)

    def strike(self, stage: Stage) -> bool:
        """Carry it out after the crashes of the runner's scenario; whether it ended a process (power loss)."""
        return self.kind.strike(self, stage)
