"""A model world as a History (spec/HISTORY.md 4): what the explorer's state says happened.

The tracker's records are the effects (each carrying, for a gated call, the approval it was
redeemed against: the world's history of approvals, spec/approval.py, pairs the n-th gated
record with the n-th redemption); the person's approvals are grants; the running process's
memory is its conversation (a model call before each turn's reply, the turn's tool calls,
their saved results, and the model call after the last turn once done); a stuck process adds
the refused model call and the run's stuck status, a finished world the finished status.
The explorer judges its states by each invariant's incremental model check; a test holds those
equal to the invariants' checks over this projection, state by state.
"""

from __future__ import annotations

from typing import Any

from crashsweep.spec.approval import GIVEN, MISAPPROVED, REDEEMED, UNAPPROVED
from crashsweep.spec.entries import parts
from crashsweep.spec.history import FINISHED, STUCK, Event, History
from crashsweep.spec.job import Job
from crashsweep.spec.memory import Snapshot
from crashsweep.spec.ops import Stuck, refused
from crashsweep.spec.world import World


def history(world: World, job: Job) -> History:
    """The History of `world` on `job`: effects, approvals, the running process's conversation, the run's status."""
    events: list[Event] = []
    grants = _grants(world, events)
    _effects(world, job, grants, events)
    process = world.process
    why = _stuck(world)
    if process is not None:
        _conversation(process.memory, job, world.runs, why, events)
    if why is not None:
        events.append(_event(events, "", world.runs, "fail", "run_status", status=STUCK, detail=why, src="model"))
    if world.finished:
        events.append(_event(events, "", world.runs, "ok", "run_status", status=FINISHED, src="model"))
    return History(tuple(events), job.writes, job.gated)


def _event(events: list[Event], run: str, incarnation: int, type_: str, f: str, **fields: Any) -> Event:
    return Event(run, incarnation, len(events) + 1, type_, f, **fields)


def _stuck(world: World) -> str | None:
    process = world.process
    if process is None or not process.pending or not isinstance(process.pending[0], Stuck):
        return None
    return process.pending[0].why


def _grants(world: World, events: list[Event]) -> dict[int, str]:
    """The person's approvals as grant events; their entries by number."""
    grants: dict[int, str] = {}
    for struck in world.struck:
        if struck.startswith(GIVEN):
            number, run, kept = struck[len(GIVEN) :].split(" ", 2)
            call, version, _ = parts(kept + "#0")
            grants[int(number)] = f"{kept}#{number}"
            events.append(
                _event(
                    events,
                    run,
                    0,
                    "ok",
                    "approval_grant",
                    call=call,
                    args_digest=f"v{version}",
                    approval=grants[int(number)],
                    src="person",
                )
            )
    return grants


def _redemptions(world: World, grants: dict[int, str]) -> list[tuple[str, str]]:
    """(approval entry or "", arguments' version "vN") of each gated record, in the order applied."""
    found: list[tuple[str, str]] = []
    after_misapproved = False
    for struck in world.struck:
        if struck.startswith(UNAPPROVED):
            found.append(("", "v" + struck[len(UNAPPROVED) :].rpartition("@")[2]))
        elif struck.startswith(MISAPPROVED):
            sent, _, kept = struck[len(MISAPPROVED) :].partition(" under ")
            found.append((kept, "v" + sent.rpartition("@")[2]))
            after_misapproved = True
            continue
        elif struck.startswith(REDEEMED) and not after_misapproved:
            kept = grants[int(struck[len(REDEEMED) :])]
            found.append((kept, f"v{parts(kept)[1]}"))
        after_misapproved = False
    return found


def _effects(world: World, job: Job, grants: dict[int, str], events: list[Event]) -> None:
    """The tracker's records as effects, a gated call's carrying its approval and arguments' version."""
    gated = set(job.gated)
    redeemed = iter(_redemptions(world, grants))
    for number, record in enumerate(world.tracker.records, 1):
        kept, version = next(redeemed, ("", "")) if record.call in gated else ("", "")
        events.append(
            _event(
                events,
                record.run,
                0,
                "ok",
                "effect",
                call=record.call,
                effect_id=f"#{number}",
                approval=kept,
                args_digest=version,
                src="tracker",
            )
        )


def _conversation(memory: Snapshot, job: Job, incarnation: int, why: str | None, events: list[Event]) -> None:
    """The process's conversation: each reply's model call, its tool calls and saved results; a refused call.

    A turn trimmed away (spec/trim.py) is left out; one whose reply alone was trimmed keeps its results.
    """
    run = memory.run
    for turn in memory.turns:
        if turn.trimmed == 2:
            continue
        if not turn.trimmed:
            events.append(_event(events, run, incarnation, "invoke", "model_call", src="model"))
        for call in job.turns[turn.index - 1]:
            if not turn.trimmed:
                events.append(
                    _event(
                        events,
                        run,
                        incarnation,
                        "invoke",
                        "tool_call",
                        call=call.id,
                        call_id=call.id + turn.ids,
                        tool=call.tool,
                        args_digest=f"v{turn.args}",
                        src="model",
                    )
                )
            if turn.result(call.id) is not None:
                events.append(
                    _event(
                        events,
                        run,
                        incarnation,
                        "ok",
                        "result_saved",
                        call=call.id,
                        call_id=call.id + turn.ids,
                        src="memory",
                    )
                )
    asked = refused(why)  # else stuck before any request (a consumed approval)
    if memory.done or asked:
        events.append(_event(events, run, incarnation, "invoke", "model_call", src="model"))
    if asked:
        events.append(_event(events, run, incarnation, "fail", "model_call", detail=why, src="model"))
