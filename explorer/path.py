"""Counterexamples as values: a path of steps, and a compact code that replays it.

A path starts at the initial state; each later step records the action taken, its index
among the actions enabled there (crashes enabled only below the depth), and the state after
it. The code "LENGTH:POS=CHOICE,..." lists only the steps that did not take the first enabled
action, so a one-crash counterexample of forty steps reads like "40:17=1". Replaying a code
re-runs the model's own step function; it needs neither the graph nor the explorer.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from crashsweep.explorer.model import MOVES, Action, Model

if TYPE_CHECKING:
    from crashsweep.explorer.search import Exploration

S = TypeVar("S", bound=Hashable)
_CODE = re.compile(r"^(\d+):((?:\d+=\d+)(?:,\d+=\d+)*)?$")


@dataclass(frozen=True, slots=True)
class PathStep(Generic[S]):
    """One step of a path: the action taken (None at the start), its choice index, the state after."""

    action: Action | None
    choice: int
    state: S
    crashes: int


@dataclass(frozen=True, slots=True)
class Path(Generic[S]):
    """A path from the initial state; `steps[0]` is the initial state itself."""

    steps: tuple[PathStep[S], ...]

    @property
    def end(self) -> S:
        """The last state of the path."""
        return self.steps[-1].state

    @property
    def code(self) -> str:
        """The replayable encoding of this path."""
        return encode_path(self)

    @property
    def crashes(self) -> int:
        """How many crash steps the path takes."""
        return self.steps[-1].crashes


def encode_path(path: Path[S]) -> str:
    """Encode a path as "LENGTH:POS=CHOICE,..." (positions count steps from 1)."""
    turns = ",".join(f"{pos}={step.choice}" for pos, step in enumerate(path.steps) if pos and step.choice)
    return f"{len(path.steps) - 1}:{turns}"


def decode_path(code: str) -> tuple[int, dict[int, int]]:
    """Decode a path code into (length, position -> choice); ValueError names what is wrong."""
    match = _CODE.match(code.strip())
    if match is None:
        raise ValueError(f"path code {code!r} is not of the form LENGTH:POS=CHOICE,... (e.g. 40:17=1)")
    length = int(match.group(1))
    choices: dict[int, int] = {}
    for part in filter(None, (match.group(2) or "").split(",")):
        pos, choice = (int(x) for x in part.split("="))
        if not 1 <= pos <= length:
            raise ValueError(f"path code {code!r}: position {pos} is outside the path's {length} steps")
        choices[pos] = choice
    return length, choices


def replay(model: Model[S], depth: int, code: str) -> Path[S]:
    """Re-run the model along a coded path; ValueError if the code does not fit the model."""
    from crashsweep.explorer.search import enabled

    length, choices = decode_path(code)
    state = model.initial()
    crashes = 0
    start: PathStep[S] = PathStep(None, 0, state, 0)
    steps = [start]
    for pos in range(1, length + 1):
        choice = choices.get(pos, 0)
        if model.is_finished(state):
            raise ValueError(
                f"path code {code!r}: the path is longer than the run, which finishes after {pos - 1} steps "
                f"(step {pos} takes action {choice}, but only 0 are enabled there)"
            )
        actions = enabled(model, state, crashes, depth)
        if choice >= len(actions):
            raise ValueError(
                f"path code {code!r}: step {pos} takes action {choice}, but only {len(actions)} "
                f"are enabled there at depth {depth}"
            )
        action = actions[choice]
        state, _ = model.step(state, action)
        crashes += action.kind in MOVES
        steps.append(PathStep(action, choice, state, crashes))
    return Path(tuple(steps))


def shortest_path(exploration: Exploration[S], node: int) -> Path[S]:
    """The path by which BFS first reached `node`: a shortest path from the root."""
    chain: list[tuple[int, int, int]] = []  # (parent, choice, child)
    while node != exploration.root:
        parent, choice = exploration.parents[node]
        chain.append((parent, choice, node))
        node = parent
    root = exploration.root
    start: PathStep[S] = PathStep(None, 0, exploration.state(root), 0)
    steps = [start]
    for parent, choice, child in reversed(chain):
        action, _ = exploration.step(parent, choice)
        steps.append(PathStep(action, choice, exploration.state(child), exploration.crashes(child)))
    return Path(tuple(steps))
