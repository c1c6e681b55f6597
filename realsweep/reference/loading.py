"""What a start of the composed loop makes of the checkpoint it loaded, before the design's start (spec/loading.py).

The reference loop's memory is plain data (parts.py); these are the model's load rules on it,
each applied at every load of the checkpoint (a restart, a timeout layer's new attempt), never
to a new run:

- `approval_storage = "memory"`: no save wrote an approval, so none is loaded (CONVERSATIONS.md 2);
- `persist_granularity = "per-batch"`: a reply's calls are read back whole or not at all, so a
  last turn with a call lacking its result loses every result and marker (section 6; the loop
  keeps no failure in memory); its reply, call IDs, arguments' version and approvals stay;
- `transcript_repair = "both-directions"`: a turn whose reply was trimmed out of the
  conversation (`trim-context`, faults/trim_context.py) leaves it; the loop keeps it as its
  record of what was done (section 7).

What the start then does with a call left without its result (`transcript_on_restart`, and the
repair `transcript_repair` adds) is loop.py's, after the design's start.
"""

from __future__ import annotations

from typing import Any

from crashsweep.realsweep.reference.approvals import forget
from crashsweep.spec.job import Job
from crashsweep.spec.policy import Policy

TRIMMED = "trimmed"
"""A turn's entry for what the conversation keeps of it (faults/trim_context.py): 1, its results alone; 2, nothing."""


def loaded(memory: dict[str, Any], job: Job, policy: Policy) -> None:
    """Apply the design's load rules to the memory a start loaded, in place."""
    if policy.approval_storage == "memory":
        forget(memory)
    if policy.persist_granularity == "per-batch":
        batch_reset(memory, job)
    if policy.transcript_repair == "both-directions":
        untrim(memory)


def batch_reset(memory: dict[str, Any], job: Job) -> None:
    """Forget a half-done last batch: every result and marker of a last turn with a call lacking its result."""
    turns = memory.get("turns") or []
    if not turns or turns[-1]["complete"]:
        return
    last = turns[-1]
    if all(call.id in last["results"] for call in job.turns[last["index"] - 1]):
        return
    last["results"].clear()
    last["marked"].clear()


def untrim(memory: dict[str, Any]) -> None:
    """Leave out of the conversation every result whose call was trimmed out of it (its turn keeps nothing)."""
    for turn in memory.get("turns") or []:
        if turn.get(TRIMMED) == 1:
            turn[TRIMMED] = 2
