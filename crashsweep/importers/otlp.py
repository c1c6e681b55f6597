"""OpenTelemetry spans as OTLP JSON (spec/HISTORY.md 7, kind `otlp`): tool runs, model calls, how runs ended.

The file is what the OpenTelemetry Collector's file exporter or the Python SDK's
`FileSpanExporter` (opentelemetry-exporter-otlp-json-file) writes: JSON Lines, each line
`{"resourceSpans": [...]}`; one whole JSON document `{"resourceSpans": [...]}` (pretty-printed
or not) is read too. Trace and span IDs are hex (the OTLP JSON encoding), nanoseconds integers
or decimal strings. A span found twice (the same trace and span ID) is read once.

What a span gives, read by crashsweep.spec.genai (the GenAI semantic conventions and each
instrumentation's variant, with the fields a tool span gives):

- a tool span: a `tool_run` attempt, `invoke` at its start, then `fail` at its end when its
  status is an error (code 2; `detail` its message) or it deferred (pydantic-ai's deferral: it
  did not finish its work), else `ok`. `time` is the start and the end in seconds. A pydantic-ai
  span whose arguments failed validation is no attempt: the tool's body never ran, and the span
  gives nothing;
- a model span: a `model_call` `invoke` at its start (its status is not read: an error mixes
  the model's refusals with transport errors);
- an agent span (`invoke_agent`): how the run ended. Only the run's last trace says it (an
  earlier trace's end was followed by more of the run: a restart, a next turn), by its
  outermost agent span of the run (the one ending last): `run_status` `ok` `finished`, or
  `fail` `failed` (`detail` the status message) for an error status. Nothing when the run
  paused for an approval: a tool of that trace deferred, or pydantic-ai's `final_result` is a
  DeferredToolRequests (a `requires_approval` tool makes no tool span). A pause another
  instrumentation does not mark (LangGraph's interrupt, the Agents SDK's interruptions) reads
  as `finished`. OpenInference's AGENT spans give no status (its OpenAI Agents processor sets
  OK on every trace's end, failed or not), nor do Temporal's workflow spans (the `temporal`
  kind reads the close event). `status` is among a run's facts when some trace of it holds an
  agent span; effects, transcript and approvals are never (`unseen` says why).

The run of a span is its own (`genai.own_run`: conversation, session, workflow ID), else its
nearest ancestor's in the file, else its trace ID in hex. Its incarnation: the run's traces in
order of their first span's start (0, 1, ...). `src` is "FILE:span ID".

A span is exported when it ends: a process killed inside a tool leaves nothing of that tool
(nor of its unexported batch, nor of the spans around it) in an OTLP file. crashsweep.otel's
processor writes each tool span's start to disk before the tool runs (kind `spans`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.importers.base import Kind, Unusable, place
from crashsweep.spec.genai import DEFERRED, deferred_requests, is_agent, is_model, own_run, tool_end, tool_fields
from crashsweep.spec.history import FAILED, FINISHED, Event, History

UNSEEN = {
    "effects": "spans record the agent's side, not the receiver's records (audit its ledger with them)",
    "transcript": "spans give the model calls, not the conversation's tool calls and results",
    "approvals": "spans record no approvals",
}
NO_STATUS = "the spans hold no agent span (invoke_agent) of this run"


@dataclass(frozen=True, slots=True)
class Span:
    """One span as read: its IDs (hex), name, nanoseconds, error status, scalar attributes, place."""

    trace: str
    span_id: str
    parent: str
    name: str
    start: int
    end: int
    error: bool
    message: str
    attributes: Mapping[str, str]
    position: int
    """Its order in the file (the n-th span read)."""
    events: tuple[SpanEvent, ...] = ()
    """Its events, in file order."""


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """One event of a span: its name, nanoseconds and scalar attributes (as text, as a span's)."""

    name: str
    time: int
    attributes: Mapping[str, str]


def recognises(path: Path, head: bytes) -> bool:
    """A JSON object that names `resourceSpans` near its start."""
    return head.lstrip().startswith(b"{") and b'"resourceSpans"' in head


def read(path: Path) -> tuple[History, ...]:
    """The file's histories, one a run, in the order the runs began; Unusable naming the line."""
    spans = list(read_spans(path))
    return tuple(_history(path, run, group) for run, group in runs(spans).items())


def read_spans(path: Path) -> Iterator[Span]:
    """Every span of the file, once each, in file order; Unusable "FILE:LINE: where: what"."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise Unusable(f"{path}: cannot be read ({error})") from None
    seen: set[tuple[str, str]] = set()
    for line, document in _documents(path, text):
        if not isinstance(document, dict):
            raise Unusable(f"{path}:{line}: expected a JSON object, got {type(document).__name__}")
        for where, data in _span_objects(document, f"{path}:{line}"):
            span = _span(data, len(seen), where)
            if (span.trace, span.span_id) not in seen:
                seen.add((span.trace, span.span_id))
                yield span


def _documents(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """(line, JSON value): each line of JSON Lines, or the one document the whole text is."""
    lines = text.splitlines()
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise Unusable(f"{path}:1: empty: no spans")
    try:
        json.loads(lines[first])
    except ValueError:
        try:
            yield first + 1, json.loads(text)
        except json.JSONDecodeError as error:
            raise Unusable(f"{path}:{error.lineno}: not JSON ({error.msg} at column {error.colno})") from None
        return
    for number, line in enumerate(lines[first:], first + 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                raise Unusable(f"{path}:{number}: not JSON ({error.msg} at column {error.colno})") from None


def _span_objects(document: dict[str, Any], at: str) -> Iterator[tuple[str, Any]]:
    """("FILE:LINE: where", span object) for each span of an OTLP traces document; Unusable for a bad shape."""
    if not isinstance(document.get("resourceSpans"), list):
        raise Unusable(f"{at}: no resourceSpans list: not OTLP JSON traces")
    for r, resource in enumerate(document["resourceSpans"]):
        scopes = resource.get("scopeSpans", []) if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            raise Unusable(f"{at}: resourceSpans[{r}]: expected an object with a scopeSpans list")
        for s, scope in enumerate(scopes):
            spans = scope.get("spans", []) if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                raise Unusable(f"{at}: resourceSpans[{r}].scopeSpans[{s}]: expected an object with a spans list")
            for n, span in enumerate(spans):
                yield f"{at}: resourceSpans[{r}].scopeSpans[{s}].spans[{n}]", span


def _span(data: Any, position: int, where: str) -> Span:
    """One span object checked and read; Unusable "WHERE: what" for a missing or bad field."""
    if not isinstance(data, dict):
        raise Unusable(f"{where}: expected a span object, got {type(data).__name__}")
    trace, span_id = _hex(data, "traceId", 32, where), _hex(data, "spanId", 16, where)
    parent = data.get("parentSpanId") or ""
    if parent:
        parent = _hex(data, "parentSpanId", 16, where)
    name = data.get("name")
    if not isinstance(name, str):
        raise Unusable(f"{where}: no name")
    start, end = _nanos(data, "startTimeUnixNano", where), _nanos(data, "endTimeUnixNano", where)
    if end < start:
        raise Unusable(f"{where}: endTimeUnixNano {end} is before startTimeUnixNano {start}")
    status = data.get("status") or {}
    if not isinstance(status, dict):
        raise Unusable(f"{where}: status: expected an object")
    error = status.get("code") in (2, "2", "STATUS_CODE_ERROR")
    message = status.get("message")
    message = message if isinstance(message, str) else ""
    attributes = _attributes(data, where)
    return Span(trace, span_id, parent, name, start, end, error, message, attributes, position, _events(data, where))


def _events(data: dict[str, Any], where: str) -> tuple[SpanEvent, ...]:
    """The span's events (`events`: name, timeUnixNano, attributes); Unusable for a bad one."""
    items = data.get("events") or []
    if not isinstance(items, list):
        raise Unusable(f"{where}: events: expected a list")
    found = []
    for n, item in enumerate(items):
        at = f"{where}.events[{n}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise Unusable(f"{at}: expected an object with a name")
        found.append(SpanEvent(item["name"], _nanos(item, "timeUnixNano", at), _attributes(item, at)))
    return tuple(found)


def _hex(data: dict[str, Any], field: str, digits: int, where: str) -> str:
    value = data.get(field)
    if value is None or value == "":
        raise Unusable(f"{where}: no {field}")
    if not isinstance(value, str) or len(value) != digits or any(c not in "0123456789abcdefABCDEF" for c in value):
        raise Unusable(f"{where}: {field} {value!r}: expected {digits} hex digits")
    return value.lower()


def _nanos(data: dict[str, Any], field: str, where: str) -> int:
    value = data.get(field)
    if value is None:
        raise Unusable(f"{where}: no {field}")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise Unusable(f"{where}: {field} {value!r}: expected nanoseconds since the epoch, a whole number")


def _attributes(data: dict[str, Any], where: str) -> dict[str, str]:
    """The span's attributes with a scalar value, as text (arrays and maps are left out)."""
    found: dict[str, str] = {}
    items = data.get("attributes") or []
    if not isinstance(items, list):
        raise Unusable(f"{where}: attributes: expected a list")
    for n, item in enumerate(items):
        if not (isinstance(item, dict) and isinstance(item.get("key"), str) and isinstance(item.get("value"), dict)):
            raise Unusable(f'{where}: attributes[{n}]: expected {{"key": "...", "value": {{...}}}}')
        value = item["value"]
        for kind in ("stringValue", "intValue", "doubleValue", "boolValue"):
            if kind in value:
                scalar = value[kind]
                found[item["key"]] = json.dumps(scalar) if isinstance(scalar, bool) else str(scalar)
    return found


def runs(spans: list[Span]) -> dict[str, list[Span]]:
    """The spans by run, runs in the order they began; each span's run by its own or its ancestors' attribute."""
    index = {(span.trace, span.span_id): span for span in spans}
    known: dict[tuple[str, str], str] = {}

    def run_of(span: Span) -> str:
        chain: list[tuple[str, str]] = []
        current: Span | None = span
        found = span.trace
        while current is not None:
            key = (current.trace, current.span_id)
            own = own_run(current.attributes)
            if key in known or own is not None:
                found = known.get(key) or own or span.trace
                break
            if key in chain:  # a cycle of parents: no ancestor says
                break
            chain.append(key)
            current = index.get((current.trace, current.parent)) if current.parent else None
        known.update(dict.fromkeys(chain, found))
        return found

    runs: dict[str, list[Span]] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.position)):
        runs.setdefault(run_of(span), []).append(span)
    return runs


def _history(path: Path, run: str, spans: list[Span]) -> History:
    """One run's History: its spans' events in time order, numbered from 1."""
    traces = list(dict.fromkeys(span.trace for span in spans))  # spans are in start order
    incarnation = {trace: n for n, trace in enumerate(traces)}
    timed: list[tuple[int, int, int, Event]] = []
    for span in spans:
        for when, phase, event in _span_events(path, run, incarnation[span.trace], span):
            timed.append((when, phase, span.position, event))
    status = _status(path, run, len(traces) - 1, [s for s in spans if s.trace == traces[-1]])
    if status is not None:
        timed.append(status)
    timed.sort(key=lambda item: item[:3])
    events = tuple(dataclasses.replace(event, seq=seq) for seq, (*_, event) in enumerate(timed, 1))
    if any(is_agent(span.attributes) for span in spans):
        return History(events, facts=frozenset({"status"}), unseen=UNSEEN)
    return History(events, facts=frozenset(), unseen={**UNSEEN, "status": NO_STATUS})


def _span_events(path: Path, run: str, incarnation: int, span: Span) -> Iterator[tuple[int, int, Event]]:
    """(nanoseconds, 0 for a start or 1 for an end, event) for what one span gives."""
    src = place(path, f"span {span.span_id}")
    if is_model(span.attributes):
        yield span.start, 0, Event(run, incarnation, 0, "invoke", "model_call", src=src, time=span.start / 1e9)
    fields = tool_fields(span.name, span.attributes)
    if fields is None:
        return
    yield span.start, 0, Event(run, incarnation, 0, "invoke", "tool_run", **fields, src=src, time=span.start / 1e9)
    outcome, detail = tool_end(span.attributes, span.error, span.message)
    end = Event(run, incarnation, 0, outcome, "tool_run", **fields, detail=detail, src=src, time=span.end / 1e9)
    yield span.end, 1, end


def _status(path: Path, run: str, incarnation: int, last: list[Span]) -> tuple[int, int, int, Event] | None:
    """How the run ended, by the outermost agent span of its last trace; None when it does not say."""
    ids = {span.span_id: span for span in last}

    def outermost(span: Span) -> bool:
        above, parent = {span.span_id}, ids.get(span.parent)
        while parent is not None and parent.span_id not in above:  # (a cycle of parents ends the walk)
            if is_agent(parent.attributes):
                return False
            above.add(parent.span_id)
            parent = ids.get(parent.parent)
        return True

    agents = [span for span in last if is_agent(span.attributes) and outermost(span)]
    if not agents or any(DEFERRED in span.attributes for span in last):
        return None
    span = max(agents, key=lambda s: (s.end, s.position))
    if deferred_requests(span.attributes.get("final_result")):
        return None
    src, when = place(path, f"span {span.span_id}"), span.end / 1e9
    if span.error:
        event = Event(run, incarnation, 0, "fail", "run_status", status=FAILED, detail=span.message, src=src, time=when)
    else:
        event = Event(run, incarnation, 0, "ok", "run_status", status=FINISHED, src=src, time=when)
    return span.end, 2, span.position, event


KIND = Kind("otlp", "OpenTelemetry spans as OTLP JSON (the collector's file exporter, the SDK's)", recognises, read)
