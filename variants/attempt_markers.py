"""attempt-markers: save a marker before each write; settle a marker without a result on the ladder.

    load; Save(start)
    loop: reply = model(); Save(reply k)
          for call in reply without a result:
              if call has a marker: result = settle(call)       # the resolution ladder
              else:
                  if call writes: approve(call) if gated; mark(call); Save(marker call)
                  result = send(call)
              Save(result call)
          Save(turn k)

Without keys a marked write is not harmless to repeat, so the ladder asks a person.
"""

from __future__ import annotations

from crashsweep.spec.approval import gate
from crashsweep.spec.design import Design, Env, end_turn, model_turn, needs_model, next_call, reply_save, startup_save
from crashsweep.spec.ladder import settle
from crashsweep.spec.ops import Mark, Ops, Send
from crashsweep.spec.save import save_marker, save_result
from crashsweep.spec.world import Snapshot


def loop(memory: Snapshot, env: Env, *, keyed: bool) -> Ops:
    """The loop body; `keyed` sends every write with Key(run, call)."""
    if needs_model(memory):
        return model_turn(memory, after_reply=reply_save(memory))
    call = next_call(memory, env.job)
    if call is None:
        return end_turn(memory)
    assert memory.last is not None
    if call.id in memory.last.marked:
        attempt = settle(call, keyed, env.tracker)
    elif call.writes:
        attempt = (*gate(call, memory), Mark(call.id), *save_marker(call.id), Send(call.id, keyed))
    else:
        attempt = (Send(call.id, keyed),)
    return (*attempt, *save_result(call.id))


def plan(memory: Snapshot, env: Env) -> Ops:
    """attempt-markers' loop body: markers, no keys."""
    return loop(memory, env, keyed=False)


DESIGN = Design(
    "attempt-markers", "markers before writes, no keys: unknown outcomes go to a person", startup_save, plan
)
