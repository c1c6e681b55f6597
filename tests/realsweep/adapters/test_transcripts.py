"""Saved conversations as History events: each framework's objects, made for real, judged by well-formed-transcript."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

from crashsweep.realsweep.adapters import transcripts
from crashsweep.realsweep.adapters.frameworks import REGISTRY
from crashsweep.spec.history import FACTS, Event, History
from crashsweep.spec.invariants import well_formed_transcript


def shape(events: tuple[Event, ...]) -> list[tuple[str, str]]:
    """Each event's f and call ID ("" for a model call)."""
    return [(e.f, e.call_id) for e in events]


def verdict(events: tuple[Event, ...]) -> str:
    """well-formed-transcript on the conversation: "holds", or what breaks it."""
    broken = well_formed_transcript.check(History(events))
    return "holds" if broken is None else broken.why


def test_undecided_names_every_framework_with_a_reason_for_each_fact_it_cannot_see() -> None:
    """One entry per registered framework; only facts of spec/history.FACTS; each reason in words; effects seen."""
    assert set(transcripts.UNDECIDED) == {f.name for f in REGISTRY}
    for name, unseen in transcripts.UNDECIDED.items():
        assert set(unseen) <= set(FACTS) - {"effects", "status"}, name
        assert all(len(why) > 20 for why in unseen.values()), name
    readable = {name for name, unseen in transcripts.UNDECIDED.items() if "transcript" not in unseen}
    assert readable == {"openai-agents", "langgraph"}


def test_session_items_put_a_model_call_before_each_responses_output_items() -> None:
    """User input; a reply of two calls; their outputs; the final answer: a model call before each response."""
    items = [
        {"role": "user", "content": "triage"},
        {"type": "function_call", "call_id": "a", "name": "create_issue", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "create_issue", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "ok"},
        {"type": "function_call_output", "call_id": "b", "output": "ok"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]
    events = transcripts.session_items(items, "s1")
    assert shape(events) == [
        ("model_call", ""),
        ("tool_call", "a"),  # a call counts as sent once its output is saved (the SDK drops it until then)
        ("result_saved", "a"),
        ("tool_call", "b"),
        ("result_saved", "b"),
        ("model_call", ""),
    ]
    assert {(e.run, e.incarnation) for e in events} == {("s1", 0)}
    assert [e.tool for e in events if e.f == "tool_call"] == ["create_issue", "create_issue"]
    assert verdict(events) == "holds"


def test_a_call_unanswered_at_the_next_request_is_not_sent_as_the_sdk_drops_it() -> None:
    """A crash left function_call a without output; the restart's request drops it, its reply calls a again."""
    call = {"type": "function_call", "call_id": "a", "name": "comment", "arguments": "{}"}
    user = {"role": "user", "content": "go on"}
    output = {"type": "function_call_output", "call_id": "a", "output": "ok"}
    done = {"type": "message", "role": "assistant", "content": []}
    events = transcripts.session_items([call, user, call, output, done], "s")
    assert shape(events) == [
        ("model_call", ""),
        ("model_call", ""),
        ("tool_call", "a"),
        ("result_saved", "a"),
        ("model_call", ""),
    ]
    assert verdict(events) == "holds"
    assert verdict(transcripts.session_items([output], "s")) == "a result of a was saved with no call of it before"


def test_a_session_with_two_outputs_for_one_call_breaks_the_transcript() -> None:
    """The SDK's session with a function_call_output written twice for one call ID."""
    call = {"type": "function_call", "call_id": "a", "name": "create_issue", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "a", "output": "ok"}
    assert verdict(transcripts.session_items([call, output, output], "s")) == "a has two results in the conversation"


def test_chat_messages_read_ai_tool_calls_and_tool_messages() -> None:
    """LangChain's AIMessage.tool_calls and ToolMessage.tool_call_id; a model call with a call unanswered breaks it."""
    messages = [
        HumanMessage("triage"),
        AIMessage("", tool_calls=[{"name": "create_issue", "args": {}, "id": "a"}]),
        ToolMessage("filed", tool_call_id="a"),
        AIMessage("done"),
    ]
    events = transcripts.chat_messages(messages, "t")
    assert shape(events) == [("model_call", ""), ("tool_call", "a"), ("result_saved", "a"), ("model_call", "")]
    assert verdict(events) == "holds"
    orphaned = transcripts.chat_messages([*messages[:2], messages[3]], "t")
    assert verdict(orphaned) == "the model was sent a tool call without its result (a has no result)"


def test_model_messages_read_pydantic_ais_tool_call_and_return_parts() -> None:
    """pydantic-ai's ModelResponse ToolCallPart and ModelRequest ToolReturnPart, by tool_call_id."""
    messages = [
        ModelRequest(parts=[UserPromptPart("triage")]),
        ModelResponse(parts=[ToolCallPart("create_issue", {}, tool_call_id="a")]),
        ModelRequest(parts=[ToolReturnPart("create_issue", "filed", tool_call_id="a")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    events = transcripts.model_messages(messages, "r")
    assert shape(events) == [("model_call", ""), ("tool_call", "a"), ("result_saved", "a"), ("model_call", "")]
    assert verdict(events) == "holds"
