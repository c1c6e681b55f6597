"""save-after-reply: save the model's reply before running its calls, and each result after.

    load; Save(start)
    loop: reply = model(); Save(reply k)       # call IDs are durable before any call goes out
          for call in reply without a result:
              approve(call) if gated; result = send(call); Save(result call)
          Save(turn k)

The window shrinks to one call: a crash after the tracker accepted a write and before its
result save makes the restart send that write again.
"""

from __future__ import annotations

from crashsweep.spec.approval import gate
from crashsweep.spec.design import Design, Env, end_turn, model_turn, needs_model, next_call, reply_save, startup_save
from crashsweep.spec.ops import Ops, Send
from crashsweep.spec.save import save_result
from crashsweep.spec.world import Snapshot


def loop(memory: Snapshot, env: Env, *, keyed: bool) -> Ops:
    """The loop body; `keyed` sends every write with Key(run, call)."""
    if needs_model(memory):
        return model_turn(memory, after_reply=reply_save(memory))
    call = next_call(memory, env.job)
    if call is not None:
        return (*gate(call, memory), Send(call.id, keyed), *save_result(call.id))
    return end_turn(memory)


def plan(memory: Snapshot, env: Env) -> Ops:
    """save-after-reply's loop body: no keys."""
    return loop(memory, env, keyed=False)


DESIGN = Design("save-after-reply", "saves the reply before its calls and each result after", startup_save, plan)
