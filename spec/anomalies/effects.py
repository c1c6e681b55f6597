"""The anomalies of the receiver's effects and the keys sent: duplicated, lost, late, a key reused.

duplicate-effect and lost-effect are no-duplicate and no-loss seen call by call (spec/HISTORY.md
8); effect-after-failure and key-reused are found by no invariant. A rule of an invariant finds
nothing on a history that lacks a fact its invariant needs (that invariant is not decided there:
no receiver's records means no evidence that a write is missing).

Choices where section 8 is silent:
- duplicate-effect: one anomaly a call, its words naming all its records; a possible one's
  witness is its first `ok` and its first `info` effect (what proves "maybe twice");
- a call is one across the runs of a history, as the invariants count it (a model's restart
  that lost its run ID begins a new run that makes the same calls again);
- lost-effect: the finishing event is the history's last `run_status` `finished` (no-loss's
  evidence), the call's last event its last anywhere in the history; a write that is not
  expected (granted, or an attempt returned `ok`) is definite as the table says, unless its
  witness itself holds an uncertain event (the general rule);
- effect-after-failure: the status is the first `failed` or `cancelled` before the effect of the
  effect's run or of run "" (a status that names no run is every run's); an effect with no call
  is found too (the anomaly is about its run);
- key-reused: one anomaly a key, for the first later event that conflicts with an earlier one
  (the earliest such); arguments are compared between events of one `f` only (a receiver's
  ledger and a tool span digest arguments each their own way); calls only where both are joined;
  its call is the first event's.
"""

from __future__ import annotations

from crashsweep.spec.anomalies.calls import UNKNOWN, Calls, label
from crashsweep.spec.anomalies.value import Anomaly
from crashsweep.spec.history import CANCELLED, FAILED, FINISHED, Event, History
from crashsweep.spec.invariants import no_duplicate, no_loss

DUPLICATE_EFFECT = "duplicate-effect"
LOST_EFFECT = "lost-effect"
EFFECT_AFTER_FAILURE = "effect-after-failure"
KEY_REUSED = "key-reused"


def duplicate_effect(history: History) -> tuple[Anomaly, ...]:
    """Calls with two or more `effect` `ok` (definite), or one `ok` and some `info` (possible)."""
    if history.missing(no_duplicate.INVARIANT.needs) is not None:
        return ()
    calls = Calls.of(history)
    found = []
    for call in calls.by_call:
        done = calls.events(call, "effect", "ok")
        unsure = calls.events(call, "effect", "info")
        if len(done) > 1:
            why = f"{call} has {len(done)} records: {' and '.join(label(e) for e in done)}"
            found.append(calls.found(DUPLICATE_EFFECT, call, why, done[:2]))
        elif len(done) == 1 and unsure:
            both = (done[0], unsure[0])  # the witness: one applied, one maybe applied (found() orders them)
            why = f"{call} has a record {label(done[0])} and {len(unsure)} of unknown outcome"
            found.append(calls.found(DUPLICATE_EFFECT, call, why, both, definite=False))
    return calls.ordered(found)


def lost_effect(history: History) -> tuple[Anomaly, ...]:
    """Once a run finished: each write with no `effect` `ok` that was expected, granted, or returned `ok`."""
    if history.missing(no_loss.INVARIANT.needs) is not None:
        return ()
    ends = [e for e in history.events if e.f == "run_status" and e.status == FINISHED]
    if not ends:
        return ()
    calls = Calls.of(history)
    others = [call for call in calls.writes if call not in history.expected and _began(calls, call)]
    found = []
    for call in dict.fromkeys((*history.expected, *others)):
        if calls.events(call, "effect", "ok"):
            continue
        unknown = call in history.expected and _unknown(calls, call)
        why = f"{call} has no record though the run is done"
        if unknown:
            why += " (an effect or attempt of it has an unknown outcome)"
        named = calls.by_call.get(call, ())
        witness = (named[-1], ends[-1]) if named and named[-1] is not ends[-1] else (ends[-1],)
        found.append(calls.found(LOST_EFFECT, call, why, witness, definite=not unknown))
    return calls.ordered(found)


def _unknown(calls: Calls, call: str) -> bool:
    """The call has an `effect` `info` or an attempt of unknown outcome (an expected write is then possibly lost)."""
    return bool(calls.events(call, "effect", "info")) or any(a.outcome == UNKNOWN for a in calls.attempts_of(call))


def _began(calls: Calls, call: str) -> bool:
    """A person granted the call's approval, or an attempt of it returned `ok`."""
    granted = calls.events(call, "approval_grant", "ok")
    return bool(granted) or any(a.outcome == "ok" for a in calls.attempts_of(call))


def effect_after_failure(history: History) -> tuple[Anomaly, ...]:
    """Effects of a run after its `run_status` `failed` or `cancelled` (definite for `ok`, possible for `info`)."""
    calls = Calls.of(history)
    ended: dict[str, Event] = {}
    found = []
    for event in history.events:
        if event.f == "run_status" and event.status in (FAILED, CANCELLED):
            ended.setdefault(event.run, event)
            continue
        before = [ended[run] for run in dict.fromkeys((event.run, "")) if run in ended]
        if event.f == "effect" and event.type in ("ok", "info") and before:
            status = min(before, key=calls.where)
            what = f"{event.call} ({label(event)})" if event.call else f"an effect with no call ({label(event)})"
            verb = "was applied" if event.type == "ok" else "may have been applied"
            why = f"{what} {verb} after the run was {status.status}"
            found.append(calls.found(EFFECT_AFTER_FAILURE, event.call, why, (status, event), event.type == "ok"))
    return calls.ordered(found)


def key_reused(history: History) -> tuple[Anomaly, ...]:
    """Each idempotency key sent by two calls, or with two arguments' digests, with the first pair that shows it."""
    calls = Calls.of(history)
    seen: dict[str, dict[tuple[str, str, str], Event]] = {}
    done: set[str] = set()
    found = []
    for event in history.events:
        key = event.key
        if not key or key in done:
            continue
        earlier = seen.setdefault(key, {})  # the first event of each (call, f, digest): the earliest of its kind
        other = next((e for e in earlier.values() if _conflict(e, event)), None)
        if other is None:
            earlier.setdefault((event.call, event.f, event.args_digest), event)
            continue
        done.add(key)
        if other.call and event.call and other.call != event.call:
            why = f"key {key} was sent by {other.call} and by {event.call}"
        else:
            why = f"key {key} was sent with arguments {other.args_digest} and {event.args_digest}"
            why += f" ({event.call})" if event.call else ""
        found.append(calls.found(KEY_REUSED, other.call, why, (other, event)))
    return calls.ordered(found)


def _conflict(first: Event, then: Event) -> bool:
    """Two events of one key name two joined calls, or (of one `f`) two arguments' digests."""
    calls = bool(first.call and then.call and first.call != then.call)
    args = first.f == then.f and bool(first.args_digest and then.args_digest)
    return calls or (args and first.args_digest != then.args_digest)
