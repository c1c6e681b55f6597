"""A real fault kind: one value that owns its whole behaviour (spec/FAULTS.md, as Jepsen's nemesis).

The model's kinds are values of spec/faults.py (`FaultKind`: where enabled, what it does to a
world); a real kind (`FaultKind` here) is the same fault carried out on real processes. It says:

- where it can strike (`chances`: given the points and pauses a process passed and where its
  last fault struck), as `Fault` moves (move.py);
- what a process is told (`env`: its environment; the probe reads it in the swept process);
- what it does around a process: before a restart where its `restart_chance` is open
  (`before_restart`: key-expiry, the tracker forgets its keys; trim-context, the checkpoint's
  conversation loses its oldest messages), in place of the runner's scenario (`alone`, pause: a second live
  process), after the crashes of the runner's scenario (`strike`, power loss: a kill, then
  the disk cut);
- how a move of it reads: its label, code, counter, position, whether it struck, what moves
  it opens once run (`next_moves`).

faults/ sits below process/ and values (the real side's layers), so what a kind asks of the
runner goes through two small protocols the runner satisfies and passes in: `Pauses` (the
whole scenario of two live processes, process/pausing.py) and `Stage` (the runner's scenario
under way: its folder, work directory and next process). `Kind` holds the defaults: a kind
module overrides only what its fault does differently.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from crashsweep.spec.faults import fault_counter

if TYPE_CHECKING:
    from crashsweep.realsweep.faults.move import Fault
    from crashsweep.realsweep.world import World

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
Passed = Sequence[tuple[int, str]]
"""A process's pauses (crashpoint.pause): (points passed before each, its name)."""
RESTART = "restart"
"""The point of every move at a restart (key-expiry, trim-context): "key-expiry at restart"."""


class Pauses(Protocol[R_co]):
    """The runner, as a kind that replaces its scenario sees it (pause: process/pausing.py)."""

    def pause(self, fault: Fault) -> R_co:
        """Run the scenario of `fault` as two live processes on one disk and tracker; its result."""
        ...


class Stage(Protocol):
    """The runner's scenario under way, after its crashes: where a kind that ends a process acts."""

    @property
    def folder(self) -> Path:
        """The scenario's folder (logs, journals)."""
        ...

    @property
    def workdir(self) -> Path:
        """The scenario's work directory: the program's disk."""
        ...

    @property
    def number(self) -> int:
        """The number of the scenario's next process."""
        ...

    def kill(self, crash_at: str, env: Mapping[str, str]) -> None:
        """Run the next process with `env` added to its environment, killed at `crash_at` ("k:<point>")."""
        ...

    def run(self, env: Mapping[str, str]) -> None:
        """Run the next process with `env` added to its environment, to its end."""
        ...

    def passed(self) -> Sequence[str]:
        """The points the stage's process passed (after `kill` or `run`), in order."""
        ...

    def shared(self, cut: Hashable, end: Callable[[], None], states: Callable[[], int]) -> None:
        """Run `end` (the kill of `cut`) once for its `states()` crash states; the others copy what it left.

        The crash states of one power cut share one killed process (process/cuts.py); a stage
        that cannot share runs `end` every time.
        """
        ...


class FaultKind(Protocol):
    """One kind of fault carried out on real processes; its name is its model kind's (spec/faults.py)."""

    @property
    def name(self) -> str: ...
    @property
    def every_scenario(self) -> bool:
        """Swept scenario by scenario at depth 1 (not yet a move of the merging sweep)."""
        ...

    @property
    def doing(self) -> str:
        """What it does, in words, for a refusal: "cuts the power" ("" when not `every_scenario`)."""
        ...

    @property
    def in_process(self) -> bool:
        """A running process suffers it and goes on (told through its environment)."""
        ...

    @property
    def at_restart(self) -> bool:
        """It strikes between two processes (`before_restart`), not in one."""
        ...

    @property
    def fails_tool_calls(self) -> bool:
        """The program sees a tool call fail (a design must be able to take a tool error)."""
        ...

    @property
    def keys_ignored(self) -> bool:
        """Swept against a tracker that ignores keys only (it sends a key again with other parameters)."""
        ...

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]: ...
    def env(self, faults: Sequence[Fault]) -> dict[str, str]: ...
    def sweep_env(self) -> dict[str, str]: ...
    def restart_env(self, fault: Fault) -> dict[str, str]: ...
    def restart_chance(self, world: World) -> bool: ...
    def before_restart(self, space: Path | None, files: Path | None = None) -> None: ...
    def alone(self, fault: Fault, runner: Pauses[R]) -> R | None: ...
    def strike(self, fault: Fault, stage: Stage) -> bool: ...
    def struck(self, fault: Fault, points: Sequence[str], pauses: Passed) -> bool: ...
    def reached(self, fault: Fault, points: Sequence[str]) -> bool: ...
    def next_moves(self, fault: Fault, points: Sequence[str]) -> list[Fault]: ...
    def label(self, fault: Fault) -> str: ...
    def code(self, fault: Fault) -> str: ...
    def position(self, fault: Fault) -> tuple[int, int]: ...
    def counter(self, fault: Fault) -> str: ...


@dataclass(frozen=True)
class Kind:
    """The defaults of a real fault kind: a kind module subclasses it and sets `name` (a value, no fields).

    A kind is a frozen dataclass without fields, so equal to any value of its class: a `Fault`
    stays hashable and comparable after a trip to another machine (engines/ray.py).
    """

    name = ""
    every_scenario = False
    doing = ""
    in_process = False
    at_restart = False
    fails_tool_calls = False
    keys_ignored = False

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Every move of this kind open in a process that passed `points` and `pauses`, later than `after`."""
        return []

    def env(self, faults: Sequence[Fault]) -> dict[str, str]:
        """The environment that makes one process suffer `faults` (all of this kind): none by default."""
        return {}

    def sweep_env(self) -> dict[str, str]:
        """The environment of every process of a sweep with this kind, struck or not: none by default."""
        return {}

    def restart_env(self, fault: Fault) -> dict[str, str]:
        """The environment of the restart a scenario of its own starts beside a held process: none by default."""
        return {}

    def restart_chance(self, world: World) -> bool:
        """Whether it may strike before a restart from the saved `world` (`at_restart` kinds): never by default."""
        return False

    def before_restart(self, space: Path | None, files: Path | None = None) -> None:
        """What it does to a saved world's tracker `space` and work directory `files` before a restart: nothing."""

    def alone(self, fault: Fault, runner: Pauses[R]) -> R | None:
        """A scenario of its own instead of the runner's (pause), or None: the runner's scenario."""
        return None

    def strike(self, fault: Fault, stage: Stage) -> bool:
        """Strike after the crashes of the runner's scenario; whether it ended a process (power loss)."""
        return False

    def struck(self, fault: Fault, points: Sequence[str], pauses: Passed) -> bool:
        """Whether it struck where it was found, read off the process's points and pauses (at its pause)."""
        return tuple(pauses[fault.occurrence - 1 : fault.occurrence]) == ((fault.index, fault.point),)

    def reached(self, fault: Fault, points: Sequence[str]) -> bool:
        """Whether a process it ended (`strike`) got to where it strikes, having passed `points`: its point's pass."""
        return points.count(fault.point) >= fault.occurrence

    def next_moves(self, fault: Fault, points: Sequence[str]) -> list[Fault]:
        """The moves a scenario of `fault` opens once run (its restart passed `points`): none by default."""
        return []

    def label(self, fault: Fault) -> str:
        """The move in words: "wrong-answer at person answers create_a"."""
        return f"{self.name} at {fault.point}"

    def code(self, fault: Fault) -> str:
        """A short name for folders and tracker spaces: "lost-reply-3" (its place among the points)."""
        return f"{self.name}-{fault.index}"

    def position(self, fault: Fault) -> tuple[int, int]:
        """Where it strikes in its process: (points passed, q) at the q-th pause."""
        return (fault.index, fault.occurrence)

    def counter(self, fault: Fault) -> str:
        """The counter that tallies it (`fault.lost-reply`), as the model's fault edges do."""
        return fault_counter(self.name)


@dataclass(frozen=True)
class AtPoint(Kind):
    """A kind that strikes at a crash point: its position is (points passed, 0), before the pauses there."""

    def position(self, fault: Fault) -> tuple[int, int]:
        """(points passed, 0): at the `index`-th point."""
        return (fault.index, 0)

    def pass_label(self, fault: Fault) -> str:
        """Its point, with "#k" past the point's first pass."""
        return f"{fault.point}#{fault.occurrence}" if fault.occurrence > 1 else fault.point
