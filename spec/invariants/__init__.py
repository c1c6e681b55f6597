"""The invariants a durable loop must keep, as values judged over a History (spec/HISTORY.md).

no-duplicate: no write of the job has two records, in any state.
no-loss: once the run is done, every write of the job has a record.
well-formed-transcript: no model call is sent a tool call without its result (CONVERSATIONS.md 1).
approved-exactly: every gated write applied under a matching approval, each redeemed once (2).
can-finish: from every reachable state some finished state is reachable (4): fails exactly
where a stuck state is reachable, the explored graph having no cycle.
A check that is never exercised proves nothing, so each has a "sometimes" partner: some
state has a write applied; some run finishes; some conversation with a result is sent; some
approved write is applied.

Each lives in a module of its own (an `Invariant`, value.py) and one line of registry.py. The
names below are the ones the rest of the code has always used: the invariants' names and their
model checks, kept here.
"""

from __future__ import annotations

from crashsweep.spec.invariants import approved_exactly, can_finish, no_duplicate, no_loss, well_formed_transcript
from crashsweep.spec.invariants.common import job_gated, job_writes, stuck
from crashsweep.spec.invariants.registry import INVARIANTS, by_name, extra, registered, witnesses
from crashsweep.spec.invariants.value import Invariant, ModelCheck, Verdict, Violation
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

NO_DUPLICATE = no_duplicate.NAME
NO_LOSS = no_loss.NAME
WELL_FORMED_TRANSCRIPT = well_formed_transcript.NAME
APPROVED_EXACTLY = approved_exactly.NAME
CAN_FINISH = can_finish.NAME
SOME_WRITE_APPLIED = no_duplicate.WITNESS
SOME_RUN_FINISHED = no_loss.WITNESS
SOME_RESULT_SENT = well_formed_transcript.WITNESS
SOME_APPROVED_WRITE = approved_exactly.WITNESS

duplicated = no_duplicate.duplicated
lost = no_loss.lost
some_write_applied = no_duplicate.applied
some_run_finished = no_loss.run_finished
some_result_sent = well_formed_transcript.result_sent
some_approved_write = approved_exactly.approved_write


def not_stuck(world: World) -> bool:
    """The process is not stuck (can-finish fails exactly where a stuck state is reachable)."""
    return stuck(world) is None


def violation(name: str, world: World, job: Job) -> str:
    """The violation of invariant `name` in `world`, in words (its model check's)."""
    model = by_name(name).model
    if model is None:
        raise KeyError(name)
    return model.explain(world, job)


__all__ = [
    "APPROVED_EXACTLY",
    "CAN_FINISH",
    "INVARIANTS",
    "NO_DUPLICATE",
    "NO_LOSS",
    "SOME_APPROVED_WRITE",
    "SOME_RESULT_SENT",
    "SOME_RUN_FINISHED",
    "SOME_WRITE_APPLIED",
    "WELL_FORMED_TRANSCRIPT",
    "Invariant",
    "ModelCheck",
    "Verdict",
    "Violation",
    "by_name",
    "duplicated",
    "extra",
    "job_gated",
    "job_writes",
    "lost",
    "not_stuck",
    "registered",
    "stuck",
    "violation",
    "witnesses",
]
