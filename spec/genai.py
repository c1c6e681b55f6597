"""How a span's attributes read, by the OpenTelemetry GenAI semantic conventions and each instrumentation's variant.

One reading for both readers of spans: the `otlp` importer (crashsweep/importers/otlp.py, spans
an exporter wrote after they ended) and crashsweep.otel's span processor (SDK spans, as they
start and end). Each function takes a span's name and its attribute mapping, never a span
object: the importer's attributes are the exported scalars as text, the processor's the SDK's
values (only text values are read, so both read one span alike).

What the attributes say:

- a tool span: `gen_ai.operation.name` = `execute_tool`; or, without an operation name, a span
  with `gen_ai.tool.name`, an OpenInference span of kind TOOL (`openinference.span.kind`), or
  Temporal's `RunActivity:NAME` span with a `temporalActivityID`. A pydantic-ai span with
  `pydantic_ai.tool.failure_stage` (its arguments failed validation) is no attempt: the tool's
  body never ran. One with `pydantic_ai.tool.deferral.name` deferred: the body raised
  ApprovalRequired or CallDeferred and did not finish its work;
- a model span: `chat`, `text_completion`, `generate_content`, or OpenInference's kind LLM;
- an agent span: `invoke_agent`. pydantic-ai's `final_result` on it is a DeferredToolRequests'
  JSON (`calls` and `approvals` lists) when the run paused for approvals or results.

A tool span's fields: `gen_ai.tool.call.id` is `call_id`; `gen_ai.tool.name` (else
OpenInference's `tool.name`, else the span's name without `RunActivity:`) is `tool`; the
captured arguments, `gen_ai.tool.call.arguments` (else pydantic-ai's version-2 `tool_arguments`,
else OpenInference's `input.value`), are `args_digest` = `args_digest(text)` (spec/history.py: its
canonical JSON's digest, text that is not JSON as it is);
`crashsweep.idempotency_key` is `key`; a Temporal activity's `temporalActivityID` is its `call`
(the runtime's key: the same across the activity's retries). A span's own run is its
`gen_ai.conversation.id` (else OpenInference's `session.id`, else Temporal's
`temporalWorkflowID`); a span without one takes its nearest ancestor's, else its trace ID's
(the readers walk the parents).

What real instrumentations emit (read from their code and runs, the versions the `otel` and
framework extras pin): pydantic-ai 2.68 (`Instrumentation` capability, `agent.instrument`,
`Agent.instrument_all()`): `execute_tool NAME` spans with `gen_ai.operation.name`,
`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments` (with content;
`tool_arguments` in its version 2), `gen_ai.conversation.id` on every span; `chat` and
`invoke_agent` spans. OpenLLMetry's opentelemetry-instrumentation-openai-agents 0.62.4:
`execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.arguments`, no call ID, no conversation.
OpenInference's openinference-instrumentation-openai-agents 2.6.0: kind TOOL, `tool.name`,
`input.value` (the arguments' JSON), no call ID. OpenLLMetry's opentelemetry-instrumentation-
langchain 0.62.4 (LangGraph's ToolNode): `execute_tool`, `gen_ai.tool.name`, and as
`gen_ai.tool.call.arguments` the callback's payload `{"input_str", "inputs", "kwargs", ...}`:
the arguments are its `inputs` and the call ID its `kwargs.tool_call_id`; the thread ID is the
root span's `gen_ai.conversation.id`. temporalio 1.35's TracingInterceptor:
`RunActivity:TYPE` spans with `temporalActivityID`, `temporalWorkflowID`, `temporalRunID`
(run against the dev server by hand; its test would need the server).
Without a call ID, audit joins attempts by tool and arguments (spec/HISTORY.md 7, rule 3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from crashsweep.spec.history import args_digest

RUN_ATTRIBUTES = ("gen_ai.conversation.id", "session.id", "temporalWorkflowID")
"""A span's own run, first found first: the conversation, OpenInference's session, Temporal's workflow."""
ARGUMENT_ATTRIBUTES = ("gen_ai.tool.call.arguments", "tool_arguments", "input.value")
"""A tool call's captured arguments, first found first: GenAI's, pydantic-ai's version 2, OpenInference's."""
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
"""The GenAI operations that are a request to a model."""
KEY = "crashsweep.idempotency_key"
"""The key a tool sends, set by the tool (or its wrapper) on its span."""
DEFERRED = "pydantic_ai.tool.deferral.name"
"""pydantic-ai: the tool deferred (ApprovalRequired, CallDeferred); its value names which."""
INVALID = "pydantic_ai.tool.failure_stage"
"""pydantic-ai: the tool's arguments failed validation; its body never ran."""


def tool_fields(name: str, attributes: Mapping[str, Any]) -> dict[str, str] | None:
    """A tool span's call, call_id, tool, args_digest and key (empty when unknown); None for another span."""
    text = {key: value for key, value in attributes.items() if isinstance(value, str)}
    operation = text.get("gen_ai.operation.name")
    activity = name.startswith("RunActivity:") and "temporalActivityID" in text
    if operation is not None and operation != "execute_tool":
        return None
    tool_kind = "gen_ai.tool.name" in text or text.get("openinference.span.kind") == "TOOL" or activity
    if operation is None and not tool_kind:
        return None
    if INVALID in attributes:
        return None
    tool = text.get("gen_ai.tool.name") or text.get("tool.name") or name.removeprefix("RunActivity:")
    fields = {"call": text.get("temporalActivityID", "") if activity else "", "tool": tool}
    fields["call_id"], fields["key"] = text.get("gen_ai.tool.call.id", ""), text.get(KEY, "")
    arguments = next((text[a] for a in ARGUMENT_ATTRIBUTES if a in text), None)
    fields["args_digest"] = "" if arguments is None else args_digest(arguments)
    payload = _langchain_payload(arguments)
    if payload is not None:  # the arguments are the payload's inputs, the call ID in its kwargs
        fields["args_digest"] = args_digest(payload["inputs"])
        call_id = payload["kwargs"].get("tool_call_id")
        fields["call_id"] = fields["call_id"] or (call_id if isinstance(call_id, str) else "")
    return fields


def _langchain_payload(arguments: str | None) -> dict[str, Any] | None:
    """OpenLLMetry's LangChain callback payload, when that is what the arguments attribute holds."""
    if arguments is None or not arguments.startswith("{"):
        return None
    try:
        data = json.loads(arguments)
    except ValueError:
        return None
    if isinstance(data, dict) and {"input_str", "inputs"} <= set(data) and isinstance(data.get("kwargs"), dict):
        return data
    return None


def tool_end(attributes: Mapping[str, Any], error: bool, message: str) -> tuple[str, str]:
    """(type, detail) of a tool span's end: `fail` for a deferral or an error status (its message), else `ok`."""
    if DEFERRED in attributes:
        return "fail", f"deferred ({attributes[DEFERRED]})"
    if error:
        return "fail", message
    return "ok", ""


def is_model(attributes: Mapping[str, Any]) -> bool:
    """A request to a model: a GenAI inference operation, or OpenInference's kind LLM."""
    operation = attributes.get("gen_ai.operation.name")
    if operation is None:
        return attributes.get("openinference.span.kind") == "LLM"
    return isinstance(operation, str) and operation in MODEL_OPERATIONS


def is_agent(attributes: Mapping[str, Any]) -> bool:
    """An agent's run (`invoke_agent`)."""
    return attributes.get("gen_ai.operation.name") == "invoke_agent"


def deferred_requests(result: object) -> bool:
    """Whether pydantic-ai's `final_result` is a DeferredToolRequests: the run paused for approvals or results."""
    try:
        data = json.loads(result if isinstance(result, str) else "")
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("calls"), list) and isinstance(data.get("approvals"), list)


def own_run(attributes: Mapping[str, Any]) -> str | None:
    """The span's own run (conversation, session, workflow ID: the first that is non-empty text), if it has one."""
    return next((value for a in RUN_ATTRIBUTES if isinstance(value := attributes.get(a), str) and value), None)


def output_messages(calls: Iterable[tuple[str, str, Any]], final: str) -> str:
    """`gen_ai.output.messages` of a model's reply: one assistant message, its calls as `tool_call` parts.

    Each (ID, tool, arguments) a part, in order; with no call, `final` as its text. What
    crashsweep's traced loops write and from-trace reads (crashsweep/fromtrace/recording.py).
    """
    parts: list[dict[str, Any]] = [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return json.dumps([{"role": "assistant", "parts": parts or [{"type": "text", "content": final}]}])
