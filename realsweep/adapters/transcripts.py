"""A framework's saved conversation as History events, and what each stack's check cannot see.

The check of an agent (script.check) reads the receiver's effects from the tracker; to judge
well-formed-transcript (spec/invariants/well_formed_transcript.py) it also reads the
conversation the agent saved, as one conversation of events (run = the thread, session or run
ID, incarnation 0), in the order saved:

- before each model response (an AI message, a ModelResponse, the output items of one
  response) a `model_call` invoke: that request was sent everything saved before it;
- each tool call the response holds, a `tool_call` invoke with the framework's tool-call ID;
- each tool output saved (a ToolMessage, a ToolReturnPart, a function_call_output), a
  `result_saved` ok with the ID of the call it answers.

The functions here read the framework's own objects (or, for the OpenAI Agents SDK, the JSON
items its sessions store) by their documented fields, so this module imports no framework;
each adapter reads its saved state (openai_agents.session_events with sqlite3 alone,
langgraph.checkpoint_events with LangGraph's saver) and hands the objects here.

`UNDECIDED` is the one list of what each stack's check cannot decide, and why: the row says
"not decided (why)" for those invariants (realsweep/rows.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from crashsweep.spec.history import Event

_NO_APPROVAL_ON_EFFECT = "{what}: no effect can carry which approval it was applied under"
UNDECIDED: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "langgraph": MappingProxyType(
            {"approvals": _NO_APPROVAL_ON_EFFECT.format(what="LangGraph's approval is the value interrupt() returns")}
        ),
        "dbos": MappingProxyType(
            {
                "transcript": "DBOS's agent keeps no conversation that a check can read (only its steps' outputs)",
                "approvals": "DBOS has no tool approvals",
            }
        ),
        "openai-agents": MappingProxyType(
            {"approvals": _NO_APPROVAL_ON_EFFECT.format(what="the SDK's approval is a flag in its RunState")}
        ),
        "pydantic-ai": MappingProxyType(
            {
                "transcript": "pydantic-ai's agent keeps its messages in memory; DBOS records each model reply, "
                "never the tool results",
                "approvals": _NO_APPROVAL_ON_EFFECT.format(
                    what="pydantic-ai's approval is an answer in the next run's DeferredToolResults"
                ),
            }
        ),
        "temporal": MappingProxyType(
            {
                "transcript": "Temporal's agent keeps no conversation that a check can read "
                "(its workflow history is in the sweep's dev server)",
                "approvals": "the Temporal agent has no tool approvals",
            }
        ),
    }
)
"""Per framework (its `--framework` name): each family of facts (spec/history.FACTS) its check
cannot see, and why. A fact absent here is read: "effects" always (the tracker), "transcript"
where the framework saves the conversation on disk, "status" from the sweep."""


def _event(run: str, type_: str, f: str, *, call_id: str = "", tool: str = "", src: str) -> Event:
    return Event(run, 0, 0, type_, f, call_id=call_id, tool=tool, src=src)


def session_items(items: Iterable[Any], run: str) -> tuple[Event, ...]:
    """The events of an OpenAI Agents SDK session's items (JSON dicts, as `Session.get_items` gives them).

    One response's output items (function_call, an assistant message, reasoning) follow each
    other; a model_call is put before the first of them, after a user input or a tool output.
    The SDK drops from every request it sends each function_call that has no output yet (its
    `drop_orphan_function_calls`), so a call counts as sent from the moment its output is
    saved: its tool_call event is put right before its first output's, and a call still
    unanswered when the next request is sent is never sent with it. An output with no call of
    its ID before it, and a second output for one ID, stay as the saved conversation holds them.
    """
    events: list[Event] = []
    pending: dict[str, str] = {}  # call ID -> tool, of the function_calls with no output yet
    answered: set[str] = set()
    answering = False  # inside one response's output items
    for item in items:
        shape = str(item.get("type", "message")) if isinstance(item, dict) else ""
        output = shape in ("function_call", "reasoning") or (shape == "message" and item.get("role") == "assistant")
        if output and not answering:
            events.append(_event(run, "invoke", "model_call", src="session"))
        answering = output
        call_id = str(item.get("call_id", "")) if isinstance(item, dict) else ""
        if shape == "function_call" and call_id not in answered:
            pending[call_id] = str(item.get("name", ""))
        elif shape == "function_call_output":
            if call_id in pending:
                events.append(
                    _event(run, "invoke", "tool_call", call_id=call_id, tool=pending.pop(call_id), src="session")
                )
            answered.add(call_id)
            events.append(_event(run, "ok", "result_saved", call_id=call_id, src="session"))
    return tuple(events)


def chat_messages(messages: Iterable[Any], run: str) -> tuple[Event, ...]:
    """The events of LangChain messages (a LangGraph state's): AIMessage.tool_calls, ToolMessage.tool_call_id."""
    events: list[Event] = []
    for message in messages:
        shape = getattr(message, "type", "")
        if shape == "ai":
            events.append(_event(run, "invoke", "model_call", src="checkpoint"))
            for call in getattr(message, "tool_calls", ()) or ():
                call_id, tool = str(call.get("id") or ""), str(call.get("name", ""))
                events.append(_event(run, "invoke", "tool_call", call_id=call_id, tool=tool, src="checkpoint"))
        elif shape == "tool":
            call_id = str(getattr(message, "tool_call_id", ""))
            events.append(_event(run, "ok", "result_saved", call_id=call_id, src="checkpoint"))
    return tuple(events)


def model_messages(messages: Iterable[Any], run: str) -> tuple[Event, ...]:
    """The events of pydantic-ai messages: ModelResponse's ToolCallParts, ModelRequest's ToolReturnParts."""
    events: list[Event] = []
    for message in messages:
        shape = getattr(message, "kind", "")
        if shape == "response":
            events.append(_event(run, "invoke", "model_call", src="messages"))
        for part in getattr(message, "parts", ()):
            part_kind = getattr(part, "part_kind", "")
            call_id = str(getattr(part, "tool_call_id", ""))
            if shape == "response" and part_kind == "tool-call":
                tool = str(getattr(part, "tool_name", ""))
                events.append(_event(run, "invoke", "tool_call", call_id=call_id, tool=tool, src="messages"))
            elif shape == "request" and part_kind == "tool-return":
                events.append(_event(run, "ok", "result_saved", call_id=call_id, src="messages"))
    return tuple(events)
