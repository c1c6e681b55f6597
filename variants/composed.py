"""The loop body composed from a policy record: one loop that every policy in spec/policy.py drives.

    load; [take the lock]; [Save(start)]
    loop: reply = model(); [Save(reply k)]
          for call in reply without a result:
              if its tool failed and on_tool_error = "model":
                  retry = model(error); result = send(call, key as call.retry)
              elif call has a marker: result = the first rung of the ladder that applies
              else:
                  approve(call) if gated
                  if call writes and markers: mark(call); Save(marker call)
                  result = send(call[, key=Key(run, call)])
              [Save(result call)]                 # each call, or writes only
          complete the turn; [Save(turn k)]       # unless result_saves = "none"

Each bracket is one field of the policy (spec/POLICIES.md). The instructions are the same
values, in the same order, that the hand-written designs return, so a preset and its
hand-written design reach the very same worlds.
"""

from __future__ import annotations

from functools import partial

from crashsweep.spec.approval import gate
from crashsweep.spec.design import Design, Env, end_turn, model_turn, needs_model, next_call, reply_save, startup_save
from crashsweep.spec.job import Call
from crashsweep.spec.ladder import harmless_to_repeat
from crashsweep.spec.ops import AskPerson, CompleteTurn, Lookup, Mark, Ops, RetryViaModel, Send, TakeLease, TakeOsLock
from crashsweep.spec.policy import Policy
from crashsweep.spec.save import save_marker, save_result, take_lock
from crashsweep.spec.tracker import TrackerKind
from crashsweep.spec.world import Snapshot


def start(env: Env, policy: Policy) -> Ops:
    """The lock (if any), then the startup save (if any)."""
    lock = _LOCKS[policy.lock]
    return (*lock, *startup_save(env)) if policy.startup_save else lock


_LOCKS: dict[str, Ops] = {"file": take_lock(), "none": (), "os-lock": (TakeOsLock(),), "lease+fencing": (TakeLease(),)}
"""What each lock policy does at a start (POLICIES.md 1.6): a lock file, nothing, the OS lock, a lease."""


def settle(call: Call, policy: Policy, tracker: TrackerKind) -> Ops:
    """The first rung of the policy's ladder that applies to `call` (the ladder ends with a person)."""
    for rung in policy.ladder:
        if rung == "rerun-when-harmless" and harmless_to_repeat(call, policy.keyed, tracker):
            return (Send(call.id, policy.keyed, rerun=True),)
        if rung == "lookup" and tracker.lookup:
            return (Lookup(call.id, policy.keyed),)
        if rung == "person":
            return (AskPerson(call.id, policy.keyed),)
    raise AssertionError(f"ladder {policy.ladder!r} settled nothing")  # refused by Policy


def attempt(call: Call, memory: Snapshot, env: Env, policy: Policy) -> Ops:
    """How the loop gets `call`'s result: a retry via the model, the ladder, or a (marked) send."""
    assert memory.last is not None
    if policy.on_tool_error == "model" and call.id in memory.last.failed:
        return (RetryViaModel(call.id, policy.keyed),)
    if policy.ladder and call.id in memory.last.marked:  # no ladder, no marker read (RETRIES.md 2, rule 5)
        return settle(call, policy, env.tracker)
    if call.writes and policy.markers == "before-writes":
        return (*gate(call, memory), Mark(call.id), *save_marker(call.id), Send(call.id, policy.keyed))
    return (*gate(call, memory), Send(call.id, policy.keyed))


def plan(memory: Snapshot, env: Env, policy: Policy) -> Ops:
    """The composed loop body."""
    if needs_model(memory):
        after = reply_save(memory) if policy.reply_save == "before-first-send" else ()
        return model_turn(memory, after_reply=after)
    call = next_call(memory, env.job)
    if call is None:
        return (CompleteTurn(),) if policy.result_saves == "none" else end_turn(memory)
    saved = policy.result_saves == "each-call" or (policy.result_saves == "writes-only" and call.writes)
    return (*attempt(call, memory, env, policy), *(save_result(call.id) if saved else ()))


def compose(name: str, summary: str, policy: Policy) -> Design:
    """The design named `name` whose start and loop body follow `policy`."""
    start_, plan_ = partial(start, policy=policy), partial(plan, policy=policy)
    return Design(
        name,
        summary,
        start_,
        plan_,
        fsync=policy.fsync,
        unreadable=policy.unreadable,
        retries=policy.retries,
        transcript_on_restart=policy.transcript_on_restart,
        approval_binding=policy.approval_binding,
        approval_storage=policy.approval_storage,
        resume_granularity=policy.resume_granularity,
        approval_consume=policy.approval_consume,
        persist_granularity=policy.persist_granularity,
        transcript_repair=policy.transcript_repair,
    )
