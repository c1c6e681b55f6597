"""pause for real (spec/FAULTS.md section 7): a second live process beside a paused one.

It may strike at each crash point of the first process (a person's pause is none). The
process is held there (the snapshot protocol's FIFO wait, and SIGSTOP), a restart runs beside
it on the same disk and tracker, held in turn at its `wake`-th point (or run until it stops),
then the paused one goes on with its memory (SIGCONT), then the held one: a scenario of its
own, which the runner runs (process/pausing.py, through `Pauses`). A pause whose restart ran
to its stop opens the same pause waking at each point the restart passed. Not yet a move of
the merging sweep: a sweep with pause runs every scenario, in scenarios of one move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from crashsweep.realsweep.faults.kind import AtPoint, Passed, Pauses, R
from crashsweep.realsweep.faults.move import Fault
from crashsweep.spec import faults as model


@dataclass(frozen=True)
class Pause(AtPoint):
    """The process is paused, not dead: a restart runs beside it, and it wakes with stale memory."""

    name = model.PAUSE.name
    every_scenario = True
    doing = "pauses a process"

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Every crash point after `after`, its restart running until it stops (`wake` 0)."""
        return [Fault(self, i, p, points[:i].count(p)) for i, p in enumerate(points, start=1) if (i, 0) > after]

    def alone(self, fault: Fault, runner: Pauses[R]) -> R | None:
        """Two live processes: the runner's pause scenario."""
        return runner.pause(fault)

    def next_moves(self, fault: Fault, points: Sequence[str]) -> list[Fault]:
        """After a restart that ran to its stop, passing `points`: the same pause waking at each of them."""
        if fault.wake:
            return []
        return [waking_at(fault, k, points) for k in range(1, len(points) + 1)]

    def label(self, fault: Fault) -> str:
        """In words: "pause at <point>, wake at <restart's point>" ("p2 stopped": it wakes as the restart stops)."""
        return f"{self.name} at {self.pass_label(fault)}, wake at {fault.wake_at if fault.wake else 'p2 stopped'}"

    def code(self, fault: Fault) -> str:
        """Its short name, "pause-3-5": paused at point 3, woken at the restart's point 5 (0: as it stops)."""
        return f"{self.name}-{fault.index}-{fault.wake}"


def waking_at(fault: Fault, wake: int, points: Sequence[str]) -> Fault:
    """The pause `fault` with its process waking at the restart's point `wake` (from 1) of `points`."""
    point = points[wake - 1]
    occurrence = list(points[:wake]).count(point)
    return replace(fault, wake=wake, wake_at=point if occurrence == 1 else f"{point}#{occurrence}")


PAUSE = Pause()
