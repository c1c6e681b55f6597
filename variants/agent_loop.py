"""agent-loop: the agent's own loop (SEMANTICS.md section 9): a run lock, markers and keys.

    load; if unfinished (or none): take the lock; Save(start)
    loop: reply = model()                          # no reply save: the first marker saves it
          for call in reply without a result:
              if call has a marker: result = settle(call)     # the resolution ladder
              else:
                  if call writes: approve(call) if gated; mark(call); Save(marker call)
                  result = send(call, key=Key(run, call))
              if call writes: Save(result call)   # a read is harmless to repeat: no save
          Save(turn k)

Against a keyed tracker rung 1 settles every marker; against a keyless one only reads pass
rung 1, and a marked write goes to the tracker's lookup if it has one, else to a person.
"""

from __future__ import annotations

from crashsweep.spec.approval import gate
from crashsweep.spec.design import Design, Env, end_turn, model_turn, needs_model, next_call, startup_save
from crashsweep.spec.ladder import settle
from crashsweep.spec.ops import Mark, Ops, Send
from crashsweep.spec.save import save_marker, save_result, take_lock
from crashsweep.spec.world import Snapshot


def start(env: Env) -> Ops:
    """Take the run's lock, then the usual startup save."""
    return (*take_lock(), *startup_save(env))


def plan(memory: Snapshot, env: Env) -> Ops:
    """The agent's loop body."""
    if needs_model(memory):
        return model_turn(memory)
    call = next_call(memory, env.job)
    if call is None:
        return end_turn(memory)
    assert memory.last is not None
    if call.id in memory.last.marked:
        attempt = settle(call, True, env.tracker)
    elif call.writes:
        attempt = (*gate(call, memory), Mark(call.id), *save_marker(call.id), Send(call.id, keyed=True))
    else:
        attempt = (Send(call.id, keyed=True),)
    return (*attempt, *save_result(call.id)) if call.writes else attempt


DESIGN = Design("agent-loop", "the agent's own loop: run lock, markers, keys, no reply save", start, plan)
