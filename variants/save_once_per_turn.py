"""save-once-per-turn: the simplest durable loop, which saves only when a turn is complete.

    load; Save(start)
    loop: reply = model()                      # asked again after any crash inside a turn
          for call in reply: approve(call) if gated; result = send(call)
          Save(turn k)

A crash after the tracker took a request and before the turn's save loses the reply and the
results: the restart asks the model again and sends every call of the turn again.
"""

from __future__ import annotations

from crashsweep.spec.approval import gate
from crashsweep.spec.design import Design, Env, end_turn, model_turn, needs_model, next_call, startup_save
from crashsweep.spec.ops import Ops, Send
from crashsweep.spec.world import Snapshot


def plan(memory: Snapshot, env: Env) -> Ops:
    """The loop body: ask the model, send each call, save once the turn is complete."""
    if needs_model(memory):
        return model_turn(memory)
    call = next_call(memory, env.job)
    if call is not None:
        return (*gate(call, memory), Send(call.id, keyed=False))
    return end_turn(memory)


DESIGN = Design("save-once-per-turn", "saves once per turn; no reply save, keys or markers", startup_save, plan)
