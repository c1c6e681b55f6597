"""The anomalies of how runs ended: stuck, diverged on replay, ended with an attempt never settled.

stuck-run is can-finish seen run by run (spec/HISTORY.md 8) and finds nothing on a history
without the `status` fact; replay-divergence (Temporal's nondeterminism error) and
unknown-never-settled are found by no invariant.

Choices where section 8 is silent:
- stuck-run and replay-divergence: one anomaly a status event;
- unknown-never-settled: the attempt's event in the witness is the one that left it unknown
  (its `info`, or its `invoke` when nothing completed it); the status is the first
  `run_status` after that event of its run or of run ""; a later attempt is one that began
  after it began (its first event is later); one anomaly an attempt.
"""

from __future__ import annotations

from crashsweep.spec.anomalies.calls import UNKNOWN, Attempt, Calls, statuses_of
from crashsweep.spec.anomalies.value import Anomaly
from crashsweep.spec.history import DIVERGED, STUCK, History
from crashsweep.spec.invariants import can_finish

STUCK_RUN = "stuck-run"
REPLAY_DIVERGENCE = "replay-divergence"
UNKNOWN_NEVER_SETTLED = "unknown-never-settled"


def stuck_run(history: History) -> tuple[Anomaly, ...]:
    """Each `run_status` `stuck`, with why the run can never go on."""
    if history.missing(can_finish.INVARIANT.needs) is not None:
        return ()
    calls = Calls.of(history)
    return tuple(
        calls.found(STUCK_RUN, "", f"the run can never finish: {event.detail}", (event,))
        for event in history.events
        if event.f == "run_status" and event.status == STUCK
    )


def replay_divergence(history: History) -> tuple[Anomaly, ...]:
    """Each `run_status` `diverged`: a replay found other steps than the history it replays."""
    calls = Calls.of(history)
    found = []
    for event in history.events:
        if event.f == "run_status" and event.status == DIVERGED:
            detail = f": {event.detail}" if event.detail else ""
            why = f"a replay of the run found other steps than its history{detail}"
            found.append(calls.found(REPLAY_DIVERGENCE, "", why, (event,)))
    return tuple(found)


def unknown_never_settled(history: History) -> tuple[Anomaly, ...]:
    """Attempts of a write of unknown outcome that a status of their run follows and no keyed retry settled."""
    calls = Calls.of(history)
    writes = set(calls.writes)
    found = []
    for attempt in calls.attempts:
        if attempt.outcome != UNKNOWN or attempt.call not in writes or _settled(calls, attempt):
            continue
        ended = statuses_of(attempt.run, calls.after(attempt.last))
        if not ended:
            continue
        if attempt.key:
            retry = f"no later attempt with its key {attempt.key} completed"
        else:
            retry = "it sent no idempotency key a retry could settle it with"
        why = f"an attempt of {attempt.call} has an unknown outcome and the run ended ({ended[0].status}): {retry}"
        found.append(calls.found(UNKNOWN_NEVER_SETTLED, attempt.call, why, (attempt.last, ended[0]), definite=False))
    return calls.ordered(found)


def _settled(calls: Calls, attempt: Attempt) -> bool:
    """A later attempt of the same call, with the same non-empty key, completed `ok` or `fail`."""
    if not attempt.key:
        return False
    began = calls.where(attempt.events[0])
    return any(
        later.key == attempt.key and later.outcome in ("ok", "fail") and calls.where(later.events[0]) > began
        for later in calls.attempts_of(attempt.call)
    )
