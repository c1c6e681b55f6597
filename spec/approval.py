"""The approval gate: a write marked `approval = true` waits for a person before it is sent.

The request goes to a person (crash point `approval requested <call>`: the person is deciding),
the decision arrives (`approved <call>`), and Save(approval <call>) makes it durable. A crash
before that save loses the decision, and the restarted loop asks again. Approvals are counted
apart from the resolution ladder's questions. See SITUATIONS.md.
"""

from __future__ import annotations

from crashsweep.spec.job import Call
from crashsweep.spec.ops import Ops, RequestApproval
from crashsweep.spec.save import save
from crashsweep.spec.world import Snapshot


def gate(call: Call, memory: Snapshot) -> Ops:
    """The instructions that pass `call`'s approval gate, or none when it has none or is approved."""
    turn = memory.last
    if not call.approval or (turn is not None and call.id in turn.approved):
        return ()
    return (RequestApproval(call.id), *save(f"approval {call.id}"))
