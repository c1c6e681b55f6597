"""The `spans` importer over logs crashsweep.otel's processor wrote from real OpenTelemetry SDK spans."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from crashsweep.importers import spans
from crashsweep.importers.base import Unusable
from crashsweep.otel import CrashsweepSpanProcessor
from crashsweep.spec.history import History


def tool(name: str, call_id: str) -> dict[str, str]:
    """A GenAI execute_tool span's attributes, in conversation c1."""
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}
    return attributes | {"gen_ai.conversation.id": "c1"}


def logged(tmp_path: Path) -> Path:
    """A log of three tool spans: create_issue ok, comment failed, search left open (its process died there)."""
    log = tmp_path / "log.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(CrashsweepSpanProcessor(log))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("execute_tool create_issue", attributes=tool("create_issue", "call_1")):
        pass
    failing = tracer.start_span("execute_tool comment", attributes=tool("comment", "call_2"))
    failing.set_status(Status(StatusCode.ERROR, "tracker down"))
    failing.end()
    tracer.start_span("execute_tool search", attributes=tool("search", "call_3"))  # never ended
    provider.shutdown()
    return log


def shape(history: History) -> list[tuple[str, int, int, str, str, str]]:
    """(run, incarnation, seq, type, call_id, detail) of each event."""
    return [(e.run, e.incarnation, e.seq, e.type, e.call_id, e.detail) for e in history.events]


def test_the_processors_log_is_read_as_written(tmp_path: Path) -> None:
    """Each tool's invoke and end, the open one's invoke alone (an attempt of unknown outcome: no info added)."""
    log = logged(tmp_path)
    assert spans.recognises(log, log.read_bytes())
    (history,) = spans.read(log)
    assert shape(history) == [
        ("c1", 0, 1, "invoke", "call_1", ""),
        ("c1", 0, 2, "ok", "call_1", ""),
        ("c1", 0, 3, "invoke", "call_2", ""),
        ("c1", 0, 4, "fail", "call_2", "tracker down"),
        ("c1", 0, 5, "invoke", "call_3", ""),
    ]
    assert history.facts == frozenset()
    assert all(event.src.startswith("log.jsonl:span ") and event.f == "tool_run" for event in history.events)


def test_a_torn_last_line_is_left_out(tmp_path: Path) -> None:
    """A last line without its newline (a write a power cut tore) is not read; the lines before are."""
    log = logged(tmp_path)
    whole = spans.read(log)
    with log.open("a") as file:
        file.write('{"v": 1, "run": "c1", "incarnation": 0, "seq": 6, "type": "inv')
    assert spans.recognises(log, log.read_bytes())
    assert spans.read(log) == whole


def test_a_bad_line_before_the_last_is_refused_with_its_number(tmp_path: Path) -> None:
    """A broken line that is not the torn last one: "FILE:LINE: what"."""
    log = logged(tmp_path)
    lines = log.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"type": "ok"', '"type": "done"')
    log.write_text("".join(lines))
    with pytest.raises(Unusable) as refused:
        spans.read(log)
    assert str(refused.value) == f"{log}:3: type 'done': expected one of invoke, ok, fail, info"


@pytest.mark.parametrize(
    "text",
    [
        '{"crashsweep_history": 1}\n{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "ok", "f": "effect",'
        ' "call": "a", "src": "tracker"}\n',
        '{"crashsweep_history": 1}\n{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "ok", "f": "tool_run",'
        ' "src": "sweep"}\n',
        '{"crashsweep_history": 1, "facts": []}\n',
        '{"resourceSpans": []}\n',
    ],
    ids=["effects", "tool runs of another source", "a header alone", "otlp"],
)
def test_other_files_are_not_the_processors(tmp_path: Path, text: str) -> None:
    """A History of another producer, an empty one (the history kind reads it), OTLP JSON: not this kind."""
    assert not spans.recognises(tmp_path / "h.jsonl", text.encode())


def test_times_are_the_spans(tmp_path: Path) -> None:
    """Each event's time is its span's start or end: there, and never going back."""
    (history,) = spans.read(logged(tmp_path))
    times = [event.time for event in history.events]
    assert all(time > 0 for time in times)
    assert times == sorted(times)


def test_a_log_that_says_how_a_run_ended_is_still_the_processors(tmp_path: Path) -> None:
    """A run_status line (an agent span ended) beside the tool lines: still kind `spans`, not `history`."""
    from crashsweep.importers.registry import kind_of

    header = '{"crashsweep_history": 1, "facts": []}\n'
    tool = '{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "invoke", "f": "tool_run", "src": "l:span %s"}\n'
    ended = '{"v": 1, "run": "r", "incarnation": 0, "seq": 2, "type": "ok", "f": "run_status", "status": "finished", '
    path = tmp_path / "tool-spans.jsonl"
    path.write_text(header + tool % ("0" * 16) + ended + '"src": "l:span ' + "1" * 16 + '"}\n')
    kind = kind_of(path)
    assert kind is not None
    assert kind.name == "spans"
