"""What a loop design is, and the building blocks its loop body is written with.

A design answers two questions: what a process does right after it loads an unfinished run
(`start`), and what it does next given what it holds in memory (`plan`, the loop body). The
process runs the instructions `plan` returns, then asks it again. The helpers below are the
parts every loop shares (section 4 of SEMANTICS.md); the variants arrange them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from crashsweep.spec.job import Call, Job
from crashsweep.spec.ops import CallModel, CompleteTurn, Exit, Ops
from crashsweep.spec.retries import Stack
from crashsweep.spec.save import save
from crashsweep.spec.tracker import TrackerKind
from crashsweep.spec.world import Snapshot


@dataclass(frozen=True, slots=True)
class Env:
    """What a design runs against: the scripted job, the kind of tracker, and the environment's faults.

    `faults` names the fault kinds the adversary may inject beside crashes (spec/faults.py);
    `fresh_ids` says the model hands out new call IDs on every request (spec/FAULTS.md). With
    neither, the environment is the seed's: crashes only, stable call IDs.
    """

    job: Job
    tracker: TrackerKind
    faults: tuple[str, ...] = ()
    fresh_ids: bool = False


@dataclass(frozen=True, slots=True)
class Design:
    """A loop design: its CLI name, a one-line summary, its start and its loop body.

    `fsync` is its fsync policy and `unreadable` what it does on finding the checkpoint
    unreadable (spec/FAULTS.md section 6): by default the seed's save and a refusal to start.
    `retries` are the retry layers around it, innermost first (spec/RETRIES.md): none by default.
    The last seven are the conversation's fields (spec/CONVERSATIONS.md), at what every design
    did before unless a policy says otherwise.
    """

    name: str
    summary: str
    start: Callable[[Env], Ops]
    plan: Callable[[Snapshot, Env], Ops]
    fsync: str = "none"
    unreadable: str = "ask-person"
    retries: Stack = ()
    transcript_on_restart: str = "resume-pending"
    approval_binding: str = "call-and-args"
    approval_storage: str = "durable"
    resume_granularity: str = "step"
    approval_consume: str = "after-resume-started"
    persist_granularity: str = "per-call"
    transcript_repair: str = "none"


def startup_save(env: Env) -> Ops:
    """The usual start: Save(start), which makes a fresh run ID durable before any request."""
    return save("start")


def model_turn(memory: Snapshot, after_reply: Ops = ()) -> Ops:
    """Call the model: after a reply with calls, `after_reply`; after the final answer, Save(final) and exit."""
    return _model_turn(after_reply)


@lru_cache(maxsize=1 << 12)
def _model_turn(after_reply: Ops) -> Ops:
    # One shared tuple per `after_reply` (the instructions are frozen values).
    return (CallModel(after_reply=after_reply, after_final=(*save("final"), Exit())),)


def reply_save(memory: Snapshot) -> Ops:
    """Save(reply k) for the reply that is about to become turn k."""
    return save(f"reply {memory.size + 1}")


def next_call(memory: Snapshot, job: Job) -> Call | None:
    """The first call of the last turn that has no result yet, or None."""
    turn = memory.last
    if turn is None:
        return None
    for call in job.turns[turn.index - 1]:
        if turn.result(call.id) is None:
            return call
    return None


def needs_model(memory: Snapshot) -> bool:
    """Whether the loop must ask the model: no turn yet, or the last one is complete."""
    return memory.last is None or memory.last.complete


def end_turn(memory: Snapshot) -> Ops:
    """Mark the last turn complete and Save(turn k): every design does this."""
    assert memory.last is not None
    return (CompleteTurn(), *save(f"turn {memory.last.index}"))
