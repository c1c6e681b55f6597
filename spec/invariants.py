"""The invariants a durable loop must keep, each with the witness that shows it was exercised.

no-duplicate: no write of the job has two records, in any state.
no-loss: once the run is done, every write of the job has a record.
well-formed-transcript: no model call is sent a tool call without its result (CONVERSATIONS.md 1).
approved-exactly: every gated write applied under a matching approval, each redeemed once (2).
can-finish: from every reachable state some finished state is reachable (4): fails exactly
where a stuck state is reachable, the explored graph having no cycle.
A check that is never exercised proves nothing, so each has a "sometimes" partner: some
state has a write applied; some run finishes; some conversation with a result is sent; some
approved write is applied.

The explorer checks no-duplicate in every state, so it must not scan: the tracker counts the
calls that have more than one record as records are added (`Tracker.duplicated`), and while
that count is zero no write can be duplicated. Only a world with a duplicate looks further.
"""

from __future__ import annotations

from crashsweep.spec import approval
from crashsweep.spec.job import Job
from crashsweep.spec.ops import Stuck
from crashsweep.spec.world import World

NO_DUPLICATE = "no-duplicate"
NO_LOSS = "no-loss"
WELL_FORMED_TRANSCRIPT = "well-formed-transcript"
APPROVED_EXACTLY = "approved-exactly"
CAN_FINISH = "can-finish"
SOME_WRITE_APPLIED = "some write applied"
SOME_RUN_FINISHED = "some run finished"
SOME_RESULT_SENT = "some conversation with a result sent"
SOME_APPROVED_WRITE = "some approved write applied"


_WRITES: dict[int, tuple[Job, tuple[str, ...]]] = {}


def job_writes(job: Job) -> tuple[str, ...]:
    """`job.writes`, computed once per job (a job is frozen; the entry keeps it alive, so its id is unique)."""
    known = _WRITES.get(id(job))
    if known is None or known[0] is not job:
        if len(_WRITES) >= 64:
            _WRITES.clear()
        known = _WRITES[id(job)] = (job, job.writes)
    return known[1]


_GATED: dict[int, tuple[Job, tuple[str, ...]]] = {}


def job_gated(job: Job) -> tuple[str, ...]:
    """`job.gated`, computed once per job (as `job_writes`): approved-exactly is checked in every state."""
    known = _GATED.get(id(job))
    if known is None or known[0] is not job:
        if len(_GATED) >= 64:
            _GATED.clear()
        known = _GATED[id(job)] = (job, job.gated)
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


def stuck(world: World) -> str | None:
    """Why the process can never go on, or None (spec/CONVERSATIONS.md 4)."""
    process = world.process
    if process is None or not process.pending or not isinstance(process.pending[0], Stuck):
        return None
    return process.pending[0].why


def well_formed_transcript(world: World, job: Job) -> bool:
    """No model call was sent a tool call without its result (the one such request leaves the process stuck)."""
    return stuck(world) is None


def approved_exactly(world: World, job: Job) -> bool:
    """Every gated write's record was applied under a matching approval, each redeemed at most once."""
    return not job_gated(job) or not approval.broken(world, job)


def some_result_sent(world: World, job: Job) -> bool:
    """Some model call was sent a conversation holding a tool result (the request after a tool turn)."""
    process = world.process
    if not job.turns:
        return True
    if process is None:
        return False
    memory = process.memory
    return memory.size >= 2 or (memory.done and memory.size >= 1)


def some_approved_write(world: World, job: Job) -> bool:
    """Some gated write has a record (approved-exactly had something to check)."""
    count = world.tracker.count
    gated = job_gated(job)
    return not gated or any(count(call) for call in gated)


def not_stuck(world: World) -> bool:
    """The process is not stuck (can-finish fails exactly where a stuck state is reachable: CONVERSATIONS.md 4)."""
    return stuck(world) is None


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
    if name == WELL_FORMED_TRANSCRIPT:
        return f"the model was sent a tool call without its result ({stuck(world)})"
    if name == APPROVED_EXACTLY:
        return "; ".join(approval.broken(world, job))
    if name == CAN_FINISH:
        return f"the run can never finish: {stuck(world)}"
    raise KeyError(name)
