"""can-finish: from every reachable state some finished state is reachable (CONVERSATIONS.md 4).

The explored graph has no cycle, so it fails exactly where a stuck state is reachable. Over one
History (one scenario): it does not end with a `run_status` event saying the run is stuck.
"""

from __future__ import annotations

from crashsweep.spec.history import STUCK, History
from crashsweep.spec.invariants.common import stuck
from crashsweep.spec.invariants.no_loss import WITNESS, finished, run_finished
from crashsweep.spec.invariants.value import Invariant, ModelCheck, Violation
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

NAME = "can-finish"


def check(history: History) -> Violation | None:
    """The run's stuck status, with why it can never go on."""
    for event in history.events:
        if event.f == "run_status" and event.status == STUCK:
            return Violation(NAME, f"the run can never finish: {event.detail}", (event,))
    return None


def holds(world: World, job: Job) -> bool:
    """The process is not stuck."""
    return stuck(world) is None


def explain(world: World, job: Job) -> str:
    """What the stuck process waits for."""
    return f"the run can never finish: {stuck(world)}"


INVARIANT = Invariant(
    NAME,
    "live",
    WITNESS,
    ("status",),
    "from every reachable state some finished state is reachable",
    check,
    finished,
    ModelCheck(holds, run_finished, explain),
)
