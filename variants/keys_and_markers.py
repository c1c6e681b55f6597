"""keys-and-markers: attempt markers, and every write carries Key(run ID, call ID).

    load; Save(start)
    loop: reply = model(); Save(reply k)
          for call in reply without a result:
              if call has a marker: result = settle(call)   # rung 1: a keyed write is harmless
              else:
                  if call writes: approve(call) if gated; mark(call); Save(marker call)
                  result = send(call, key=Key(run, call))
              Save(result call)
          Save(turn k)

The key makes every marked write harmless to repeat, so the ladder never reaches a person.
"""

from __future__ import annotations

from crashsweep.spec.design import Design, Env, startup_save
from crashsweep.spec.ops import Ops
from crashsweep.spec.world import Snapshot
from crashsweep.variants.attempt_markers import loop


def plan(memory: Snapshot, env: Env) -> Ops:
    """The loop body of attempt-markers, with keys."""
    return loop(memory, env, keyed=True)


DESIGN = Design("keys-and-markers", "markers before writes and keys on every write", startup_save, plan)
