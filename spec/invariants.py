"""The invariants a durable loop must keep, each with the witness that shows it was exercised.

no-duplicate: no write of the job has two records, in any state.
no-loss: once the run is done, every write of the job has a record.
A check that is never exercised proves nothing, so each has a "sometimes" partner: some
state has a write applied; some run finishes.

The explorer checks no-duplicate in every state, so it must not scan: the tracker counts the
calls that have more than one record as records are added (`Tracker.duplicated`), and while
that count is zero no write can be duplicated. Only a world with a duplicate looks further.
"""

from __future__ import annotations

from crashsweep.spec.job import Job
from crashsweep.spec.world import World

NO_DUPLICATE = "no-duplicate"
NO_LOSS = "no-loss"
SOME_WRITE_APPLIED = "some write applied"
SOME_RUN_FINISHED = "some run finished"


_WRITES: dict[int, tuple[Job, tuple[str, ...]]] = {}


def job_writes(job: Job) -> tuple[str, ...]:
    """`job.writes`, computed once per job (a job is frozen; the entry keeps it alive, so its id is unique)."""
    known = _WRITES.get(id(job))
    if known is None or known[0] is not job:
        if len(_WRITES) >= 64:
            _WRITES.clear()
        known = _WRITES[id(job)] = (job, job.writes)
    return known[1]


def duplicated(world: World, job: Job) -> tuple[str, ...]:
    """The writes that have more than one record."""
    tracker = world.tracker
    if not tracker.duplicated:
        return ()
    return tuple(call for call in job_writes(job) if tracker.count(call) > 1)


def lost(world: World, job: Job) -> tuple[str, ...]:
    """The writes with no record (a loss once the run is finished)."""
    count = world.tracker.count
    return tuple(call for call in job_writes(job) if not count(call))


def no_duplicate(world: World, job: Job) -> bool:
    """No write of the job has two records."""
    return not world.tracker.duplicated or not duplicated(world, job)


def no_loss(world: World, job: Job) -> bool:
    """Every write of the job has a record (checked once the run is finished)."""
    return not lost(world, job)


def some_write_applied(world: World, job: Job) -> bool:
    """The tracker holds at least one record (no-duplicate had something to check)."""
    return world.tracker.size > 0 or not job.writes


def some_run_finished(world: World, job: Job) -> bool:
    """The run finished (no-loss had a final world to check)."""
    return world.finished


def violation(name: str, world: World, job: Job) -> str:
    """The violation of invariant `name` in `world`, in words."""
    if name == NO_DUPLICATE:
        parts = []
        for call in duplicated(world, job):
            numbers = [f"#{n}" for n, r in enumerate(world.tracker.records, 1) if r.call == call]
            parts.append(f"{call} has {len(numbers)} records: {' and '.join(numbers)}")
        return "; ".join(parts)
    if name == NO_LOSS:
        return "; ".join(f"{call} has no record though the run is done" for call in lost(world, job))
    raise KeyError(name)
