"""A timeout layer's retry for real (spec/RETRIES.md 1.1-1.2): a new attempt beside the one given up on.

A timeout does not stop the attempt: the layer gives up on it at a crash point and starts a
new attempt while the first one still runs (suspended, it may wake later). That is a pause
(pause.py, FAULTS.md 7) whose restart is the layer's new attempt, so this kind is the pause
kind with three differences:

- where: only at the crash points the program marks, right after each, with a pause
  `faults_env.timeout_chance(index, scope, where)` (the points where a timeout layer with an
  attempt left may give up on an instance of its scope);
- what the new attempt is told: CRASHSWEEP_TIMED_OUT="<index> <scope> <where>", so that it
  records the layer's retry before anything else (the supervisor's record, as the model's
  `World.struck`) and, for scope `run`, begins a new run without reading the checkpoint;
- how it is named and counted: a move `retry` (`move.retry`), as in the model.

It is not one of the registry's fault kinds: a design's timeout layers enable it
(`Nemesis.timeouts`). Like a pause it is not yet a move of the merging sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.realsweep.faults.kind import Passed
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.pause import Pause
from crashsweep.realsweep.probe import faults_env
from crashsweep.spec.retries import MOVE, MOVE_COUNTER


@dataclass(frozen=True)
class TimeoutRetry(Pause):
    """The attempt is given up on at its point and suspended; the layer's new attempt runs beside it."""

    name = MOVE
    doing = "times out an attempt"

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Each crash point after `after` that a timeout chance pause comes right after."""
        found = []
        for passed, pause in pauses:
            detail = faults_env.timeout_detail(pause)
            if detail is None or not 0 < passed <= len(points) or (passed, 0) <= after:
                continue
            point = points[passed - 1]
            found.append(Fault(self, passed, point, points[:passed].count(point), detail=detail))
        return found

    def restart_env(self, fault: Fault) -> dict[str, str]:
        """CRASHSWEEP_TIMED_OUT: the layer and the instance whose retry the new attempt records."""
        return {faults_env.TIMED_OUT: fault.detail}

    def label(self, fault: Fault) -> str:
        """In words: "retry at tool returned create_a on timeout, wake at p2 stopped"."""
        wake = fault.wake_at if fault.wake else "p2 stopped"
        return f"{self.name} at {self.pass_label(fault)} on timeout, wake at {wake}"

    def code(self, fault: Fault) -> str:
        """Its short name, "timeout-3-5": given up on at point 3, woken at the new attempt's point 5."""
        return f"timeout-{fault.index}-{fault.wake}"

    def counter(self, fault: Fault) -> str:
        """`move.retry`, the counter of the model's retry edges."""
        return MOVE_COUNTER


TIMEOUT_RETRY = TimeoutRetry()
