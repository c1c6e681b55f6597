"""no-loss: once the run is finished, every write of the job has an effect (SEMANTICS.md).

Over a History: when a `run_status` event says the run finished, every expected write has an
`effect` event; the finishing event and the missing calls show a violation. A run that never
finishes (stuck) loses nothing by this rule: can-finish judges it.
"""

from __future__ import annotations

from crashsweep.spec.history import FINISHED, History
from crashsweep.spec.invariants.common import job_writes
from crashsweep.spec.invariants.value import Invariant, ModelCheck, Violation
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

NAME = "no-loss"
WITNESS = "some run finished"


def finished(history: History) -> bool:
    """A run of the history finished."""
    return any(e.f == "run_status" and e.status == FINISHED for e in history.events)


def check(history: History) -> Violation | None:
    """The expected writes with no effect, once a run finished."""
    ends = [e for e in history.events if e.f == "run_status" and e.status == FINISHED]
    if not ends:
        return None
    done = {e.call for e in history.events if e.f == "effect" and e.type == "ok"}
    lost = [call for call in history.expected if call not in done]
    if not lost:
        return None
    return Violation(NAME, "; ".join(f"{call} has no record though the run is done" for call in lost), (ends[-1],))


def lost(world: World, job: Job) -> tuple[str, ...]:
    """The writes with no record (a loss once the run is finished)."""
    count = world.tracker.count
    return tuple(call for call in job_writes(job) if not count(call))


def holds(world: World, job: Job) -> bool:
    """Every write of the job has a record (checked once the run is finished)."""
    return not lost(world, job)


def run_finished(world: World, job: Job) -> bool:
    """The run finished (no-loss had a final world to check)."""
    return world.finished


def explain(world: World, job: Job) -> str:
    """Each lost write."""
    return "; ".join(f"{call} has no record though the run is done" for call in lost(world, job))


INVARIANT = Invariant(
    NAME,
    "at_end",
    WITNESS,
    ("effects", "status"),
    "once the run is done, every write of the job has a record",
    check,
    finished,
    ModelCheck(holds, run_finished, explain),
)
