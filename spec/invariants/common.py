"""What several invariants' model checks read: the job's writes and gated calls (kept), and a stuck process."""

from __future__ import annotations

from crashsweep.spec.job import Job
from crashsweep.spec.running import stuck_why
from crashsweep.spec.world import World

_KEPT: dict[tuple[int, str], tuple[Job, tuple[str, ...]]] = {}


def _kept(job: Job, what: str) -> tuple[str, ...]:
    """`job.<what>` (writes, gated), computed once per job: invariants are checked in every state.

    A job is frozen, and the entry keeps it alive, so its id is unique while the entry is there.
    """
    known = _KEPT.get((id(job), what))
    if known is None or known[0] is not job:
        if len(_KEPT) >= 128:
            _KEPT.clear()
        known = _KEPT[(id(job), what)] = (job, getattr(job, what))
    return known[1]


def job_writes(job: Job) -> tuple[str, ...]:
    """`job.writes`, computed once per job."""
    return _kept(job, "writes")


def job_gated(job: Job) -> tuple[str, ...]:
    """`job.gated`, computed once per job."""
    return _kept(job, "gated")


def stuck(world: World) -> str | None:
    """Why the process can never go on, or None (spec/CONVERSATIONS.md 4)."""
    return stuck_why(world.process)
