"""The anomalies of the conversation sent to the model: an orphaned call, a result without its call or twice.

They are well-formed-transcript seen call by call (spec/HISTORY.md 8): each conversation is the
`tool_call`, `result_saved` and `model_call` events of one (run, incarnation), in order, and a
call in it is named by its `call_id`, else its `call` (as the invariant names it). A rule finds
nothing on a history without the `transcript` fact; an event with neither ID is unjoined and in
no anomaly.

Choices where section 8 is silent:
- orphaned-call: one anomaly a call across the history (a restart's conversation holds the
  same orphan again): its first definite one, at the first model call it was sent to, else its
  first possible one; its refusal is the next `model_call` event of the conversation when that
  is a `fail`;
- orphaned-call (possible): a conversation "ends with" an orphan when it ends holding a tool
  call with no result that no model call was sent, and only the last conversation of its run
  counts (an earlier one was replaced by a restart, which gives what it loaded as its own
  conversation); a run finished when a `run_status` `finished` of it, or of run "", is in the
  history;
- a result counts as a call's result only after the call (one saved before is a
  result-without-call); duplicate-result is one anomaly an ID a conversation, its witness the
  first two results.
"""

from __future__ import annotations

from crashsweep.spec.anomalies.calls import Calls, statuses_of
from crashsweep.spec.anomalies.value import Anomaly
from crashsweep.spec.history import FINISHED, Event, History
from crashsweep.spec.invariants import well_formed_transcript
from crashsweep.spec.invariants.well_formed_transcript import conversations

ORPHANED_CALL = "orphaned-call"
RESULT_WITHOUT_CALL = "result-without-call"
DUPLICATE_RESULT = "duplicate-result"


def orphaned_call(history: History) -> tuple[Anomaly, ...]:
    """Tool calls sent to the model without their result (definite), or left without one at the end (possible)."""
    return _of(history, ORPHANED_CALL)


def result_without_call(history: History) -> tuple[Anomaly, ...]:
    """Results saved with no call of their ID before them in their conversation."""
    return _of(history, RESULT_WITHOUT_CALL)


def duplicate_result(history: History) -> tuple[Anomaly, ...]:
    """IDs with a second result saved in one conversation."""
    return _of(history, DUPLICATE_RESULT)


def _of(history: History, name: str) -> tuple[Anomaly, ...]:
    """The anomalies of rule `name` over every conversation of the history, in order."""
    if _LAST and _LAST[0][0] is history:
        every = _LAST[0][1]
    else:
        every = _every(history)
        _LAST[:] = [(history, every)]
    return tuple(anomaly for anomaly in every if anomaly.name == name)


_LAST: list[tuple[History, tuple[Anomaly, ...]]] = []
"""The last history's anomalies of all three rules: the three rules of one `find` read one history."""


def _every(history: History) -> tuple[Anomaly, ...]:
    """The anomalies of the three rules over every conversation of the history, in order."""
    if history.missing(well_formed_transcript.INVARIANT.needs) is not None:
        return ()
    calls = Calls.of(history)
    talks = conversations(history)
    last: dict[str, tuple[str, int]] = {}
    for where in sorted(talks, key=lambda talk: calls.where(talks[talk][-1])):
        last[where[0]] = where  # each run's conversation that ends last
    found: list[Anomaly] = []
    for where, events in talks.items():
        ends = last[where[0]] == where and not _finished(history, where[0])
        found.extend(_conversation(calls, events, ends))
    return _one_orphan_a_call(calls.ordered(found))


def _one_orphan_a_call(found: tuple[Anomaly, ...]) -> tuple[Anomaly, ...]:
    """Each call's orphaned-call once across the history: its first definite one, else its first possible one."""
    kept: dict[str, Anomaly] = {}
    for anomaly in found:
        if anomaly.name == ORPHANED_CALL:
            first = kept.get(anomaly.call)
            if first is None or (anomaly.definite and not first.definite):
                kept[anomaly.call] = anomaly
    return tuple(a for a in found if a.name != ORPHANED_CALL or kept[a.call] is a)


def _finished(history: History, run: str) -> bool:
    return any(e.status == FINISHED for e in statuses_of(run, history.events))


def _name(event: Event) -> str:
    return event.call_id or event.call


def _conversation(calls: Calls, events: list[Event], unfinished: bool) -> list[Anomaly]:
    """Every anomaly of one conversation; `unfinished`: it is its run's last and the run did not finish."""
    asked: dict[str, Event] = {}
    answered: set[str] = set()
    results: dict[str, list[Event]] = {}
    sent: set[str] = set()
    found = []
    for n, event in enumerate(events):
        name = _name(event)
        if event.f == "tool_call" and event.type == "invoke" and name:
            asked.setdefault(name, event)
        elif event.f == "result_saved" and event.type == "ok" and name:
            results.setdefault(name, []).append(event)
            if name in asked:
                answered.add(name)
            else:
                why = f"a result of {name} was saved with no call of it before"
                found.append(calls.found(RESULT_WITHOUT_CALL, event.call or name, why, (event,)))
        elif event.f == "model_call" and event.type == "invoke":
            for orphan in [call for key, call in asked.items() if key not in answered and key not in sent]:
                sent.add(_name(orphan))
                found.append(_sent(calls, orphan, event, events[n + 1 :]))
    for name, saved in results.items():
        if len(saved) > 1:
            times = "two" if len(saved) == 2 else str(len(saved))
            why = f"{name} has {times} results in the conversation"
            found.append(calls.found(DUPLICATE_RESULT, saved[0].call or name, why, saved[:2]))
    if unfinished:
        for name, call in asked.items():
            if name not in answered and name not in sent:
                why = f"{name} has no result and the run did not finish: a resumed run would send it to the model"
                found.append(calls.found(ORPHANED_CALL, call.call or name, why, (call,), definite=False))
    return found


def _sent(calls: Calls, orphan: Event, asked: Event, rest: list[Event]) -> Anomaly:
    """The orphan sent to the model by `asked`, with the refusal that follows it where there is one."""
    after = next((e for e in rest if e.f == "model_call"), None)
    refusal = after if after is not None and after.type == "fail" else None
    detail = refusal.detail if refusal is not None and refusal.detail else f"{_name(orphan)} has no result"
    why = f"the model was sent a tool call without its result ({detail})"
    witness = (orphan, asked) if refusal is None else (orphan, asked, refusal)
    return calls.found(ORPHANED_CALL, orphan.call or _name(orphan), why, witness)
