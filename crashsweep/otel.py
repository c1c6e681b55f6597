"""A span processor that writes each tool span's start to disk before the tool runs: audit sees crashed attempts.

OpenTelemetry exports a span when it ends, so a process killed inside a tool leaves no trace
of that tool in any exporter's file: the attempt that may have had an effect is the one the
spans lose. `CrashsweepSpanProcessor(path)`, added to the SDK's TracerProvider beside its
exporter, appends one History JSONL line (spec/HISTORY.md 2) for each tool span's start, and
writes and fsyncs it before `on_start` returns, so before the tool's body runs; one line for
its end; and one line when an agent run ends. `crashsweep audit` reads the file (kind `spans`,
crashsweep/importers/spans.py): an attempt with an `invoke` and no end in its process is an
attempt of unknown outcome.

    provider = TracerProvider()
    provider.add_span_processor(CrashsweepSpanProcessor("tool-spans.jsonl"))

What it writes: a header when the file is new (`facts` [], each family `unseen` with why: a
tool span shows no effect, no conversation, no approval; only a run whose agent span ended
says how it ended), then for each tool span a `tool_run` `invoke` at its start and `ok` or
`fail` at its end (`fail` for an error status, `detail` its message, or for a pydantic-ai
deferral), and at the end of a run's outermost agent span a `run_status`, `src` "FILE:span
ID", `time` its start or end. A tool span, its fields and its run are read as the `otlp`
importer reads them, by crashsweep.spec.genai (the GenAI semantic conventions and each
instrumentation's variant): `gen_ai.operation.name` = `execute_tool` (or `gen_ai.tool.name`,
OpenInference's kind TOOL, Temporal's `RunActivity:`); call ID, tool, arguments' digest,
`crashsweep.idempotency_key`; the run is the span's own (`gen_ai.conversation.id`, or
`session.id`, `temporalWorkflowID`), else its nearest open ancestor's, else its trace ID.
Only the attributes given when a span starts are seen at its start (an instrumentation that
sets the call ID later gives it on the end line only; so does a tool that sets its key in its
body: a crashed attempt of it reads as sent with no key).

How a run ended, as the `otlp` importer reads its last trace: when an agent span
(`gen_ai.operation.name` = `invoke_agent`) ends that has no open agent span of its run above
it in this process, `run_status` `ok` `finished`, or `fail` `failed` with its status message
for an error status. Nothing when the run paused: a tool span of its trace deferred, or
pydantic-ai's `final_result` is a DeferredToolRequests. A run killed before its agent span
ended says nothing, and the importer has nothing more to go on: `status` stays unseen. Where
the importer reads a whole trace after the fact (the last trace of a run, its agent span that
ends last), the processor writes as spans end: a run that goes on in a later agent span (a
restart, a next turn) writes a status at each end, the last one the latest.

Incarnation: each process that writes to the file is one, numbered on its first line (the
file's highest incarnation + 1), so a restarted process appending to the same file continues
it with the next `seq`. Processes may share the file: each line is written under an exclusive
lock (flock) after reading what others appended. A line a crash cut short (a power cut
mid-write) is the last of the file and was never acknowledged (its tool never began): the next
writer truncates it. When the line cannot be written, `on_start` raises and the tool does not
run: the record is the point.

It imports only the standard library, OpenTelemetry and crashsweep.spec (the layers' contract).
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
    from opentelemetry.trace import StatusCode, format_span_id, format_trace_id
except ImportError:
    raise ImportError(
        "crashsweep.otel needs the OpenTelemetry SDK: install the `otel` extra (pip install 'crashsweep[otel]')"
    ) from None

from crashsweep.spec.genai import DEFERRED, deferred_requests, is_agent, own_run, tool_end, tool_fields
from crashsweep.spec.history import FAILED, FINISHED, VERSION, Event, History

UNSEEN = {
    "effects": "a span processor sees the agent's process, not the receiver's records (audit its ledger with it)",
    "transcript": "tool spans do not hold the conversation sent to the model",
    "approvals": "tool spans record no approvals",
    "status": "only a run whose agent span (invoke_agent) ended says how it ended: one killed before says nothing",
}
HEADER = (json.dumps(History(facts=frozenset(), unseen=UNSEEN).header()) + "\n").encode("utf-8")


@dataclass(frozen=True, slots=True)
class _Open:
    """What the processor keeps of an open span: its run, its parent's span ID (0: none here), whether an agent."""

    run: str
    parent: int
    agent: bool


class CrashsweepSpanProcessor(SpanProcessor):
    """Appends a tool span's start (fsynced before the tool runs) and end, and a run's end, to a History JSONL file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._spans: dict[int, _Open] = {}
        """Each open span by span ID: a child without a run of its own takes its parent's."""
        self._starts: dict[int, dict[str, str]] = {}
        """The fields of each open tool span at its start, by span ID."""
        self._deferred: set[tuple[int, str]] = set()
        """The (trace ID, run) of each tool span that deferred: that run paused in that trace."""
        self._open()

    def _open(self) -> None:
        """Open the file for this process: nothing of it read yet, no incarnation yet."""
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._read = 0
        self._seq = 0
        self._highest = -1
        self._incarnation: int | None = None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Note the span's run; for a tool span, write its `invoke` line durably before returning."""
        attributes = span.attributes or {}
        parent = span.parent.span_id if span.parent is not None else 0
        run = own_run(attributes)
        if run is None and parent in self._spans:
            run = self._spans[parent].run
        run = run or format_trace_id(span.context.trace_id)
        self._spans[span.context.span_id] = _Open(run, parent, is_agent(attributes))
        fields = tool_fields(span.name, attributes)
        if fields is None:
            return
        self._starts[span.context.span_id] = fields
        self._append("invoke", "tool_run", run, span, fields, "", span.start_time)

    def on_end(self, span: ReadableSpan) -> None:
        """A tool span's `ok` or `fail` line (its start was written); a run's outermost agent span: its status."""
        if span.context is None:
            return
        opened = self._spans.pop(span.context.span_id, None)
        if opened is None:
            return
        attributes = span.attributes or {}
        start = self._starts.pop(span.context.span_id, None)
        if start is not None:
            self._tool_end(span, opened.run, start, attributes)
        elif opened.agent and self._outermost(opened):
            self._run_end(span, opened.run, attributes)

    def _tool_end(self, span: ReadableSpan, run: str, start: dict[str, str], attributes: Mapping[str, Any]) -> None:
        """The tool span's `ok`, or `fail` for an error status or a deferral (its trace then paused)."""
        ended = tool_fields(span.name, attributes) or {}
        fields = {name: ended.get(name) or value for name, value in start.items()}
        error = span.status.status_code is StatusCode.ERROR
        outcome, detail = tool_end(attributes, error, span.status.description or "")
        if DEFERRED in attributes:
            self._deferred.add((span.context.trace_id if span.context is not None else 0, run))
        self._append(outcome, "tool_run", run, span, fields, detail, span.end_time)

    def _run_end(self, span: ReadableSpan, run: str, attributes: Mapping[str, Any]) -> None:
        """How the run ended: `finished`, or `failed` on an error status; nothing when it paused."""
        trace = span.context.trace_id if span.context is not None else 0
        if (trace, run) in self._deferred or deferred_requests(attributes.get("final_result")):
            return
        if span.status.status_code is StatusCode.ERROR:
            fields = {"status": FAILED}
            self._append("fail", "run_status", run, span, fields, span.status.description or "", span.end_time)
        else:
            self._append("ok", "run_status", run, span, {"status": FINISHED}, "", span.end_time)

    def _outermost(self, opened: _Open) -> bool:
        """No open agent span of the same run above this one (the walk stops at a span of another run)."""
        parent, seen = opened.parent, set()
        while parent in self._spans and parent not in seen:
            above = self._spans[parent]
            if above.run != opened.run:
                break
            if above.agent:
                return False
            seen.add(parent)
            parent = above.parent
        return True

    def shutdown(self) -> None:
        """Close the file (every line is already on disk)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing waits: each line was fsynced when written."""
        return True

    def _append(
        self, outcome: str, f: str, run: str, span: ReadableSpan, fields: dict[str, str], detail: str, nanos: int | None
    ) -> None:
        """Write one event line and fsync it, under the file's lock, numbered after what the file holds.

        After `shutdown` (in this process) nothing is written, as an exporter ignores spans then.
        """
        if self._fd < 0 and os.getpid() == self._pid:
            return
        span_id = format_span_id(span.context.span_id) if span.context is not None else ""
        with self._locked():
            if self._incarnation is None:
                self._incarnation = self._highest + 1
            self._seq += 1
            src, when = f"{self.path.name}:span {span_id}", (nanos or 0) / 1e9
            event = Event(run, self._incarnation, self._seq, outcome, f, **fields, detail=detail, src=src, time=when)
            line = (json.dumps({"v": VERSION, **event.to_json()}) + "\n").encode("utf-8")
            _write(self._fd, line)
            self._read += len(line)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """This process's lock and the file's, the file read up to its end (its header written when new)."""
        if os.getpid() != self._pid:  # a forked child: a process of its own, with a file description of its own
            self._open()
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"{self.path}: the span processor was shut down")
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                self._catch_up()
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _catch_up(self) -> None:
        """Read what was appended since (other processes' lines); cut a torn last line; a new file's header."""
        size = os.fstat(self._fd).st_size
        chunk = os.pread(self._fd, size - self._read, self._read) if size > self._read else b""
        complete, _, torn = chunk.rpartition(b"\n")
        if torn:
            os.ftruncate(self._fd, size - len(torn))
        for line in complete.split(b"\n") if complete else ():
            seq, incarnation = _numbers(line)
            self._seq, self._highest = max(self._seq, seq), max(self._highest, incarnation)
        self._read = size - len(torn)
        if self._read == 0:
            _write(self._fd, HEADER)
            self._read = len(HEADER)
            _sync_folder(self.path)


def _numbers(line: bytes) -> tuple[int, int]:
    """(seq, incarnation) of one event line; (0, -1) for the header or a line that is no event."""
    try:
        data = json.loads(line)
    except ValueError:
        return 0, -1
    if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
        return 0, -1
    incarnation = data.get("incarnation")
    return data["seq"], incarnation if isinstance(incarnation, int) else -1


def _write(fd: int, line: bytes) -> None:
    """Write all of `line` and fsync the file."""
    data = memoryview(line)
    while data:
        data = data[os.write(fd, data) :]
    os.fsync(fd)


def _sync_folder(path: Path) -> None:
    """Fsync the folder that holds a new file, so its name survives a power cut too."""
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def otlp_file(path: str | os.PathLike[str]) -> TracerProvider:
    """A TracerProvider that appends every span, as it ends, to `path` as OTLP JSON lines; the global one.

    What `crashsweep from-trace` reads (spec/FROM_TRACE.md): one uninterrupted run recorded this
    way, with an instrumentation that captures the model's replies (pydantic-ai's does by
    default). Spans are written one by one (no batch is left unwritten at exit); call
    `shutdown()` at the end. Made the global provider, so crash points passed outside the
    instrumentation's spans (crashsweep.realsweep.probe.crashpoint) are recorded in it too.
    """
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(path))))
    trace.set_tracer_provider(provider)
    return provider
