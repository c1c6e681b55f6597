"""The figures a scenario is measured by (section 8 of SEMANTICS.md).

Two kinds: counters that grow along the way (model calls, questions, ladder rungs), carried
on the explorer's edges as deltas, and measures of a scenario's final world (duplicates,
missing writes), taken at its finished state. Both are summed over scenarios by the explorer.
"""

from __future__ import annotations

from crashsweep.spec.invariants import job_writes
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

MODEL_CALLS = "model_calls"
ASKS = "asks"
RERUNS = "reruns"
LOOKUPS = "lookups"
APPROVALS = "approvals"


def dups(world: World, job: Job) -> int:
    """Over the job's writes, the sum of max(0, records - 1)."""
    tracker = world.tracker
    if not tracker.duplicated:  # no call has two records
        return 0
    return sum(max(0, tracker.count(call) - 1) for call in job_writes(job))


def with_dups(world: World, job: Job) -> int:
    """1 when the world holds a duplicate, else 0 (summed: scenarios with duplicates)."""
    return 1 if dups(world, job) > 0 else 0


def missing(world: World, job: Job) -> int:
    """The job's writes with no record at all."""
    count = world.tracker.count
    return sum(1 for call in job_writes(job) if not count(call))
