"""One uninterrupted run, read from its OTLP JSON spans: what the model replied, what the tools did, what was saved.

`from-trace` (spec/FROM_TRACE.md) derives a job, a draft design, the crash points and a cassette
from one run. This module reads the run and refuses what cannot be one (section 1): two runs in
the file, a run that was restarted or ended in an error, a reply whose calls have no tool span,
a tool span no reply asked for, model spans without their replies' content. Everything else is
derived from the `Recording` this module returns (derive.py), never from the file again.

What each span gives (spec/FROM_TRACE.md section 2, the GenAI conventions and crashsweep's own):
a model span (`chat`, ...) its reply from `gen_ai.output.messages` (the `parts` of the assistant
message: `tool_call` parts in order, or text); a tool span (genai.tool_fields) the call it ran,
its arguments (`gen_ai.tool.call.arguments`, pydantic-ai's `tool_arguments`) and result
(`gen_ai.tool.call.result`, pydantic-ai's `tool_response`), the key it sent, whether it deferred;
`save WHAT` spans (`crashsweep.save`), `lock KIND` spans (`crashsweep.lock`) and `approval C`
spans (`crashsweep.approval.call`); and every `crashsweep.point` event or span a crash point
passed (crashpoint.py records them while a program traces itself), ordered by time, then by
the process's own count of points.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.importers import otlp
from crashsweep.importers.base import Unusable
from crashsweep.spec.genai import DEFERRED, is_agent, is_model, tool_fields

POINT = "crashsweep.point"
"""The event (or span) a crash point passed leaves in a trace."""
RESULTS = ("gen_ai.tool.call.result", "tool_response")
"""A tool call's result, first found first: GenAI's, pydantic-ai's version 2."""
ARGUMENTS = ("gen_ai.tool.call.arguments", "tool_arguments")


class TraceError(ValueError):
    """A trace from-trace cannot use: the message is one line, naming the file and what is missing."""


@dataclass(frozen=True, slots=True)
class Asked:
    """One call of a model reply: the ID the model handed out, the tool, its arguments (JSON)."""

    id: str
    tool: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class Reply:
    """One model reply: its calls in order, or (no calls) its final text; `start` in nanoseconds; `span` its ID."""

    calls: tuple[Asked, ...]
    final: str | None
    start: int
    span: str


@dataclass(frozen=True, slots=True)
class ToolRun:
    """One tool span: the call, its result text, the key it sent, whether it failed or deferred, when."""

    call_id: str
    tool: str
    arguments: Any
    result: str | None
    key: str
    failed: bool
    deferred: bool
    start: int
    span: str


@dataclass(frozen=True, slots=True)
class Marked:
    """A crashsweep span: a save (`save WHAT`), a lock (`lock KIND`) or an approval (`approval C`); its value."""

    kind: str
    value: str
    start: int
    span: str
    points: tuple[str, ...]
    """The crash points passed inside it, in order."""


@dataclass(frozen=True, slots=True)
class Recording:
    """One uninterrupted run: its name, the replies, the tool runs, crashsweep's spans and the points passed."""

    path: Path
    run: str
    job: str
    agent: str
    replies: tuple[Reply, ...]
    tools: tuple[ToolRun, ...]
    marked: tuple[Marked, ...]
    points: tuple[str, ...]
    spans: int
    """How many records the run was read from (spans, or a store's rows)."""
    records: str = "spans"
    """What they are called: "spans", or a store's word for its rows ("operation outputs", "checkpoints")."""
    unseen: frozenset[str] = frozenset()
    """What the records cannot show: "keys" when no record holds the key a call sent, "lock" a lock
    taken, "reply_save" whether a reply's save reached the disk before its calls ran."""

    _kinds: dict[str, tuple[Marked, ...]] = dataclasses.field(init=False, repr=False, compare=False)
    _runs: dict[str, tuple[ToolRun, ...]] = dataclasses.field(init=False, repr=False, compare=False)
    _named: dict[tuple[str, str], tuple[Marked, ...]] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kinds: dict[str, list[Marked]] = {}
        named: dict[tuple[str, str], list[Marked]] = {}
        for marked in self.marked:
            kinds.setdefault(marked.kind, []).append(marked)
            named.setdefault((marked.kind, marked.value), []).append(marked)
        runs: dict[str, list[ToolRun]] = {}
        for tool in self.tools:
            runs.setdefault(tool.call_id, []).append(tool)
        object.__setattr__(self, "_kinds", {kind: tuple(found) for kind, found in kinds.items()})
        object.__setattr__(self, "_runs", {call: tuple(found) for call, found in runs.items()})
        object.__setattr__(self, "_named", {key: tuple(found) for key, found in named.items()})

    def named(self, kind: str, value: str) -> tuple[Marked, ...]:
        """crashsweep's spans of one kind with one value (`save`, `marker C`), in order."""
        return self._named.get((kind, value), ())

    def of(self, kind: str) -> tuple[Marked, ...]:
        """crashsweep's spans of one kind (`save`, `lock`, `approval`), in order."""
        return self._kinds.get(kind, ())

    def runs_of(self, call_id: str) -> tuple[ToolRun, ...]:
        """Every tool span of the call, in order."""
        return self._runs.get(call_id, ())

    def ran(self, call_id: str) -> ToolRun | None:
        """The call's last tool span (after a failure or a deferral, the one that ran it again), or None."""
        runs = self._runs.get(call_id, ())
        return runs[-1] if runs else None


def read(path: Path) -> Recording:
    """The one run of the OTLP JSON file at `path`; TraceError (one line) when it is not one uninterrupted run."""
    try:
        spans = list(otlp.read_spans(path))
    except Unusable as error:
        raise TraceError(str(error)) from None
    runs = otlp.runs([s for s in spans if s.name != POINT])  # a point passed outside any span is no run
    if len(runs) != 1:
        raise TraceError(f"{path}: {len(runs)} runs ({', '.join(list(runs)[:3])}): from-trace reads one run")
    ((run, ordered),) = runs.items()
    replies = tuple(_reply(path, s) for s in ordered if is_model(s.attributes))
    tools = tuple(_tool(path, s) for s in ordered if tool_fields(s.name, s.attributes) is not None)
    marked = tuple(m for m in (_marked(s) for s in ordered) if m is not None)
    points = _points(spans)
    recording = Recording(path, run, _job(ordered), _agent(ordered), replies, tools, marked, points, len(spans))
    _check(recording, ordered)
    return recording


def _reply(path: Path, span: otlp.Span) -> Reply:
    """A model span's reply, from the assistant message's parts in `gen_ai.output.messages`."""
    text = span.attributes.get("gen_ai.output.messages")
    if text is None:
        raise TraceError(
            f"{path}: span {span.span_id} ({span.name}): no gen_ai.output.messages: record with "
            "the messages' content captured, so the model's replies are in the trace"
        )
    try:
        messages = json.loads(text)
        parts = [part for message in messages for part in message.get("parts", [])]
        calls = tuple(_asked(part) for part in parts if part.get("type") == "tool_call")
        texts = [str(part.get("content", "")) for part in parts if part.get("type") == "text"]
    except (ValueError, AttributeError, TypeError, KeyError) as error:
        raise TraceError(
            f"{path}: span {span.span_id}: gen_ai.output.messages is not a list of messages ({error})"
        ) from None
    return Reply(calls, None if calls else "".join(texts), span.start, span.span_id)


def _asked(part: dict[str, Any]) -> Asked:
    """A `tool_call` part: its ID, name and arguments (a JSON text is read as JSON)."""
    arguments = part.get("arguments", {})
    if isinstance(arguments, str):
        arguments = _json_or_text(arguments)
    return Asked(str(part["id"]), str(part["name"]), arguments)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tool(path: Path, span: otlp.Span) -> ToolRun:
    """A tool span's run: its call, arguments, result, key and outcome."""
    fields = tool_fields(span.name, span.attributes) or {}
    if not fields.get("call_id"):
        raise TraceError(
            f"{path}: span {span.span_id} ({span.name}): a tool span without gen_ai.tool.call.id: "
            "from-trace needs the call IDs to match tools to the model's replies"
        )
    arguments = next((_json_or_text(span.attributes[a]) for a in ARGUMENTS if a in span.attributes), None)
    result = next((span.attributes[r] for r in RESULTS if r in span.attributes), None)
    deferred = DEFERRED in span.attributes
    return ToolRun(
        fields["call_id"],
        fields["tool"],
        arguments,
        result,
        fields.get("key", ""),
        span.error,
        deferred,
        span.start,
        span.span_id,
    )


def _marked(span: otlp.Span) -> Marked | None:
    """A save, lock or approval span of crashsweep's, with the points passed inside it."""
    for kind, attribute in (
        ("save", "crashsweep.save"),
        ("lock", "crashsweep.lock"),
        ("approval", "crashsweep.approval.call"),
    ):
        if attribute in span.attributes:
            points = tuple(e.attributes.get("crashsweep.point.name", "") for e in span.events if e.name == POINT)
            return Marked(kind, span.attributes[attribute], span.start, span.span_id, points)
    return None


def _points(spans: list[otlp.Span]) -> tuple[str, ...]:
    """Every crash point passed: events and point spans, by time, then by the process's count."""
    found: list[tuple[int, int, str]] = []
    for span in spans:
        if span.name == POINT and "crashsweep.point.name" in span.attributes:
            found.append((span.start, _seq(span.attributes), span.attributes["crashsweep.point.name"]))
        for event in span.events:
            if event.name == POINT and "crashsweep.point.name" in event.attributes:
                found.append((event.time, _seq(event.attributes), event.attributes["crashsweep.point.name"]))
    return tuple(name for *_, name in sorted(found))


def _seq(attributes: Any) -> int:
    raw = attributes.get("crashsweep.point.seq", "0")
    return int(raw) if raw.isdigit() else 0


def _job(spans: list[otlp.Span]) -> str:
    """The job's name, as the agent span says (`crashsweep.job`), else the agent's, else "recorded"."""
    for span in spans:
        if "crashsweep.job" in span.attributes:
            return span.attributes["crashsweep.job"]
    return _agent(spans) or "recorded"


def _agent(spans: list[otlp.Span]) -> str:
    """The agent's name on its outermost agent span, or ""."""
    return next((s.attributes.get("gen_ai.agent.name", "") for s in spans if is_agent(s.attributes)), "")


def _check(recording: Recording, spans: list[otlp.Span]) -> None:
    """Refuse a run that is not one uninterrupted run, or whose replies and tool spans do not meet."""
    where = f"{recording.path}"
    traces = list(dict.fromkeys(s.trace for s in spans if is_agent(s.attributes)))
    if len(traces) > 1:
        raise TraceError(
            f"{where}: run {recording.run} was started {len(traces)} times (a crash and a restart?): "
            "from-trace reads one uninterrupted run"
        )
    failed = [s for s in spans if is_agent(s.attributes) and s.error]
    if failed:
        raise TraceError(
            f"{where}: the run ended in an error ({failed[0].message or 'no message'}): "
            "from-trace reads one uninterrupted run that finished"
        )
    if not recording.replies:
        raise TraceError(f"{where}: no model spans (chat): from-trace needs the model's replies")
    if recording.replies[-1].final is None:
        raise TraceError(f"{where}: the last model reply asks for calls: the run stopped before its final answer")
    asked = {call.id: call for reply in recording.replies for call in reply.calls}
    ran: dict[str, ToolRun] = {}
    for tool in recording.tools:
        if tool.call_id not in asked:
            raise TraceError(
                f"{where}: span {tool.span}: tool {tool.tool} ran call {tool.call_id}, "
                "which no model reply asked for (missing model spans?)"
            )
        before = ran.get(tool.call_id)
        if before is not None and not (before.failed or before.deferred):
            raise TraceError(
                f"{where}: call {tool.call_id} ran again after it succeeded (span {tool.span}: "
                "a restart?): from-trace reads one uninterrupted run"
            )
        ran[tool.call_id] = tool
    approved = {m.value for m in recording.of("approval")}
    missing = [c for c in asked if c not in ran and c not in approved]
    if missing:
        raise TraceError(f"{where}: call {missing[0]} of the model's replies has no tool span (missing spans?)")
