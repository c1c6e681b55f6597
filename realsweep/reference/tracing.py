"""The reference loop's OpenTelemetry spans, when $CRASHSWEEP_OTLP names a file (issue 46's contract, section 2).

A recorded run of the loop is what `crashsweep from-trace` reads: `start` installs, in the
process, an SDK TracerProvider whose SimpleSpanProcessor appends each span as it ends to the
file, as OTLP JSON lines (the `otel` extra's FileSpanExporter), and makes it the global
provider, so that the crash points the process passes become events of the span around them
(probe/crashpoint.py); `stop` shuts it down, flushing, when the process ends normally (a killed
process leaves the spans that had ended, none of those open at the kill). The spans, all under
the process's agent span `invoke_agent NAME`: `chat scripted` per ask of the scripted model,
`execute_tool TOOL` per send to the tracker, `save WHAT` per checkpoint save, `lock KIND` per
lock taken, `approval C` per question to the person.

Without the variable nothing of OpenTelemetry is imported and each helper returns one shared
`nullcontext` (the reference loop is the real sweep's hottest path: a span site then costs a
call); without the SDK, or when the file cannot be opened, the process says so on stderr and
records nothing: tracing never changes the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from crashsweep.spec import genai
from crashsweep.spec.job import Call, Job
from crashsweep.spec.job import arguments as arguments  # the scripted model's arguments: one rule, spec/job.py's

__all__ = [
    "OTLP",
    "agent",
    "approval",
    "arguments",
    "chat",
    "conversation",
    "lock",
    "reply",
    "result",
    "save",
    "start",
    "stop",
    "tool",
]

OTLP = "CRASHSWEEP_OTLP"
"""The file the spans are appended to (absolute, or relative to the process's work folder)."""

_OFF: AbstractContextManager[Any] = contextlib.nullcontext()
_provider: Any = None  # the SDK's TracerProvider, while tracing
_tracer: Any = None  # its tracer of the loop's spans
_agent: Any = None  # the process's agent span, while open


def start(workdir: Path) -> None:
    """Trace this process to $CRASHSWEEP_OTLP, if it is set and OpenTelemetry's SDK is installed."""
    global _provider, _tracer
    path = os.environ.get(OTLP)
    if not path or _provider is not None:
        return
    try:
        from crashsweep.otel import otlp_file
    except ImportError as error:
        print(f"{OTLP}: no spans recorded, OpenTelemetry is not installed (crashsweep[otel]): {error}", file=sys.stderr)
        return
    try:
        _provider = otlp_file(workdir / path)  # the file opened now, to append; the global provider
    except OSError as error:  # a trace that cannot be written changes nothing of the run
        print(f"{OTLP}: no spans recorded: {error}", file=sys.stderr)
        return
    _tracer = _provider.get_tracer("crashsweep.reference")


def stop() -> None:
    """Shut the provider down (its file flushed and closed); nothing when not tracing."""
    global _provider, _tracer
    provider, _provider, _tracer = _provider, None, None
    if provider is not None:
        provider.shutdown()


def _span(name: str, attributes: dict[str, Any]) -> AbstractContextManager[Any]:
    """A span made current while open; an exception through it gives it an error status (and goes on)."""
    opened: AbstractContextManager[Any] = _tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False
    )
    return opened


def agent(name: str, job: str) -> AbstractContextManager[Any]:
    """`invoke_agent NAME` around the process's work, for the design `name` on the job `job`."""
    if _tracer is None:
        return _OFF
    return _agent_span(name, job)


@contextlib.contextmanager
def _agent_span(name: str, job: str) -> Iterator[Any]:
    global _agent
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "crashsweep.job": job}
    with _span(f"invoke_agent {name}", attributes) as span:
        _agent = span
        try:
            yield span
        finally:
            _agent = None


def conversation(run: str) -> None:
    """Name the run on the agent span (`gen_ai.conversation.id`), as soon as the loop knows it."""
    if _agent is not None:
        _agent.set_attribute("gen_ai.conversation.id", run)


def chat() -> AbstractContextManager[Any]:
    """`chat scripted` around an ask of the scripted model; `reply` then says what it answered."""
    if _tracer is None:
        return _OFF
    return _span("chat scripted", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted"})


def reply(span: Any, job: Job, calls: Sequence[Call], ids: dict[str, str]) -> None:
    """The model's reply on its chat span: `calls` (by the IDs `ids` gives, else their own), none: the final answer."""
    if span is None:
        return
    made = ((ids.get(call.id, call.id), call.tool, arguments(job, call)) for call in calls)
    span.set_attribute("gen_ai.output.messages", genai.output_messages(made, "done"))


def tool(job: Job, call: Call, call_id: str, key: str | None) -> AbstractContextManager[Any]:
    """`execute_tool TOOL` around a send of `call` (`call_id`: the model's ID of it; `key`: the one sent)."""
    if _tracer is None:
        return _OFF
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(arguments(job, call)),
    }
    if key is not None:
        attributes["crashsweep.idempotency_key"] = key
    return _span(f"execute_tool {call.tool}", attributes)


def result(span: Any, answer: str) -> None:
    """The tool's answer on its span."""
    if span is not None:
        span.set_attribute("gen_ai.tool.call.result", answer)


def save(what: str) -> AbstractContextManager[Any]:
    """`save WHAT` around a checkpoint save."""
    if _tracer is None:
        return _OFF
    return _span(f"save {what}", {"crashsweep.save": what})


def lock(kind: str) -> AbstractContextManager[Any]:
    """`lock KIND` around taking a lock (KIND: file, os-lock, lease)."""
    if _tracer is None:
        return _OFF
    return _span(f"lock {kind}", {"crashsweep.lock": kind})


def approval(call: str) -> AbstractContextManager[Any]:
    """`approval C` around asking the person to approve the call `call` (the person approves)."""
    if _tracer is None:
        return _OFF
    return _span(f"approval {call}", {"crashsweep.approval.call": call, "crashsweep.approval.granted": True})
