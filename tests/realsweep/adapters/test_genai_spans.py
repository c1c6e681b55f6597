"""The GenAI spans a built-in agent records (genai_spans.py): names, attributes and nesting, by a real SDK in memory.

Each test makes its own TracerProvider over an InMemorySpanExporter (not the global one: the
helpers take their tracer), and reads the finished spans back. The expected attributes are
spec/FROM_TRACE.md section 2's, written out by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from crashsweep.realsweep.adapters.genai_spans import KEY, KeysOnSpans, Spans, output_messages
from crashsweep.realsweep.adapters.script import ToolCall
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.keys import key

CREATE = ToolCall("create_a", "create_issue", {"title": "issue create_a"})
SEARCH = ToolCall("search", "search_issues", {"query": "issue"})


@pytest.fixture
def recorded() -> Iterator[tuple[Spans, InMemorySpanExporter]]:
    """Spans by a provider of the test's own, its finished spans kept in memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield Spans(provider.get_tracer("test")), exporter
    provider.shutdown()


def by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


def test_a_reply_with_calls_is_one_assistant_message_of_tool_call_parts_in_order() -> None:
    assert json.loads(output_messages([CREATE, SEARCH])) == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "create_a",
                    "name": "create_issue",
                    "arguments": {"title": "issue create_a"},
                },
                {"type": "tool_call", "id": "search", "name": "search_issues", "arguments": {"query": "issue"}},
            ],
        }
    ]


def test_a_reply_with_no_call_is_the_final_answer_as_text() -> None:
    assert json.loads(output_messages([])) == [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
    assert json.loads(output_messages([], "all filed"))[0]["parts"] == [{"type": "text", "content": "all filed"}]


def test_the_agent_chat_and_tool_spans_nest_with_the_contracts_attributes(
    recorded: tuple[Spans, InMemorySpanExporter],
) -> None:
    spans, exporter = recorded
    with spans.agent("triage", "wf-1", "my-job"):
        with spans.chat() as chat:
            spans.replied(chat, [CREATE])
        with spans.tool(CREATE) as tool:
            spans.answered(tool, "filed issue #1")
    found = by_name(exporter)
    assert sorted(found) == ["chat scripted", "execute_tool create_issue", "invoke_agent triage"]
    agent, chat_span, tool_span = (
        found["invoke_agent triage"],
        found["chat scripted"],
        found["execute_tool create_issue"],
    )
    assert dict(agent.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "triage",
        "gen_ai.conversation.id": "wf-1",
        "crashsweep.job": "my-job",
    }
    assert dict(chat_span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.output.messages": output_messages([CREATE]),
    }
    assert dict(tool_span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "create_issue",
        "gen_ai.tool.call.id": "create_a",
        "gen_ai.tool.call.arguments": '{"title": "issue create_a"}',
        "gen_ai.tool.call.result": "filed issue #1",
    }
    assert agent.parent is None
    assert agent.context is not None
    for child in (chat_span, tool_span):
        assert child.parent is not None
        assert child.parent.span_id == agent.context.span_id
        assert child.status.status_code == StatusCode.UNSET


def test_a_tool_that_raises_leaves_an_error_status_and_the_exception_goes_on(
    recorded: tuple[Spans, InMemorySpanExporter],
) -> None:
    """The span says the call failed (what from-trace reads as a failed run); no exception event is added."""
    spans, exporter = recorded
    with pytest.raises(ConnectionError), spans.tool(SEARCH):
        raise ConnectionError("the tracker is down")
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR
    assert "the tracker is down" in (span.status.description or "")
    assert span.events == ()


def test_a_key_sent_is_on_the_tool_span_and_is_the_one_the_tracker_holds(
    recorded: tuple[Spans, InMemorySpanExporter], keyed_service: ServiceProcess
) -> None:
    """The key of (run, "step 2"), as StepTools derives a DBOS step's: the keyed tracker answers it with the same issue.

    The tracker's records hold no keys; a second write sent with the span's key is the proof:
    the keyed tracker applies it once. The crash point passed in the body is an event beside it.
    """
    spans, exporter = recorded
    client = TrackerClient(keyed_service.space_url("keys"))
    tools = KeysOnSpans(True, client)
    with spans.tool(CREATE) as tool:
        spans.answered(tool, tools.create_issue("issue a", run="wf", call="a", key_parts=("wf", "step 2")))
    (span,) = exporter.get_finished_spans()
    sent = (span.attributes or {})[KEY]
    assert sent == key("wf", "step 2")
    assert client.create_issue("issue a", run="wf", call="a", key=str(sent)) == 1
    assert len(client.records()) == 1
    assert [(e.name, (e.attributes or {})["crashsweep.point.name"]) for e in span.events] == [
        ("crashsweep.point", "tracker filed issue a")
    ]


def test_no_key_on_the_span_when_none_is_sent(
    recorded: tuple[Spans, InMemorySpanExporter], keyed_service: ServiceProcess
) -> None:
    """Keys off: a write with no key; keys on, a comment on no issue sends nothing; a search sends no key."""
    spans, exporter = recorded
    client = TrackerClient(keyed_service.space_url("no-keys"))
    with spans.tool(CREATE):
        KeysOnSpans(False, client).create_issue("issue a", run="wf", call="a", key_parts=("wf", "step 2"))
    with spans.tool(SEARCH):
        answer = KeysOnSpans(True, client).comment("issue z", "hi", run="wf", call="c", key_parts=("wf", "step 3"))
        KeysOnSpans(True, client).search("issue")
    assert answer == "error: no issue titled 'issue z'"
    assert [KEY in (span.attributes or {}) for span in exporter.get_finished_spans()] == [False, False]
    assert [r["title"] for r in client.records()] == ["issue a"]


def test_a_key_asked_outside_any_span_is_still_the_key(keyed_service: ServiceProcess) -> None:
    """No span records it (the current span is the invalid one); the write goes as TrackerTools sends it."""
    tools = KeysOnSpans(True, TrackerClient(keyed_service.space_url("bare")))
    assert tools.key("wf", "step 2") == key("wf", "step 2")
    assert tools.create_issue("issue a", run="wf", call="a", key_parts=("wf", "step 2")) == "filed issue #1"
