"""Toy models for the engine's tests, small enough to count states and paths by hand."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from crashsweep.explorer.model import Action, Property

START = Action("step", "start")
NEXT = Action("step", "next")
CRASH = Action("crash", "crash")
RESTART = Action("restart", "restart")

# A toy state: (phase, position, saved) with phase "init", "down", "at" or "done".
Toy = tuple[str, int, int]


@dataclass(frozen=True)
class Points:
    """A process that passes crash points 1..n, then finishes.

    With `durable`, every point's position is saved, so a restart resumes where it crashed;
    without, a restart begins at point 1 again. Each (re)start adds 1 to the counter "starts".
    """

    n: int
    durable: bool = False
    invariant: Callable[[Toy], bool] = field(default=lambda s: True)
    witness: Callable[[Toy], bool] = field(default=lambda s: s[0] == "done")

    def initial(self) -> Toy:
        """Nothing run yet."""
        return ("init", 0, 0)

    def actions(self, state: Toy) -> Sequence[Action]:
        """Start, restart, or next/crash at a point."""
        phase = state[0]
        if phase == "init":
            return (START,)
        if phase == "down":
            return (RESTART,)
        if phase == "at":
            return (NEXT, CRASH)
        return ()

    def step(self, state: Toy, action: Action) -> tuple[Toy, Mapping[str, int]]:
        """The next position, a crash, or a (re)start."""
        phase, position, saved = state
        if action.kind == "crash":
            return ("down", 0, saved), {}
        if phase in ("init", "down"):
            return ("at", max(saved, 1), saved), {"starts": 1}
        if position == self.n:
            return ("done", 0, saved), {}
        return ("at", position + 1, position + 1 if self.durable else saved), {}

    def is_finished(self, state: Toy) -> bool:
        """The process passed its last point."""
        return state[0] == "done"

    def crash_point(self, state: Toy) -> str | None:
        """Points are named p1..pn."""
        return f"p{state[1]}" if state[0] == "at" else None

    @property
    def properties(self) -> Sequence[Property[Toy]]:
        """One invariant and its witness."""
        return (
            Property.always("inv", self.invariant, witness="seen"),
            Property.sometimes("seen", self.witness),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[Toy], int]]:
        """One measure: 1 for every finished scenario."""
        return {"one": lambda s: 1}


@dataclass(frozen=True)
class Tagged:
    """`Points(n)` whose state also notes where the last crash struck, which nothing reads.

    The tag splits every state after a crash into n copies, one per crash point; the state key
    (the Points state alone) says the copies have the same future, so the search merges them.
    """

    n: int

    def initial(self) -> tuple[Toy, int]:
        """Nothing run yet, no crash."""
        return (Points(self.n).initial(), 0)

    def actions(self, state: tuple[Toy, int]) -> Sequence[Action]:
        """Points's actions."""
        return Points(self.n).actions(state[0])

    def step(self, state: tuple[Toy, int], action: Action) -> tuple[tuple[Toy, int], Mapping[str, int]]:
        """Points's step; a crash tags the state with the point it struck at."""
        toy, tag = state
        after, deltas = Points(self.n).step(toy, action)
        return (after, toy[1] if action.kind == "crash" else tag), deltas

    def key(self, state: tuple[Toy, int]) -> Toy:
        """The Points state: the tag is never read."""
        return state[0]

    def is_finished(self, state: tuple[Toy, int]) -> bool:
        """Points's end."""
        return state[0][0] == "done"

    def crash_point(self, state: tuple[Toy, int]) -> str | None:
        """Points's crash points."""
        return Points(self.n).crash_point(state[0])

    @property
    def properties(self) -> Sequence[Property[tuple[Toy, int]]]:
        """An invariant broken at the last point, and its witness."""
        return (
            Property.always("before-last", lambda s: s[0][1] < self.n, witness="seen"),
            Property.sometimes("seen", lambda s: s[0][0] == "done"),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[tuple[Toy, int]], int]]:
        """1 for every finished scenario."""
        return {"one": lambda s: 1}
