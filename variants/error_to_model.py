"""error-to-model: idempotency-keys, but a tool error goes back to the model, as naive loops do.

    load; Save(start)
    loop: reply = model(); Save(reply k)
          for call in reply without a result:
              if the call's tool failed:                        # outcome unknown
                  retry = model(error)                           # a new call ID: call.retry
                  result = send(call, key=Key(run, call.retry))
              else: approve(call) if gated; result = send(call, key=Key(run, call))
              Save(result call)
          Save(turn k)

The retry is the same effect under a new call ID, so it carries a new key: when the failure
struck after the tracker applied the write (`fails_after_accept`), the tracker applies it
again, keys or no keys. Compare agent-loop, which settles the same failure on the ladder.
"""

from __future__ import annotations

from crashsweep.spec.approval import gate
from crashsweep.spec.design import Design, Env, end_turn, model_turn, needs_model, next_call, reply_save, startup_save
from crashsweep.spec.ops import Ops, RetryViaModel, Send
from crashsweep.spec.save import save_result
from crashsweep.spec.world import Snapshot


def plan(memory: Snapshot, env: Env) -> Ops:
    """The loop body: a failed call is handed to the model, which retries it under a new ID."""
    if needs_model(memory):
        return model_turn(memory, after_reply=reply_save(memory))
    call = next_call(memory, env.job)
    if call is None:
        return end_turn(memory)
    assert memory.last is not None
    if call.id in memory.last.failed:
        return (RetryViaModel(call.id), *save_result(call.id))
    return (*gate(call, memory), Send(call.id, keyed=True), *save_result(call.id))


DESIGN = Design(
    "error-to-model", "idempotency-keys that hands a tool error to the model, which retries anew", startup_save, plan
)
