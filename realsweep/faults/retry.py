"""The move `retry` for real (spec/RETRIES.md 1.4): an attempt fails where a retry layer catches it.

A program with retry layers knows, before it sends a write, whether a layer would catch a
failure of it (the layers' spent attempts are the supervisor's record, in its world): it
marks each such chance with a pause, `faults_env.retry_chance(layer, call)`, passed just
before the write's `tracker accepted <call>`. The move strikes there: the process is started
with CRASHSWEEP_FAIL_ATTEMPT="k:<call>" (probe/faults_env.py), its k-th write of <call> is
applied by the tracker and its reply dropped, the process sees the tool fail (`tool failed
<call>`, by which the sweep sees it struck) and its layer retries. It is a lost reply in how
it is carried out, and differs in where it may strike (only where a layer catches) and in how
it is counted (`move.retry`, as the model's retry edges).

It is not one of the registry's fault kinds (spec/faults.py has none of its name): a design's
layers enable it, not `--faults`, as in the model (the nemesis adds it with `retries`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.realsweep.faults.kind import Passed
from crashsweep.realsweep.faults.lost_reply import ACCEPTED, LostReply
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.probe import faults_env
from crashsweep.spec.retries import MOVE, MOVE_COUNTER


@dataclass(frozen=True)
class Retry(LostReply):
    """The attempt fails after the tracker applied its write, and a retry layer catches it."""

    name = MOVE

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Each `tracker accepted <call>` pass after `after` that a retry chance pause comes right before.

        Not a pass whose tool failed anyway (the job's `fails_after_accept`: no move needed,
        RETRIES.md 1.4), nor a chance whose write was never applied (the process stopped).
        """
        found = []
        for passed, name in pauses:
            call = faults_env.retry_call(name)
            i = passed + 1
            if call is None or i > len(points) or points[passed] != f"{ACCEPTED}{call}" or (i, 0) <= after:
                continue
            if tuple(points[i : i + 1]) == (f"tool failed {call}",):
                continue
            found.append(Fault(self, i, points[passed], points[:i].count(points[passed])))
        return found

    def env(self, faults: Sequence[Fault]) -> dict[str, str]:
        """CRASHSWEEP_FAIL_ATTEMPT: one line "k:<call>" per failed attempt."""
        failed = [f"{f.occurrence}:{f.point[len(ACCEPTED) :]}" for f in faults]
        return {faults_env.FAIL_ATTEMPT: "\n".join(failed)} if failed else {}

    def counter(self, fault: Fault) -> str:
        """`move.retry`, the counter of the model's retry edges."""
        return MOVE_COUNTER


RETRY = Retry()
