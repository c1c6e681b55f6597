"""crashsweep.otel's span processor, in the real OpenTelemetry SDK and in a real process killed inside a tool.

Spans get IDs from a counting IdGenerator (the SDK's own extension point: span IDs 1, 2, ...
in the order spans start), so each expected `src` is derived from the fixture by hand.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from pydantic_ai import Agent, ApprovalRequired, DeferredToolRequests, InstrumentationSettings, RunContext, Tool
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from crashsweep.importers import otlp, spans
from crashsweep.otel import CrashsweepSpanProcessor
from crashsweep.spec.history import Event, args_digest, parse
from tests.counting_ids import Counting

pytestmark = pytest.mark.usefixtures("no_event_loop_left")  # run_sync in this process (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[1]
SPAN = "log.jsonl:span 000000000000000"
"""The src of span N (1 to 9) in the log: this prefix and N."""


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[TracerProvider]:
    """A TracerProvider whose only processor is crashsweep's, writing tmp_path/log.jsonl."""
    made = TracerProvider(id_generator=Counting())
    made.add_span_processor(CrashsweepSpanProcessor(tmp_path / "log.jsonl"))
    yield made
    made.shutdown()


def tool(name: str, call_id: str, **more: str) -> dict[str, str]:
    """A GenAI execute_tool span's attributes."""
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id} | more


def events(path: Path) -> tuple[Event, ...]:
    """The log's events, their times checked (there, never going back) and then set to 0."""
    history = parse(path.read_text())
    times = [event.time for event in history.events]
    assert all(time > 0 for time in times)
    assert times == sorted(times)
    return tuple(dataclasses.replace(event, time=0.0) for event in history.events)


def test_the_invoke_is_on_disk_before_the_tool_runs(provider: TracerProvider, tmp_path: Path) -> None:
    """Inside the tool's body, the log already holds its header and the tool's invoke."""
    log = tmp_path / "log.jsonl"
    arguments = {"gen_ai.tool.call.arguments": '{"title": "bug"}', "crashsweep.idempotency_key": "k-1"}
    with provider.get_tracer("t").start_as_current_span(
        "execute_tool create_issue", attributes=tool("create_issue", "call_1", **arguments)
    ):
        inside = log.read_text().splitlines()
    assert len(inside) == 2
    header = json.loads(inside[0])
    assert (header["crashsweep_history"], header["facts"], sorted(header["unseen"])) == (
        1,
        [],
        ["approvals", "effects", "status", "transcript"],
    )
    # No conversation ID: the run is the trace's ID (trace 1); the arguments' canonical JSON is
    # {"title":"bug"}, whose digest spec/history.args_digest gives (tested in tests/spec/test_history.py).
    fields: dict[str, Any] = {"call_id": "call_1", "tool": "create_issue", "key": "k-1"}
    fields["args_digest"] = args_digest('{"title":"bug"}')
    trace = "0" * 31 + "1"
    assert events(log) == (
        Event(trace, 0, 1, "invoke", "tool_run", **fields, src=SPAN + "1"),
        Event(trace, 0, 2, "ok", "tool_run", **fields, src=SPAN + "1"),
    )


def test_ends_runs_and_spans_that_are_no_tools(provider: TracerProvider, tmp_path: Path) -> None:
    """An error ends an attempt `fail`; a tool takes its ancestor's conversation; other spans write nothing."""
    tracer = provider.get_tracer("t")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-1"}
    with tracer.start_as_current_span("invoke_agent a", attributes=agent):  # span 1
        with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat"}):  # span 2
            pass
        with tracer.start_as_current_span("step", attributes={}):  # span 3: no tool, no conversation of its own
            failing = tracer.start_span("execute_tool comment", attributes=tool("comment", "call_2"))  # span 4
            failing.set_status(Status(StatusCode.ERROR, "tracker down"))
            failing.end()
        # OpenInference's kind TOOL: the tool's name is the span's until its end sets tool.name.
        with tracer.start_as_current_span("search", attributes={"openinference.span.kind": "TOOL"}):  # span 5
            pass
    assert events(tmp_path / "log.jsonl") == (
        Event("conv-1", 0, 1, "invoke", "tool_run", call_id="call_2", tool="comment", src=SPAN + "4"),
        Event(
            "conv-1", 0, 2, "fail", "tool_run", call_id="call_2", tool="comment", detail="tracker down", src=SPAN + "4"
        ),
        Event("conv-1", 0, 3, "invoke", "tool_run", tool="search", src=SPAN + "5"),
        Event("conv-1", 0, 4, "ok", "tool_run", tool="search", src=SPAN + "5"),
        # The agent span (1) ends last, with no error: the run finished.
        Event("conv-1", 0, 5, "ok", "run_status", status="finished", src=SPAN + "1"),
    )


def test_how_runs_end(provider: TracerProvider, tmp_path: Path) -> None:
    """The end of a run's outermost agent span says how it ended; a paused or unended run says nothing."""
    tracer = provider.get_tracer("t")

    def agent(conversation: str, **more: str) -> dict[str, str]:
        return {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": conversation} | more

    with tracer.start_as_current_span("invoke_agent a", attributes=agent("A")):  # span 1, trace 1
        with tracer.start_as_current_span("invoke_agent a", attributes=agent("A")):  # span 2: inside A's, no end
            pass
        with tracer.start_as_current_span("invoke_agent b", attributes=agent("B")):  # span 3: B's outermost
            pass
    failing = tracer.start_span("invoke_agent c", attributes=agent("C"))  # span 4, trace 2
    failing.set_status(Status(StatusCode.ERROR, "model refused"))
    failing.end()
    paused = '{"calls": [], "approvals": [{"tool_name": "create_issue"}]}'  # a DeferredToolRequests' JSON
    with tracer.start_as_current_span("invoke_agent d", attributes=agent("D", final_result=paused)):  # span 5
        pass
    with tracer.start_as_current_span("invoke_agent e", attributes=agent("E")):  # span 6, trace 4
        deferring = tracer.start_span("execute_tool x", attributes=tool("x", "call_x"))  # span 7
        deferring.set_attribute("pydantic_ai.tool.deferral.name", "ApprovalRequired")
        deferring.end()
    tracer.start_span("invoke_agent f", attributes=agent("F"))  # span 8: never ends (its process was killed)
    deferral = "deferred (ApprovalRequired)"
    assert events(tmp_path / "log.jsonl") == (
        Event("B", 0, 1, "ok", "run_status", status="finished", src=SPAN + "3"),
        Event("A", 0, 2, "ok", "run_status", status="finished", src=SPAN + "1"),
        Event("C", 0, 3, "fail", "run_status", status="failed", detail="model refused", src=SPAN + "4"),
        Event("E", 0, 4, "invoke", "tool_run", call_id="call_x", tool="x", src=SPAN + "7"),
        Event("E", 0, 5, "fail", "tool_run", call_id="call_x", tool="x", detail=deferral, src=SPAN + "7"),
    )


def test_writers_take_turns_and_each_is_an_incarnation(tmp_path: Path) -> None:
    """Two processors on one file (two processes' worth): the second is incarnation 1, seq goes on across both."""
    log = tmp_path / "log.jsonl"
    first, second = TracerProvider(id_generator=Counting()), TracerProvider(id_generator=Counting())
    first.add_span_processor(CrashsweepSpanProcessor(log))
    second.add_span_processor(CrashsweepSpanProcessor(log))
    a = first.get_tracer("t").start_span("execute_tool a", attributes=tool("a", "call_a"))  # first's span 1: seq 1
    b = second.get_tracer("t").start_span("execute_tool b", attributes=tool("b", "call_b"))  # second's span 1: seq 2
    a.end()  # seq 3, read after the second's line
    b.end()  # seq 4
    first.shutdown()
    second.shutdown()
    trace = "0" * 31 + "1"  # each provider's first trace
    assert [(e.incarnation, e.seq, e.type, e.tool) for e in events(log)] == [
        (0, 1, "invoke", "a"),
        (1, 2, "invoke", "b"),
        (0, 3, "ok", "a"),
        (1, 4, "ok", "b"),
    ]
    assert {event.run for event in events(log)} == {trace}


def test_a_forked_child_is_an_incarnation_of_its_own(provider: TracerProvider, tmp_path: Path) -> None:
    """A child forked after the parent wrote: its lines are incarnation 1, the parent's stay 0, seq goes on."""
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("execute_tool a", attributes=tool("a", "call_a")):  # seq 1, 2
        pass
    child = os.fork()
    if child == 0:  # the child: one tool span (seq 3, 4), then out without running anything of pytest's
        try:
            with tracer.start_as_current_span("execute_tool b", attributes=tool("b", "call_b")):
                pass
        finally:
            os._exit(0)
    assert os.waitpid(child, 0)[1] == 0
    with tracer.start_as_current_span("execute_tool c", attributes=tool("c", "call_c")):  # seq 5, 6
        pass
    assert [(e.incarnation, e.seq, e.type, e.tool) for e in events(tmp_path / "log.jsonl")] == [
        (0, 1, "invoke", "a"),
        (0, 2, "ok", "a"),
        (1, 3, "invoke", "b"),
        (1, 4, "ok", "b"),
        (0, 5, "invoke", "c"),
        (0, 6, "ok", "c"),
    ]


def test_after_shutdown_nothing_is_written(tmp_path: Path) -> None:
    """Spans of a provider whose processor was shut down leave the log as it was."""
    processor = CrashsweepSpanProcessor(tmp_path / "log.jsonl")
    made = TracerProvider()
    made.add_span_processor(processor)
    processor.shutdown()
    with made.get_tracer("t").start_as_current_span("execute_tool a", attributes=tool("a", "call_a")):
        pass
    assert (tmp_path / "log.jsonl").read_bytes() == b""


def test_a_torn_last_line_is_cut_before_the_next(provider: TracerProvider, tmp_path: Path) -> None:
    """A line a power cut tore (no newline) was never acknowledged: the next writer truncates it."""
    log = tmp_path / "log.jsonl"
    header = '{"crashsweep_history": 1, "expected": [], "gated": [], "facts": []}\n'
    log.write_text(header + '{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "invo')
    # The provider's processor opened the file already; its first write reads what is there.
    with provider.get_tracer("t").start_as_current_span("execute_tool x", attributes=tool("x", "call_x")):
        pass
    lines = log.read_text().splitlines()
    assert lines[0] == header.strip()
    # The torn line held seq 1 of incarnation 0, but no complete line did: the new lines start again.
    assert [(e.incarnation, e.seq, e.type) for e in events(log)] == [(0, 1, "invoke"), (0, 2, "ok")]


def pydantic_ai_run(tmp_path: Path, ending: str) -> None:
    """One pydantic-ai run, instrumented by pydantic-ai itself, to the processor's log and an OTLP file.

    The model calls create_issue once (call_A), then answers "done". How the tool ends the run:
    `finish` returns; `raise` raises RuntimeError (the run fails); `defer` raises ApprovalRequired
    (the run pauses, its output a DeferredToolRequests); `approval` is a `requires_approval` tool
    (the run pauses before any tool span starts).
    """
    made = TracerProvider(id_generator=Counting())
    made.add_span_processor(CrashsweepSpanProcessor(tmp_path / "log.jsonl"))
    made.add_span_processor(SimpleSpanProcessor(FileSpanExporter(tmp_path / "traces.jsonl")))

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("create_issue", {"title": "bug"}, tool_call_id="call_A")])
        return ModelResponse(parts=[TextPart("done")])

    def create_issue(ctx: RunContext[None], title: str) -> str:
        if ending == "raise":
            raise RuntimeError("tracker down")
        if ending == "defer" and not ctx.tool_call_approved:
            raise ApprovalRequired
        return "#1"

    tool = Tool(create_issue, requires_approval=ending == "approval")
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), name="triage", tools=[tool], output_type=[str, DeferredToolRequests]
    )
    agent.instrument = InstrumentationSettings(tracer_provider=made)
    try:
        output = asyncio.run(agent.run("go", conversation_id="conv-1")).output  # run_sync would leave its loop open
    except RuntimeError as error:
        output = str(error)
    made.shutdown()
    assert output == {"finish": "done", "raise": "tracker down"}.get(ending, output)
    assert isinstance(output, DeferredToolRequests) == (ending in ("defer", "approval"))


# What each ending gives, by hand from pydantic_ai_run's docstring: the tool's attempt (none when
# the approval is asked before the tool runs) and its end, then how the run ended; a paused run
# says nothing of its end.
ENDINGS = {
    "finish": [("invoke", "tool_run", ""), ("ok", "tool_run", ""), ("ok", "run_status", "finished")],
    "raise": [("invoke", "tool_run", ""), ("fail", "tool_run", ""), ("fail", "run_status", "failed")],
    "defer": [("invoke", "tool_run", ""), ("fail", "tool_run", "")],
    "approval": [],
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_the_processor_and_the_otlp_importer_read_a_pydantic_ai_run_alike(tmp_path: Path, ending: str) -> None:
    """pydantic-ai's own instrumentation, to both: the same tool_run and run_status events (fields, span, time)."""
    pydantic_ai_run(tmp_path, ending)
    text = (tmp_path / "log.jsonl").read_text()
    logged = parse(text).events if text else ()

    def seen(found: tuple[Event, ...]) -> list[tuple[object, ...]]:
        ours = [e for e in found if e.f in ("tool_run", "run_status")]
        fields = [(e.run, e.type, e.f, e.call_id, e.tool, e.args_digest, e.status, e.detail) for e in ours]
        return [(*f, e.src.split(":")[1], e.time) for f, e in zip(fields, ours, strict=True)]

    (exported,) = otlp.read(tmp_path / "traces.jsonl")
    assert seen(logged) == seen(exported.events)
    assert [(e.type, e.f, e.status) for e in logged] == ENDINGS[ending]
    assert {e.run for e in logged} <= {"conv-1"}
    if ending == "raise":  # pydantic-ai describes the run's error as OTel's use_span does, "TYPE: message"
        assert logged[-1].detail == "RuntimeError: tracker down"


def test_without_the_sdk_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """With opentelemetry.sdk not importable, importing crashsweep.otel is one ImportError naming the extra."""
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    monkeypatch.delitem(sys.modules, "crashsweep.otel")
    with pytest.raises(ImportError) as refused:
        importlib.import_module("crashsweep.otel")
    assert str(refused.value) == (
        "crashsweep.otel needs the OpenTelemetry SDK: install the `otel` extra (pip install 'crashsweep[otel]')"
    )
    assert refused.value.__suppress_context__  # one message, not the SDK's ModuleNotFoundError under it


CHILD = """
import os, signal, sys
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from crashsweep.otel import CrashsweepSpanProcessor

class Counting(IdGenerator):
    spans = traces = 0
    def generate_span_id(self):
        self.spans += 1
        return self.spans
    def generate_trace_id(self):
        self.traces += 1
        return self.traces

provider = TracerProvider(id_generator=Counting())
provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(sys.argv[1])))  # the stock exporter
provider.add_span_processor(CrashsweepSpanProcessor(sys.argv[2]))
tracer = provider.get_tracer("agent")

def tool(name, call_id):
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}
    return tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes | {"gen_ai.conversation.id": "c"})

with tool("search_issues", "call_1"):
    pass
with tool("create_issue", "call_2"):
    if sys.argv[3] == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
provider.shutdown()
"""


def run_child(tmp_path: Path, how: str) -> int:
    """Run the agent process (search_issues, then create_issue, killed inside it when `how` is crash)."""
    child = [sys.executable, "-W", "error", "-c", CHILD, "traces.jsonl", "log.jsonl", how]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(child, cwd=tmp_path, env=env, timeout=60).returncode


def test_a_process_killed_inside_a_tool(tmp_path: Path) -> None:
    """SIGKILL inside create_issue: no span of it in the OTLP file; its invoke alone in the processor's log.

    Then the restarted process appends to the same log as incarnation 1, seq going on, and its
    own spans reach the OTLP file (it shuts down: the batch is exported).
    """
    assert run_child(tmp_path, "crash") == -9
    assert "create_issue" not in (tmp_path / "traces.jsonl").read_text()
    log = tmp_path / "log.jsonl"
    assert spans.recognises(log, log.read_bytes())
    search: dict[str, Any] = {"call_id": "call_1", "tool": "search_issues"}
    create: dict[str, Any] = {"call_id": "call_2", "tool": "create_issue"}
    crashed = (
        Event("c", 0, 1, "invoke", "tool_run", **search, src=SPAN + "1"),
        Event("c", 0, 2, "ok", "tool_run", **search, src=SPAN + "1"),
        Event("c", 0, 3, "invoke", "tool_run", **create, src=SPAN + "2"),  # no end: an attempt of unknown outcome
    )
    (history,) = spans.read(log)
    assert tuple(dataclasses.replace(event, time=0.0) for event in history.events) == crashed

    assert run_child(tmp_path, "finish") == 0
    # The restarted process's IDs count from 1 again: its spans are 1 and 2 too.
    assert events(log) == (
        *crashed,
        Event("c", 1, 4, "invoke", "tool_run", **search, src=SPAN + "1"),
        Event("c", 1, 5, "ok", "tool_run", **search, src=SPAN + "1"),
        Event("c", 1, 6, "invoke", "tool_run", **create, src=SPAN + "2"),
        Event("c", 1, 7, "ok", "tool_run", **create, src=SPAN + "2"),
    )
    exported = [event for history in otlp.read(tmp_path / "traces.jsonl") for event in history.events]
    assert [(e.type, e.call_id) for e in exported if e.tool == "create_issue"] == [
        ("invoke", "call_2"),
        ("ok", "call_2"),
    ]
