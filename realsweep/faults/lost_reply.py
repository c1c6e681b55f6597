"""lost-reply for real (spec/FAULTS.md section 2): the tracker applies a write and its reply is lost.

It may strike at each pass of a `tracker accepted <call>` point. The process is started with
CRASHSWEEP_LOSE_REPLY="k:<call>" (one line per lost reply, probe/faults_env.py); its k-th write
of <call> asks the tracker to apply the write and lose the reply, and the process sees a
transport error: its next point is `tool failed <call>`, by which the sweep sees it struck.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.realsweep.faults.kind import AtPoint, Passed
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.probe.faults_env import LOSE_REPLY
from crashsweep.spec import faults as model

ACCEPTED = model.ACCEPTED
"""The prefix of the points where the tracker has applied a write: "tracker accepted "."""


@dataclass(frozen=True)
class LostReply(AtPoint):
    """The reply to an applied write is lost: the process gets a transport error and goes on."""

    name = model.LOST_REPLY.name
    in_process = True
    fails_tool_calls = True

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Each pass of a `tracker accepted` point after `after` (a pass at or before it already lost its reply).

        Not a pass whose tool failed anyway (`tool failed` follows it with no fault struck: the
        job's `fails_after_accept`, whose first request's answer is the error, SITUATIONS.md 2).
        """
        return [
            Fault(self, i, point, points[:i].count(point))
            for i, point in enumerate(points, start=1)
            if point.startswith(ACCEPTED)
            and (i, 0) > after
            and tuple(points[i : i + 1]) != (f"tool failed {point[len(ACCEPTED) :]}",)
        ]

    def env(self, faults: Sequence[Fault]) -> dict[str, str]:
        """CRASHSWEEP_LOSE_REPLY: one line "k:<call>" per lost reply."""
        lost = [f"{f.occurrence}:{f.point[len(ACCEPTED) :]}" for f in faults]
        return {LOSE_REPLY: "\n".join(lost)} if lost else {}

    def struck(self, fault: Fault, points: Sequence[str], pauses: Passed) -> bool:
        """Its point is followed by `tool failed <call>`, not `tool returned <call>`."""
        call = fault.point[len(ACCEPTED) :]
        return tuple(points[fault.index - 1 : fault.index + 1]) == (fault.point, f"tool failed {call}")

    def label(self, fault: Fault) -> str:
        """In words: "lost-reply at tracker accepted create_a#2" (#k past the first pass)."""
        return f"{self.name} at {self.pass_label(fault)}"


LOST_REPLY = LostReply()
