"""crashsweep.fromtrace.recording: one run read from OTLP spans, and every refusal of spec/FROM_TRACE.md 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashsweep.fromtrace.recording import TraceError, read
from tests.fromtrace.builder import Trace, triage


def test_a_run_reads_into_its_replies_tools_saves_and_points(tmp_path: Path) -> None:
    recording = read(triage().write(tmp_path / "t.jsonl"))
    assert [len(r.calls) for r in recording.replies] == [2, 2, 0]
    assert recording.replies[-1].final == "done"
    assert [t.call_id for t in recording.tools] == ["create_a", "create_b", "search", "comment_a"]
    assert recording.tools[0].arguments == {"title": "issue create_a"}
    assert recording.tools[0].result == "filed issue #1"
    saves = [m.value for m in recording.of("save")]
    assert saves[:3] == ["start", "reply 1", "result create_a"]
    assert saves[-1] == "final"
    # By hand: 10 saves (start, 2 replies, 4 results, 2 turns, final) of 2 points each.
    assert len(saves) == 10
    assert len(recording.points) == 20
    assert recording.points[:2] == ("start: tmp written", "start: renamed")
    assert recording.job == "job"
    assert recording.agent == "loop"
    assert recording.run == "run-1"


def test_points_outside_any_span_are_point_spans_ordered_by_time_then_count(tmp_path: Path) -> None:
    trace = triage()
    trace.add("crashsweep.point", {"crashsweep.point.name": "late", "crashsweep.point.seq": 99})
    assert read(trace.write(tmp_path / "t.jsonl")).points[-1] == "late"


def _refused(tmp_path: Path, trace: Trace) -> str:
    with pytest.raises(TraceError) as caught:
        read(trace.write(tmp_path / "t.jsonl"))
    message = str(caught.value)
    assert "\n" not in message
    assert "t.jsonl" in message
    return message


def test_two_runs_are_refused(tmp_path: Path) -> None:
    trace = triage()
    other = Trace(run="run-2", trace="b" * 32)
    trace.spans += other.spans
    assert "2 runs" in _refused(tmp_path, trace)


def test_a_restarted_run_is_refused(tmp_path: Path) -> None:
    trace = triage()
    again = Trace(run="run-1", trace="c" * 32)
    again.clock = trace.clock
    trace.spans += again.spans
    assert "started 2 times" in _refused(tmp_path, trace)


def test_a_run_that_ended_in_an_error_is_refused(tmp_path: Path) -> None:
    trace = triage()
    trace.spans[0]["status"] = {"code": 2, "message": "killed"}
    assert "ended in an error (killed)" in _refused(tmp_path, trace)


def test_a_run_without_its_final_answer_is_refused(tmp_path: Path) -> None:
    trace = Trace()
    trace.reply(("create_a", "create_issue", {"title": "t"}))
    trace.tool("create_a", "create_issue", {"title": "t"}, "filed")
    assert "before its final answer" in _refused(tmp_path, trace)


def test_model_spans_without_their_content_are_refused(tmp_path: Path) -> None:
    trace = Trace()
    trace.add("chat x", {"gen_ai.operation.name": "chat"})
    assert "no gen_ai.output.messages" in _refused(tmp_path, trace)
    assert "no model spans" in _refused(tmp_path, Trace())


def test_missing_and_stray_tool_spans_are_refused(tmp_path: Path) -> None:
    trace = Trace()
    trace.reply(("create_a", "create_issue", {"title": "t"}))
    trace.reply()
    assert "call create_a of the model's replies has no tool span" in _refused(tmp_path, trace)
    trace = Trace()
    trace.tool("ghost", "create_issue", {}, "filed")
    trace.reply()
    assert "ran call ghost, which no model reply asked for" in _refused(tmp_path, trace)


def test_a_call_run_again_after_it_succeeded_is_refused_but_not_after_it_failed(tmp_path: Path) -> None:
    trace = Trace()
    trace.reply(("create_a", "create_issue", {"title": "t"}))
    trace.tool("create_a", "create_issue", {"title": "t"}, "error", error=True)
    trace.tool("create_a", "create_issue", {"title": "t"}, "filed")
    trace.reply()
    assert read(trace.write(tmp_path / "ok.jsonl")).ran("create_a") is not None
    trace.tool("create_a", "create_issue", {"title": "t"}, "filed")
    assert "ran again after it succeeded" in _refused(tmp_path, trace)


def test_a_tool_span_without_a_call_id_is_refused(tmp_path: Path) -> None:
    trace = Trace()
    trace.add("execute_tool x", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"})
    assert "without gen_ai.tool.call.id" in _refused(tmp_path, trace)


def test_a_file_that_is_not_spans_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"nope": 1}) + "\n", encoding="utf-8")
    with pytest.raises(TraceError, match="not OTLP JSON traces"):
        read(path)
