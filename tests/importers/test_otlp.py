"""The `otlp` importer over spans the real OpenTelemetry SDK and real instrumentations wrote.

Spans are made by the SDK's TracerProvider with a counting IdGenerator (its own extension
point: trace IDs 1, 2, ..., span IDs 1, 2, ... in the order spans start) and exported by
opentelemetry-exporter-otlp-json-file's FileSpanExporter, so each expected `src` and, where
the test gives the times, each `time` is derived from the fixture by hand.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Span, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.util.types import Attributes
from pydantic_ai import Agent, DeferredToolRequests, InstrumentationSettings, RunContext
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from crashsweep.importers import otlp
from crashsweep.importers.base import Unusable
from crashsweep.spec.history import Event, History, args_digest
from tests.counting_ids import Counting

pytestmark = pytest.mark.usefixtures("no_event_loop_left")  # run_sync in this process (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
S = 10**9
BASE = 1_700_000_000 * S
"""The fixture's clock: BASE + k seconds, in nanoseconds."""


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[TracerProvider]:
    """A TracerProvider exporting every ended span to tmp_path/traces.jsonl, one line each."""
    made = TracerProvider(id_generator=Counting())
    made.add_span_processor(SimpleSpanProcessor(FileSpanExporter(tmp_path / "traces.jsonl")))
    yield made
    made.shutdown()


AGENT = {"gen_ai.operation.name": "invoke_agent"}


def digest(canonical: str) -> str:
    """The digest of arguments whose canonical JSON the test writes out by hand."""
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def span(tracer: Tracer, name: str, start: int, attributes: Attributes, parent: Span | None = None) -> Span:
    """A span started at BASE + `start` seconds, under `parent` (a new trace without one)."""
    context = set_span_in_context(parent) if parent is not None else None
    return tracer.start_span(name, context=context, attributes=attributes, start_time=BASE + start * S)


def end(made: Span, at: int, error: str | None = None) -> None:
    """End the span at BASE + `at` seconds, with an error status when `error` is given."""
    if error is not None:
        made.set_status(Status(StatusCode.ERROR, error))
    made.end(end_time=BASE + at * S)


def tool(name: str, call_id: str, arguments: str, conversation: str | None = None) -> dict[str, str]:
    """A GenAI execute_tool span's attributes."""
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}
    attributes["gen_ai.tool.call.arguments"] = arguments
    return attributes | ({"gen_ai.conversation.id": conversation} if conversation else {})


def test_genai_spans_give_tool_runs_model_calls_and_the_last_traces_status(
    provider: TracerProvider, tmp_path: Path
) -> None:
    """Two traces of conversation c1: each tool span an attempt, the chat a model call, the last agent span the end."""
    tracer = provider.get_tracer("test")
    agent = span(
        tracer, "invoke_agent triage", 0, {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "c1"}
    )
    chat = span(tracer, "chat m", 1, {"gen_ai.operation.name": "chat"}, agent)
    end(chat, 2)
    first = span(tracer, "execute_tool create_issue", 3, tool("create_issue", "call_1", '{"title": "bug"}'), agent)
    first.set_attribute("crashsweep.idempotency_key", "k-1")
    end(first, 4)
    second = span(tracer, "execute_tool comment", 5, tool("comment", "call_2", '{"issue": "#1", "body": "hi"}'), agent)
    end(second, 6, error="tracker down")
    end(agent, 7, error="a tool failed")
    again = span(
        tracer, "invoke_agent triage", 10, {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "c1"}
    )
    retry = span(tracer, "execute_tool comment", 11, tool("comment", "call_2", '{"body":"hi","issue":"#1"}'), again)
    end(retry, 12)
    end(again, 13)

    (history,) = otlp.read(tmp_path / "traces.jsonl")

    # Spans 1-4 are trace 1 (incarnation 0), 5-6 trace 2 (incarnation 1); the chat and the tools
    # have no conversation ID of their own and take their agent span's. Trace 1's agent span
    # (an error) is not the run's end: trace 2 followed it, and its agent span (5) ended OK.
    args_1, args_2 = digest('{"title":"bug"}'), digest('{"body":"hi","issue":"#1"}')
    create = {"call_id": "call_1", "tool": "create_issue", "args_digest": args_1, "key": "k-1"}
    comment = {"call_id": "call_2", "tool": "comment", "args_digest": args_2}
    src = "traces.jsonl:span 000000000000000"
    assert history.events == (
        Event("c1", 0, 1, "invoke", "model_call", src=src + "2", time=1_700_000_001.0),
        Event("c1", 0, 2, "invoke", "tool_run", **create, src=src + "3", time=1_700_000_003.0),
        Event("c1", 0, 3, "ok", "tool_run", **create, src=src + "3", time=1_700_000_004.0),
        Event("c1", 0, 4, "invoke", "tool_run", **comment, src=src + "4", time=1_700_000_005.0),
        Event("c1", 0, 5, "fail", "tool_run", **comment, detail="tracker down", src=src + "4", time=1_700_000_006.0),
        Event("c1", 1, 6, "invoke", "tool_run", **comment, src=src + "6", time=1_700_000_011.0),
        Event("c1", 1, 7, "ok", "tool_run", **comment, src=src + "6", time=1_700_000_012.0),
        Event("c1", 1, 8, "ok", "run_status", status="finished", src=src + "5", time=1_700_000_013.0),
    )
    assert history.facts == frozenset({"status"})
    assert set(history.unseen) == {"effects", "transcript", "approvals"}


def test_a_trace_without_a_conversation_is_a_run_of_its_own(provider: TracerProvider, tmp_path: Path) -> None:
    """No conversation ID: the trace is the run; an agent span's error ends it `failed`; no agent span, no status."""
    tracer = provider.get_tracer("test")
    agent = span(tracer, "invoke_agent a", 0, AGENT)
    end(agent, 1, error="model refused")
    alone = span(tracer, "execute_tool search", 2, tool("search", "call_9", "not json"))
    end(alone, 3)

    failed, lone = otlp.read(tmp_path / "traces.jsonl")

    trace_1, trace_2 = "0" * 31 + "1", "0" * 31 + "2"
    ended = {"status": "failed", "detail": "model refused", "src": "traces.jsonl:span 0000000000000001"}
    assert failed.events == (Event(trace_1, 0, 1, "fail", "run_status", **ended, time=1_700_000_001.0),)
    # Arguments that are not JSON are digested as the text they are.
    fields = {"call_id": "call_9", "tool": "search", "args_digest": digest("not json")}
    src = "traces.jsonl:span 0000000000000002"
    assert lone.events == (
        Event(trace_2, 0, 1, "invoke", "tool_run", **fields, src=src, time=1_700_000_002.0),
        Event(trace_2, 0, 2, "ok", "tool_run", **fields, src=src, time=1_700_000_003.0),
    )
    assert lone.facts == frozenset()
    assert lone.unseen["status"] == otlp.NO_STATUS


def test_one_whole_document_and_a_span_written_twice_read_as_the_json_lines(
    provider: TracerProvider, tmp_path: Path
) -> None:
    """The SDK's lines as one pretty-printed document, and every line twice: the same histories."""
    tracer = provider.get_tracer("test")
    agent = span(tracer, "invoke_agent a", 0, AGENT | {"gen_ai.conversation.id": "c"})
    end(span(tracer, "execute_tool t", 1, tool("t", "call_1", "{}"), agent), 2)
    end(agent, 3)
    lines = (tmp_path / "traces.jsonl").read_text().splitlines()
    resources = [resource for line in lines for resource in json.loads(line)["resourceSpans"]]
    (tmp_path / "whole").mkdir()
    (tmp_path / "whole" / "traces.jsonl").write_text(json.dumps({"resourceSpans": resources}, indent=2))
    (tmp_path / "twice").mkdir()
    (tmp_path / "twice" / "traces.jsonl").write_text("\n".join(lines + lines) + "\n")

    read = otlp.read(tmp_path / "traces.jsonl")
    assert [len(history.events) for history in read] == [3]  # the tool's invoke and ok, the run's end
    assert otlp.read(tmp_path / "whole" / "traces.jsonl") == read
    assert otlp.read(tmp_path / "twice" / "traces.jsonl") == read


def without_time(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """The events with time 0, after checking the clock's times are there and never go back."""
    times = [event.time for event in events]
    assert all(time > 0 for time in times)
    assert times == sorted(times)
    return tuple(dataclasses.replace(event, time=0.0) for event in events)


def test_pydantic_ai_instrumentation(provider: TracerProvider, tmp_path: Path) -> None:
    """pydantic-ai's own instrumentation of an agent whose scripted model calls one tool, then answers."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("create_issue", {"title": "bug"}, tool_call_id="call_A")])
        return ModelResponse(parts=[TextPart("done")])

    agent: Agent[None, str] = Agent(FunctionModel(model), name="triage")
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool_plain
    def create_issue(title: str) -> str:
        return "#1"

    assert asyncio.run(agent.run("go", conversation_id="conv-1")).output == "done"  # run_sync leaves its loop open
    (history,) = otlp.read(tmp_path / "traces.jsonl")

    # pydantic-ai starts the agent span (1), the first model request (2), the tool (3), the
    # second request (4); every span carries gen_ai.conversation.id.
    fields: dict[str, Any] = {"call_id": "call_A", "tool": "create_issue", "args_digest": digest('{"title":"bug"}')}
    src = "traces.jsonl:span 000000000000000"
    assert without_time(history.events) == (
        Event("conv-1", 0, 1, "invoke", "model_call", src=src + "2"),
        Event("conv-1", 0, 2, "invoke", "tool_run", **fields, src=src + "3"),
        Event("conv-1", 0, 3, "ok", "tool_run", **fields, src=src + "3"),
        Event("conv-1", 0, 4, "invoke", "model_call", src=src + "4"),
        Event("conv-1", 0, 5, "ok", "run_status", status="finished", src=src + "1"),
    )


def test_pydantic_ai_deferral_is_no_end_of_the_run(provider: TracerProvider, tmp_path: Path) -> None:
    """A tool raising ApprovalRequired: its attempt fails as deferred, and the paused run has no status."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("create_issue", {"title": "bug"}, tool_call_id="call_A")])
        return ModelResponse(parts=[TextPart("done")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), name="triage", output_type=[str, DeferredToolRequests]
    )
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool
    def create_issue(ctx: RunContext[None], title: str) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired
        return "#1"

    assert isinstance(asyncio.run(agent.run("go", conversation_id="conv-1")).output, DeferredToolRequests)
    (history,) = otlp.read(tmp_path / "traces.jsonl")

    fields: dict[str, Any] = {"call_id": "call_A", "tool": "create_issue", "args_digest": digest('{"title":"bug"}')}
    src = "traces.jsonl:span 000000000000000"
    assert without_time(history.events) == (
        Event("conv-1", 0, 1, "invoke", "model_call", src=src + "2"),
        Event("conv-1", 0, 2, "invoke", "tool_run", **fields, src=src + "3"),
        Event("conv-1", 0, 3, "fail", "tool_run", **fields, detail="deferred (ApprovalRequired)", src=src + "3"),
    )


SETUP = """
import json, sys
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(sys.argv[1])))
"""
OPENAI_AGENTS = """
import agents
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor as OpenInference
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor as OpenLLMetry
agents.set_trace_processors([])  # not the SDK's exporter to OpenAI's servers: the instrumentations' only
OpenInference().instrument(tracer_provider=provider)
second = TracerProvider()
second.add_span_processor(SimpleSpanProcessor(FileSpanExporter(sys.argv[2])))
OpenLLMetry().instrument(tracer_provider=second)

class Scripted(Model):
    async def get_response(self, system_instructions, input, *args, **kwargs):
        answered = not isinstance(input, str) and any(i.get("type") == "function_call_output" for i in input)
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        call = ResponseFunctionToolCall(
            type="function_call", id="fc_1", call_id="call_A", name="create_issue", arguments='{"title": "bug"}'
        )
        message = ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[message if answered else call], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError

@function_tool
def create_issue(title: str) -> str:
    return "#1"

assert Runner.run_sync(Agent(name="triage", model=Scripted(), tools=[create_issue]), "go").final_output == "done"
provider.shutdown()
second.shutdown()
"""
LANGGRAPH = """
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from opentelemetry.instrumentation.langchain import LangchainInstrumentor
LangchainInstrumentor().instrument(tracer_provider=provider)

@tool
def create_issue(title: str) -> str:
    "File an issue."
    return "#1"

def agent(state):
    if len(state["messages"]) == 1:
        call = {"name": "create_issue", "args": {"title": "bug"}, "id": "call_A"}
        return {"messages": [AIMessage("", tool_calls=[call])]}
    return {"messages": [AIMessage("done")]}

graph = StateGraph(MessagesState)
graph.add_node("agent", agent)
graph.add_node("tools", ToolNode([create_issue]))
graph.add_edge(START, "agent")
graph.add_conditional_edges("agent", tools_condition)
graph.add_edge("tools", "agent")
out = graph.compile().invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "t1"}})
assert out["messages"][-1].content == "done"
provider.shutdown()
"""


def traced(tmp_path: Path, script: str, *files: str) -> list[History]:
    """The history of each file of spans a child process wrote with real instrumentations (their globals stay there)."""
    child = [sys.executable, "-W", "error", "-c", SETUP + script, *(str(tmp_path / name) for name in files)]
    subprocess.run(child, check=True, cwd=tmp_path, env={**os.environ, "OPENAI_API_KEY": "unused"}, timeout=60)
    return [history for name in files for history in otlp.read(tmp_path / name)]


def kinds(history: History) -> list[tuple[str, str, str, str, str, str]]:
    """(type, f, call_id, tool, args_digest, status) of each event; runs and span IDs are random here."""
    return [(e.type, e.f, e.call_id, e.tool, e.args_digest, e.status) for e in history.events]


def test_openai_agents_instrumentations(tmp_path: Path) -> None:
    """The Agents SDK's tool span, by OpenInference (kind TOOL, input.value) and OpenLLMetry (execute_tool).

    Neither records the model's call ID or a conversation: the run is the trace, and audit joins
    the attempt by tool and arguments. OpenLLMetry's agent span ends the run; OpenInference's
    AGENT spans say nothing (they end OK whatever happened). The scripted model is no OpenAI
    model, so no model span is made.
    """
    openinference, openllmetry = traced(tmp_path, OPENAI_AGENTS, "openinference.jsonl", "openllmetry.jsonl")
    args = digest('{"title":"bug"}')
    ran = [("invoke", "tool_run", "", "create_issue", args, ""), ("ok", "tool_run", "", "create_issue", args, "")]
    assert kinds(openinference) == ran
    assert kinds(openllmetry) == [*ran, ("ok", "run_status", "", "", "", "finished")]
    for history in (openinference, openllmetry):
        (run,) = {event.run for event in history.events}
        assert re.fullmatch("[0-9a-f]{32}", run)  # the trace ID in hex


def test_langgraph_by_openllmetrys_langchain_instrumentation(tmp_path: Path) -> None:
    """ToolNode's tool span: the arguments and the call ID come out of the callback payload; the thread is the run."""
    (history,) = traced(tmp_path, LANGGRAPH, "traces.jsonl")
    args = digest('{"title":"bug"}')
    assert kinds(history) == [
        ("invoke", "tool_run", "call_A", "create_issue", args, ""),
        ("ok", "tool_run", "call_A", "create_issue", args, ""),
        ("ok", "run_status", "", "", "", "finished"),
    ]
    assert {event.run for event in history.events} == {"t1"}


def exported_line(provider: TracerProvider, tmp_path: Path) -> dict[str, object]:
    """One span the SDK exported, as the JSON object of its line."""
    end(span(provider.get_tracer("test"), "execute_tool t", 0, tool("t", "call_1", "{}")), 1)
    data: dict[str, object] = json.loads((tmp_path / "traces.jsonl").read_text())
    return data


def with_span(line: dict[str, object], **changes: object) -> str:
    """The line with its span's fields changed (None: left out)."""
    copy = json.loads(json.dumps(line))
    target = copy["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    for name, value in changes.items():
        if value is None:
            target.pop(name)
        else:
            target[name] = value
    return json.dumps(copy)


WHERE = "resourceSpans[0].scopeSpans[0].spans[0]"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"traceId": None}, f"{WHERE}: no traceId"),
        ({"spanId": "xyz"}, f"{WHERE}: spanId 'xyz': expected 16 hex digits"),
        ({"name": None}, f"{WHERE}: no name"),
        ({"startTimeUnixNano": "soon"}, f"{WHERE}: startTimeUnixNano 'soon': expected nanoseconds since the epoch"),
        ({"endTimeUnixNano": "5"}, f"{WHERE}: endTimeUnixNano 5 is before startTimeUnixNano"),
        ({"attributes": [{"key": "k"}]}, f'{WHERE}: attributes[0]: expected {{"key": "...", "value": {{...}}}}'),
    ],
)
def test_a_bad_span_is_refused_with_its_line(
    provider: TracerProvider, tmp_path: Path, change: dict[str, object], says: str
) -> None:
    """The second line's span is broken: the refusal names the file, line 2, the span and what is wrong."""
    good = exported_line(provider, tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(good) + "\n" + with_span(good, **change) + "\n")
    with pytest.raises(Unusable) as refused:
        otlp.read(bad)
    assert str(refused.value).startswith(f"{bad}:2: {says}")


@pytest.mark.parametrize(
    ("second", "says"),
    [
        ("{not json", "not JSON (Expecting property name enclosed in double quotes at column 2)"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"resourceLogs": []}', "no resourceSpans list: not OTLP JSON traces"),
        ('{"resourceSpans": [{"scopeSpans": 3}]}', "resourceSpans[0]: expected an object with a scopeSpans list"),
    ],
)
def test_a_bad_line_is_refused_with_its_number(
    provider: TracerProvider, tmp_path: Path, second: str, says: str
) -> None:
    """A line that is no OTLP traces document after a good one: "FILE:2: what"."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(exported_line(provider, tmp_path)) + "\n" + second + "\n")
    with pytest.raises(Unusable) as refused:
        otlp.read(bad)
    assert str(refused.value) == f"{bad}:2: {says}"


def test_parents_in_a_cycle_end_the_walk(provider: TracerProvider, tmp_path: Path) -> None:
    """Two agent spans each the other's parent (a broken writer): read, no status (neither is outermost), no hang."""
    good = exported_line(provider, tmp_path)
    agent = [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]
    one = with_span(good, spanId="00000000000000aa", parentSpanId="00000000000000bb", attributes=agent)
    two = with_span(good, spanId="00000000000000bb", parentSpanId="00000000000000aa", attributes=agent)
    cycle = tmp_path / "cycle.jsonl"
    cycle.write_text(one + "\n" + two + "\n")
    (history,) = otlp.read(cycle)
    assert history.events == ()
    assert history.facts == frozenset({"status"})


def test_a_broken_whole_document_is_refused_with_the_line_of_its_fault(tmp_path: Path) -> None:
    """A pretty-printed document cut short: the JSON reader's line."""
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "resourceSpans": [\n    {"scopeSpans": [}\n')
    with pytest.raises(Unusable) as refused:
        otlp.read(bad)
    assert str(refused.value).startswith(f"{bad}:3: not JSON")


def test_recognises_otlp_json_and_not_a_history(provider: TracerProvider, tmp_path: Path) -> None:
    """An exported file and a whole document are OTLP; a History JSONL and a CSV are not."""
    exported = json.dumps(exported_line(provider, tmp_path)).encode()
    assert otlp.recognises(tmp_path / "traces.jsonl", exported)
    assert otlp.recognises(tmp_path / "t.json", b'\n  {\n "resourceSpans": []}')
    assert not otlp.recognises(tmp_path / "h.jsonl", b'{"crashsweep_history": 1}\n')
    assert not otlp.recognises(tmp_path / "l.csv", b"key,effect_id,call\n")


@pytest.mark.parametrize(
    ("arguments", "canonical"),
    [
        ('{"b": 1, "a": [true, null]}', '{"a":[true,null],"b":1}'),
        ('{"title": "caf\\u00e9"}', '{"title":"café"}'),
        ("{}", "{}"),
    ],
)
def test_args_digest_is_of_the_canonical_json(arguments: str, canonical: str) -> None:
    """Keys sorted, no spaces, UTF-8 as it is: one digest for one value however it was written."""
    assert args_digest(arguments) == digest(canonical)


def test_the_sample_files_read(tmp_path: Path) -> None:
    """docs/examples' OTLP samples, written by the real SDK, are read; the retry sample as it was made.

    otlp-retry.jsonl: conversation triage-2, trace 1 (a chat at +1 s, comment call_b1 from +3 s
    failing at +4 s, the agent span failing at +5 s), trace 2 a minute later (the retry of
    call_b1 at +61 s to +62 s, a chat at +63 s, the agent span ending OK at +65 s).
    """
    samples = sorted((ROOT / "docs" / "examples").glob("otlp-*.jsonl"))
    assert [sample.name for sample in samples] == ["otlp-pydantic-ai.jsonl", "otlp-retry.jsonl"]
    for sample in samples:
        assert otlp.recognises(sample, sample.read_bytes()[:65536])
    ((pydantic,), (retry,)) = (otlp.read(sample) for sample in samples)
    assert [(e.type, e.f, e.call_id) for e in pydantic.events] == [
        ("invoke", "model_call", ""),
        ("invoke", "tool_run", "call_a1"),
        ("ok", "tool_run", "call_a1"),
        ("invoke", "model_call", ""),
        ("ok", "run_status", ""),
    ]
    start = 1_767_225_600
    assert [(e.incarnation, e.type, e.f, e.call_id, e.time - start) for e in retry.events] == [
        (0, "invoke", "model_call", "", 1),
        (0, "invoke", "tool_run", "call_b1", 3),
        (0, "fail", "tool_run", "call_b1", 4),
        (1, "invoke", "tool_run", "call_b1", 61),
        (1, "ok", "tool_run", "call_b1", 62),
        (1, "invoke", "model_call", "", 63),
        (1, "ok", "run_status", "", 65),
    ]
    assert {e.key for e in retry.events if e.f == "tool_run"} == {"triage-2/call_b1"}
