"""no-duplicate: no logical call has two effects at the receiver, in any state (SEMANTICS.md).

Over a History: the `effect` events of each call; two or more are a violation, shown by those
events. The explorer checks it in every state, so its model check must not scan: the tracker
counts the calls that have more than one record as records are added (`Tracker.duplicated`),
and while that count is zero no write can be duplicated; only a world with a duplicate looks
further.
"""

from __future__ import annotations

from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants.common import job_writes
from crashsweep.spec.invariants.value import Invariant, ModelCheck, Violation
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

NAME = "no-duplicate"
WITNESS = "some write applied"


def effects_by_call(history: History) -> dict[str, list[Event]]:
    """The effect events of each call, in order (an effect with no call is joined to none: spec/HISTORY.md 8)."""
    found: dict[str, list[Event]] = {}
    for event in history.events:
        if event.f == "effect" and event.type == "ok" and event.call:
            found.setdefault(event.call, []).append(event)
    return found


def check(history: History) -> Violation | None:
    """The calls with more than one effect, each with its effects' IDs."""
    doubled = [(call, events) for call, events in effects_by_call(history).items() if len(events) > 1]
    if not doubled:
        return None
    words = [
        f"{call} has {len(events)} records: {' and '.join(e.effect_id for e in events)}" for call, events in doubled
    ]
    return Violation(NAME, "; ".join(words), tuple(e for _, events in doubled for e in events))


def seen(history: History) -> bool:
    """Some effect was seen (or the run must make none)."""
    return not history.expected or any(e.f == "effect" and e.type == "ok" for e in history.events)


def duplicated(world: World, job: Job) -> tuple[str, ...]:
    """The writes that have more than one record."""
    tracker = world.tracker
    if not tracker.duplicated:
        return ()
    return tuple(call for call in job_writes(job) if tracker.count(call) > 1)


def holds(world: World, job: Job) -> bool:
    """No write of the job has two records."""
    return not world.tracker.duplicated or not duplicated(world, job)


def applied(world: World, job: Job) -> bool:
    """The tracker holds at least one record (no-duplicate had something to check)."""
    return world.tracker.size > 0 or not job.writes


def explain(world: World, job: Job) -> str:
    """Each duplicated write and its records' numbers."""
    parts = []
    for call in duplicated(world, job):
        numbers = [f"#{n}" for n, r in enumerate(world.tracker.records, 1) if r.call == call]
        parts.append(f"{call} has {len(numbers)} records: {' and '.join(numbers)}")
    return "; ".join(parts)


INVARIANT = Invariant(
    NAME,
    "always",
    WITNESS,
    ("effects",),
    "no write of the job has two records, in any state",
    check,
    seen,
    ModelCheck(holds, applied, explain),
)
