"""crashsweep.fromtrace.derive: the job a run played and the points it passed (spec/FROM_TRACE.md 3)."""

from __future__ import annotations

from pathlib import Path

from crashsweep.fromtrace import derive
from crashsweep.fromtrace.recording import read
from crashsweep.spec.job import TRIAGE, Job
from tests.fromtrace.builder import Trace, triage


def test_the_triage_run_gives_the_triage_job(tmp_path: Path) -> None:
    job = derive.job(read(triage().write(tmp_path / "t.jsonl")))
    assert job.turns == TRIAGE.turns  # the tracker's tools: writes by the tool, no args
    assert job == Job("job", TRIAGE.turns)


def test_a_user_tool_writes_when_it_sent_a_key_or_was_marked_else_assumed(tmp_path: Path) -> None:
    trace = Trace()
    trace.save("start")
    trace.reply(
        ("look", "lookup_order", {"order_id": "A-17"}),
        ("pay", "refund", {"order_id": "A-17", "amount": 20}),
        ("mail", "send_email", {"to": "ana@example.com", "items": [1, 2]}),
    )
    trace.tool("look", "lookup_order", {"order_id": "A-17"}, '{"total": 20}')
    trace.save("marker pay")
    trace.tool("pay", "refund", {"order_id": "A-17", "amount": 20}, "ok")
    trace.tool("mail", "send_email", {"to": "ana@example.com"}, "sent", key="k1")
    trace.reply()
    recording = read(trace.write(tmp_path / "t.jsonl"))
    look, pay, mail = derive.job(recording).calls
    assert (pay.writes, mail.writes) == (True, True)
    assert derive.writes(recording, recording.replies[0].calls[0]) == (
        True,
        False,
        "nothing in the trace says whether it writes: true assumes the worst",
    )
    assert look.args == (("order_id", "A-17"),)
    assert pay.args == (("order_id", "A-17"), ("amount", 20))
    assert mail.args is None  # a list among its arguments: the cassette holds them


def test_a_call_is_gated_by_an_approval_span_or_a_deferral(tmp_path: Path) -> None:
    trace = Trace()
    trace.reply(("c", "comment", {"issue_title": "t", "body": "b"}), ("r", "refund", {"amount": 1}))
    trace.add("approval c", {"crashsweep.approval.call": "c"})
    trace.tool("c", "comment", {"issue_title": "t", "body": "b"}, "ok")
    trace.tool("r", "refund", {"amount": 1}, "", points=())
    trace.spans[-1]["attributes"].append({"key": "pydantic_ai.tool.deferral.name", "value": {"stringValue": "x"}})
    trace.tool("r", "refund", {"amount": 1}, "refunded")
    trace.reply()
    job = derive.job(read(trace.write(tmp_path / "t.jsonl")))
    assert job.gated == ("c", "r")


def test_points_are_numbered_by_their_pass(tmp_path: Path) -> None:
    recording = read(triage().write(tmp_path / "t.jsonl"))
    named = derive.points(recording)
    assert named[:2] == ("start: tmp written#1", "start: renamed#1")
    assert len(named) == len(set(named)) == 20
    trace = Trace()
    trace.add("crashsweep.point", {"crashsweep.point.name": "p", "crashsweep.point.seq": 1})
    trace.add("crashsweep.point", {"crashsweep.point.name": "p", "crashsweep.point.seq": 2})
    trace.reply()
    assert derive.points(read(trace.write(tmp_path / "p.jsonl"))) == ("p#1", "p#2")
