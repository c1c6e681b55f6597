"""GenAI spans around a built-in agent's run, its scripted model's replies and its tool calls (issue 46's contract).

An agent with no GenAI instrumentation of its own (the DBOS agent) records what `crashsweep
from-trace` reads with these helpers: `invoke_agent NAME` around the run in the process, `chat
scripted` around each ask of the scripted model with the reply in `gen_ai.output.messages`
(spec/FROM_TRACE.md section 2: one assistant message whose parts are the reply's `tool_call`s,
or a `text` part for the final answer), and `execute_tool TOOL` around each tool call with the
model's call ID, its arguments, its result and the idempotency key it sent. The names and
attributes are those realsweep/reference/tracing.py gives the reference loop, so the two read
alike. `start(path)` makes the global provider that appends every span to `path` as OTLP JSON
(crashsweep.otel.otlp_file), so the crash points the process passes are recorded beside them.

This module imports OpenTelemetry: an agent imports it only when it traces (when $CRASHSWEEP_OTLP
is set), so an untraced agent, the one a sweep runs, loads nothing of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Tracer

from crashsweep.otel import otlp_file
from crashsweep.realsweep.adapters.script import ToolCall, TrackerTools
from crashsweep.spec import genai

MODEL = "scripted"
"""The model's name on its spans (`gen_ai.request.model`): the scripted model."""
KEY = "crashsweep.idempotency_key"
"""The attribute of the key a tool call sent (the otlp importer and from-trace read it)."""
FINAL = "done"
"""The scripted model's final answer (a reply with no calls)."""


def start(path: Path) -> tuple[TracerProvider, Tracer]:
    """The global provider appending every span to `path` as OTLP JSON lines, and its tracer of the agent's spans."""
    provider = otlp_file(path)
    return provider, provider.get_tracer("crashsweep.adapters")


def output_messages(calls: Sequence[ToolCall], final: str = FINAL) -> str:
    """`gen_ai.output.messages` for a reply: its calls as `tool_call` parts in order; no calls, `final` as text."""
    return genai.output_messages(((call.id, call.name, call.args) for call in calls), final)


class Spans:
    """The agent's, model's and tools' spans, by one tracer; each made current while open.

    `replied` puts a reply on its chat span, `answered` an answer on its tool span. An exception
    through a span gives it an error status and goes on (not recorded as an event).
    """

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    @contextmanager
    def agent(self, name: str, conversation: str, job: str) -> Iterator[Span]:
        """`invoke_agent NAME` around the run in this process: `conversation` the run's ID, `job` the job's name."""
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": conversation,
            "crashsweep.job": job,
        }
        with self.tracer.start_as_current_span(
            f"invoke_agent {name}", attributes=attributes, record_exception=False
        ) as span:
            yield span

    @contextmanager
    def chat(self) -> Iterator[Span]:
        """`chat scripted` around an ask of the scripted model; `replied` then puts its reply on it."""
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL}
        with self.tracer.start_as_current_span(f"chat {MODEL}", attributes=attributes, record_exception=False) as span:
            yield span

    @contextmanager
    def tool(self, call: ToolCall) -> Iterator[Span]:
        """`execute_tool TOOL` around one call of a reply (its ID the one the model handed out); `answered` after."""
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": json.dumps(call.args),
        }
        with self.tracer.start_as_current_span(
            f"execute_tool {call.name}", attributes=attributes, record_exception=False
        ) as span:
            yield span

    @staticmethod
    def replied(span: Span, calls: Sequence[ToolCall], final: str = FINAL) -> None:
        """The model's reply on its chat span: `calls`, or (none) the final answer `final`."""
        span.set_attribute("gen_ai.output.messages", output_messages(calls, final))

    @staticmethod
    def answered(span: Span, result: str) -> None:
        """The tool's answer on its tool span."""
        span.set_attribute("gen_ai.tool.call.result", result)


class KeysOnSpans(TrackerTools):
    """The tracker tools' bodies, each key they send also put on the current span (the call's tool span).

    `TrackerTools.key` is asked exactly when a write goes out with a key (a comment on no issue
    sends nothing and asks none), so the span says a key was sent only when one was.
    """

    def key(self, *parts: str) -> str | None:
        """The key of the call identified by `parts` (None when keys are off), put on the current span."""
        sent = super().key(*parts)
        span = trace.get_current_span()
        if sent is not None and span.is_recording():
            span.set_attribute(KEY, sent)
        return sent
