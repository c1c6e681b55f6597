"""What several invariants' model checks read: the job's writes and gated calls (kept), and a stuck process."""

from __future__ import annotations

from crashsweep.spec.job import Job
from crashsweep.spec.ops import Stuck
from crashsweep.spec.world import World

_WRITES: dict[int, tuple[Job, tuple[str, ...]]] = {}
_GATED: dict[int, tuple[Job, tuple[str, ...]]] = {}


def job_writes(job: Job) -> tuple[str, ...]:
    """`job.writes`, computed once per job (a job is frozen; the entry keeps it alive, so its id is unique)."""
    known = _WRITES.get(id(job))
    if known is None or known[0] is not job:
        if len(_WRITES) >= 64:
            _WRITES.clear()
        known = _WRITES[id(job)] = (job, job.writes)
    return known[1]


def job_gated(job: Job) -> tuple[str, ...]:
    """`job.gated`, computed once per job (as `job_writes`): approved-exactly is checked in every state."""
    known = _GATED.get(id(job))
    if known is None or known[0] is not job:
        if len(_GATED) >= 64:
            _GATED.clear()
        known = _GATED[id(job)] = (job, job.gated)
    return known[1]


def stuck(world: World) -> str | None:
    """Why the process can never go on, or None (spec/CONVERSATIONS.md 4)."""
    process = world.process
    if process is None or not process.pending or not isinstance(process.pending[0], Stuck):
        return None
    return process.pending[0].why
