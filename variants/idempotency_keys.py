"""idempotency-keys: save-after-reply, and every write carries Key(run ID, call ID).

    load; Save(start)
    loop: reply = model(); Save(reply k)
          for call in reply without a result:
              result = send(call, key=Key(run, call)); Save(result call)
          Save(turn k)

A resent write carries the key its first attempt carried, so a tracker that honours keys
hands back its first answer and changes nothing: no duplicate at any crash point.
"""

from __future__ import annotations

from crashsweep.spec.design import Design, Env, startup_save
from crashsweep.spec.ops import Ops
from crashsweep.spec.world import Snapshot
from crashsweep.variants.save_after_reply import loop


def plan(memory: Snapshot, env: Env) -> Ops:
    """The loop body of save-after-reply, with keys."""
    return loop(memory, env, keyed=True)


DESIGN = Design("idempotency-keys", "save-after-reply plus an idempotency key on every write", startup_save, plan)
