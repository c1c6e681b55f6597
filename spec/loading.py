"""What a start makes of the checkpoint it loads, before the design's start runs.

A start loads the committed file (never the temp file). Four fields decide what memory then
holds, each a pure function of the loaded snapshot:

- `approval_storage = "memory"`: no save wrote an approval, so none is loaded (CONVERSATIONS.md 2);
- `persist_granularity = "per-batch"`: a reply's calls are read back whole or not at all, so a
  last turn with a call lacking its result loses every result, marker and failure (section 6);
- `transcript_repair = "both-directions"`: a turn whose reply was trimmed away leaves the
  conversation with its results (section 7);
- `transcript_on_restart`, with `transcript_repair`: what the start does, after the design's
  start, with a loaded call that has no result (`reload_how`, sections 1 and 7: a repair turns
  `as-is` into `repair`).
"""

from __future__ import annotations

from typing import Protocol

from crashsweep.spec import approval, trim
from crashsweep.spec.design import Design
from crashsweep.spec.job import Job
from crashsweep.spec.memory import Snapshot


def loaded(committed: Snapshot, job: Job, design: Design) -> Snapshot:
    """The memory a start begins with, from the committed snapshot it loaded."""
    memory = committed
    if design.approval_storage == "memory":
        memory = approval.forgotten(memory)
    if design.persist_granularity == "per-batch":
        memory = batch_reset(memory, job)
    if design.transcript_repair == "both-directions":
        memory = trim.repaired(memory)
    return memory


def batch_reset(memory: Snapshot, job: Job) -> Snapshot:
    """`memory` with a half-done last batch forgotten: its results, markers and failures (CONVERSATIONS.md 6)."""
    last = memory.last
    if last is None or last.complete:
        return memory
    calls = tuple(call.id for call in job.turns[last.index - 1])
    if all(last.result(call) is not None for call in calls):
        return memory
    return memory.with_last(last.without(calls))


class Restarting(Protocol):
    """What `reload_how` reads: a Design or a Policy."""

    @property
    def transcript_on_restart(self) -> str: ...

    @property
    def transcript_repair(self) -> str: ...


def reload_how(design: Restarting) -> str:
    """What a start does with a loaded call without its result: `resume-pending`, `repair` or `as-is`.

    Only `as-is` sends such a call; a repair of the transcript (either direction) gives it
    `outcome unknown` first, which is what `transcript_on_restart = "repair"` does
    (CONVERSATIONS.md 7). `resume-pending` settles it before any request: nothing to repair.
    """
    if design.transcript_on_restart == "as-is" and design.transcript_repair != "none":
        return "repair"
    return design.transcript_on_restart
