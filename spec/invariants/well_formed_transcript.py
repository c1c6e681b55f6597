"""well-formed-transcript: no model call is sent a tool call without its result (CONVERSATIONS.md 1).

Over a History, each conversation is the `tool_call`, `result_saved` and `model_call` events of
one (run, incarnation), in order (a producer replays what a restart loaded as events of the new
incarnation). It is broken by a `model_call` invoke while a tool call of its conversation has
no result yet, by a result saved for a call the conversation does not hold, and by a second
result saved for one call (an OpenAI Agents SDK session with two outputs for one call ID).
The model's check is incremental: the one such request the model can send leaves the process
stuck (spec/process.py, as-is).
"""

from __future__ import annotations

from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants.common import stuck
from crashsweep.spec.invariants.value import Invariant, ModelCheck, Violation
from crashsweep.spec.job import Job
from crashsweep.spec.ops import refused
from crashsweep.spec.trim import TRIMMED, orphan_result
from crashsweep.spec.world import World

NAME = "well-formed-transcript"
WITNESS = "some conversation with a result sent"
_CONVERSATION = ("tool_call", "result_saved", "model_call")


def conversations(history: History) -> dict[tuple[str, int], list[Event]]:
    """The conversation events of each (run, incarnation), in order."""
    found: dict[tuple[str, int], list[Event]] = {}
    for event in history.events:
        if event.f in _CONVERSATION:
            found.setdefault((event.run, event.incarnation), []).append(event)
    return found


def _id(event: Event) -> str:
    return event.call_id or event.call


def _broken(events: list[Event]) -> Violation | None:
    """The first break of one conversation: an orphaned call sent, a result without its call, a result twice."""
    calls: dict[str, Event] = {}
    results: dict[str, Event] = {}
    for n, event in enumerate(events):
        name = _id(event)
        if not name and event.f != "model_call":  # unjoined: in no rule about calls (spec/HISTORY.md 8)
            continue
        if event.f == "tool_call" and event.type == "invoke":
            calls.setdefault(name, event)
        elif event.f == "result_saved" and event.type == "ok":
            if name not in calls:
                return Violation(NAME, f"a result of {name} was saved with no call of it before", (event,))
            if name in results:
                return Violation(NAME, f"{name} has two results in the conversation", (results[name], event))
            results[name] = event
        elif event.f == "model_call" and event.type == "invoke":
            orphans = [call for call in calls.values() if _id(call) not in results]
            if orphans:
                refusal = next((e for e in events[n + 1 :] if e.f == "model_call" and e.type == "fail"), None)
                why = refusal.detail if refusal is not None and refusal.detail else f"{_id(orphans[0])} has no result"
                return Violation(
                    NAME, f"the model was sent a tool call without its result ({why})", (orphans[0], event)
                )
    return None


def check(history: History) -> Violation | None:
    """The first break of any conversation of the history."""
    for events in conversations(history).values():
        broken = _broken(events)
        if broken is not None:
            return broken
    return None


def seen(history: History) -> bool:
    """Some model call was sent a conversation holding a tool result (or no conversation has a tool call)."""
    every = conversations(history).values()
    if not any(e.f == "tool_call" for events in every for e in events):
        return not history.expected
    for events in every:
        saved = False
        for event in events:
            saved = saved or event.f == "result_saved"
            if saved and event.f == "model_call" and event.type == "invoke":
                return True
    return False


def holds(world: World, job: Job) -> bool:
    """No refused request (a call without its result sent), and no result held without its call.

    The model sends one malformed request, refused for good (the process is stuck with the
    provider's words); a trimmed conversation (spec/trim.py) holds a result without its call from
    the load on. A run whose conversation was never trimmed is checked in O(1).
    """
    if refused(stuck(world)):
        return False
    process = world.process
    return process is None or TRIMMED not in world.struck or orphan_result(process.memory) is None


def result_sent(world: World, job: Job) -> bool:
    """Some model call was sent a conversation holding a tool result (after a tool turn, or a refused request)."""
    process = world.process
    if not job.turns:
        return True
    if process is None:
        return False
    memory = process.memory
    if memory.size >= 2 or (memory.done and memory.size >= 1):
        return True
    last = memory.last  # a refused request (as-is) was sent the results the loaded turn holds
    return last is not None and bool(last.results) and stuck(world) is not None


def explain(world: World, job: Job) -> str:
    """The refused request, in the provider's words, or the result held without its call."""
    why = stuck(world)
    if refused(why):
        return f"the model was sent a tool call without its result ({why})"
    orphan = None if world.process is None else orphan_result(world.process.memory)
    return f"the conversation holds a result of {orphan} without its call (context trimmed at the restart)"


INVARIANT = Invariant(
    NAME,
    "always",
    WITNESS,
    ("transcript",),
    "no model call is sent a tool call without its result",
    check,
    seen,
    ModelCheck(holds, result_sent, explain),
)
