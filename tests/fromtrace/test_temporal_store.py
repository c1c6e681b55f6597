"""from-trace's reader of a Temporal workflow history, on histories made by hand (tests/fromtrace/temporal_history.py).

The runs are the built-in Temporal agent's for the triage job, by hand from its workflow
(realsweep/adapters/temporal_agent.py): an activity `ask_model(turns_done)` returns the reply's
calls as a list of {id, name, args}, an activity `run_tool(call)` per call returns its answer,
one after the other; and an agent of one's own shaped as docs/examples/my_temporal_agent.py
schedules its tools (an activity of the tool's type, the call's ID as the activity ID, the
arguments its input). Event IDs by hand: the start is event 1; each activity takes six events
(a workflow task's three, then scheduled, started, closed), so the K-th activity is scheduled at
6K - 1 and closes at 6K + 1; the workflow's close follows a last workflow task.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from crashsweep.fromtrace import derive, temporal_store
from crashsweep.fromtrace.design import fields
from crashsweep.fromtrace.recording import TraceError
from crashsweep.spec.job import TRIAGE
from tests.fromtrace.temporal_history import ANSWERS, RAISED, TIMED_OUT, History, legacy, payloads
from tests.fromtrace.triage_replies import TURN_1, TURN_2

DESIGN = """startup_save = true
reply_save = "before-first-send"
result_saves = "each-call"
markers = "none"
keys = "run-call"
lock = "none"
"""
"""The save fields of tests/realsweep/adapters/test_temporal_agent.py's design of the built-in agent (keys on).

variants/presets.py FRAMEWORKS has no Temporal preset: that design is the agent's loop as a policy
(the start recorded, each reply before its calls are scheduled, each call's result after it)."""
SHOWN = ("startup_save", "reply_save", "result_saves", "markers", "lock")


def refused(path: Path) -> str:
    """The one line from-trace refuses the history with."""
    with pytest.raises(TraceError) as caught:
        temporal_store.read(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    return message


def test_the_built_in_agents_history_reads_as_its_replies_runs_and_saves(tmp_path: Path) -> None:
    """Activities 1 to 7 scheduled at 5, 11, ..., 41, closed at 7, 13, ..., 43; the start is event 1."""
    recording = temporal_store.read(History().builtin().write(tmp_path / "history.json"))
    assert [[(c.id, c.tool, c.arguments) for c in r.calls] for r in recording.replies] == [
        [(c["id"], c["name"], c["args"]) for c in turn] for turn in (TURN_1, TURN_2, [])
    ]
    assert [(r.final, r.start, r.span) for r in recording.replies] == [
        (None, 5, "event 7"),
        (None, 23, "event 25"),
        ("", 41, "event 43"),
    ]
    assert [(t.call_id, t.result, t.start, t.span, t.key, t.failed) for t in recording.tools] == [
        ("create_a", ANSWERS["create_a"], 11, "event 13", "", False),
        ("create_b", ANSWERS["create_b"], 17, "event 19", "", False),
        ("search", ANSWERS["search"], 29, "event 31", "", False),
        ("comment_a", ANSWERS["comment_a"], 35, "event 37", "", False),
    ]
    assert [(m.kind, m.value, m.start, m.span) for m in recording.marked] == [
        ("save", "start", 1, "event 1"),
        ("save", "reply 1", 7, "event 7"),
        ("save", "result create_a", 13, "event 13"),
        ("save", "result create_b", 19, "event 19"),
        ("save", "reply 2", 25, "event 25"),
        ("save", "result search", 31, "event 31"),
        ("save", "result comment_a", 37, "event 37"),
        ("save", "final", 43, "event 43"),
    ]
    assert (recording.run, recording.job, recording.agent) == ("triage-1", "triage", "triage")
    assert (recording.spans, recording.records, recording.unseen) == (47, "history events", frozenset({"keys"}))
    assert derive.job(recording) == TRIAGE


def test_the_decided_fields_are_the_agents_design_and_keys_are_not_decided(tmp_path: Path) -> None:
    recording = temporal_store.read(History().builtin().write(tmp_path / "history.json"))
    found = {f.name: (f.value, f.decided) for f in fields(recording)}
    design = tomllib.loads(DESIGN)
    assert {name: found[name] for name in SHOWN} == {name: (design[name], True) for name in SHOWN}
    assert found["keys"] == ("none", False)


def test_the_older_export_reads_alike(tmp_path: Path) -> None:
    """PascalCase event types and numeric IDs (the web UI's and tctl's export): the same recording but its path."""
    history = History().builtin()
    new, old = history.write(tmp_path / "new.json"), legacy(history, tmp_path / "old.json")
    assert temporal_store.read(old) == dataclasses.replace(temporal_store.read(new), path=old)


def test_an_agent_that_schedules_each_tool_by_name_with_the_call_id_is_read(tmp_path: Path) -> None:
    """docs/examples/my_temporal_agent.py's shape: lookup_order then refund, each its call's ID; no tracker tools."""
    calls = [
        {"id": "lookup", "name": "lookup_order", "args": {"order_id": "A-17"}},
        {"id": "refund", "name": "refund", "args": {"order_id": "A-17", "amount": 20}},
    ]
    history = History("SupportAgent", "order-A-17").activity("1", "call_model", 0, result=calls)
    history.activity("lookup", "lookup_order", calls[0]["args"], result="order A-17: delivered")
    history.activity("refund", "refund", calls[1]["args"], result="refund #1 sent")
    recording = temporal_store.read(history.activity("4", "call_model", 1, result=[]).end().write(tmp_path / "h.json"))
    assert [(t.call_id, t.tool, t.arguments, t.result) for t in recording.tools] == [
        ("lookup", "lookup_order", {"order_id": "A-17"}, "order A-17: delivered"),
        ("refund", "refund", {"order_id": "A-17", "amount": 20}, "refund #1 sent"),
    ]
    assert recording.job == "SupportAgent"
    assert recording.points == ()  # their points are their code's


def test_a_tool_retried_after_it_raised_is_a_failed_run_then_its_run(tmp_path: Path) -> None:
    """create_b's attempt 2 (started at event 18) after attempt 1 raised: on_tool_error reads "retry"; no points."""
    history = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0]).run_tool(3, TURN_1[1], attempt=2, last=RAISED)
    recording = temporal_store.read(history.ask(4, 1, []).end().write(tmp_path / "h.json"))
    assert [(t.call_id, t.failed, t.result, t.start, t.span) for t in recording.runs_of("create_b")] == [
        ("create_b", True, None, 17, "event 18"),
        ("create_b", False, ANSWERS["create_b"], 18, "event 19"),
    ]
    found = {f.name: (f.value, f.decided) for f in fields(recording)}
    assert found["on_tool_error"] == ("retry", True)
    assert recording.points == ()


def test_a_tool_that_failed_for_good_is_a_failed_run_handed_on(tmp_path: Path) -> None:
    """run_tool 3 fails (ActivityTaskFailed, event 19), the workflow asks again: on_tool_error reads "model"."""
    history = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0]).run_tool(3, TURN_1[1], close="FAILED")
    recording = temporal_store.read(history.ask(4, 1, []).end().write(tmp_path / "h.json"))
    assert [(t.failed, t.result, t.span) for t in recording.runs_of("create_b")] == [(True, None, "event 19")]
    assert {f.name: (f.value, f.decided) for f in fields(recording)}["on_tool_error"] == ("model", True)


def test_each_history_that_is_not_one_completed_uninterrupted_run_is_refused(tmp_path: Path) -> None:
    """Each case by hand: how it was made, and the words of its one line."""
    failure = {"failure": {"message": "boom"}}
    two = History().builtin()
    two.add("WORKFLOW_EXECUTION_STARTED", workflowId="triage-2")
    reset = History().builtin(end=False)
    reset.add("WORKFLOW_TASK_FAILED", cause="WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW", baseRunId="r0")
    stalled = History().builtin(end=False)
    stalled.add("WORKFLOW_TASK_TIMED_OUT", timeoutType="TIMEOUT_TYPE_START_TO_CLOSE")
    restarted = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0]).run_tool(3, TURN_1[1], identity="202@test")
    cases = {
        "2 workflow starts": two,
        "0 workflow starts": History().builtin(),
        "has not closed (still running": History().builtin(end=False),
        "failed: boom": History().builtin(end=False).end("FAILED", **failure),
        "was terminated": History().builtin(end=False).end("TERMINATED"),
        "continued as new": History().builtin(end=False).end("CONTINUED_AS_NEW"),
        "the workflow continued run r0 (continue-as-new)": History(continuedExecutionRunId="r0").builtin(),
        "the workflow's attempt 2": History(attempt=2).builtin(),
        "was reset at event 44": reset.end(),
        "a workflow task of triage-1 timed out at event 44": stalled.end(),
        "served by 2 worker processes (101@test, 202@test)": restarted.ask(4, 1, []).end(),
    }
    cases["0 workflow starts"].events.pop(0)
    for said, history in cases.items():
        assert said in refused(history.write(tmp_path / "h.json")), said


def test_activities_an_uninterrupted_run_cannot_have_are_refused(tmp_path: Path) -> None:
    """A retry after a timeout (a crash), a third attempt, a close that is no outcome, an activity left open."""
    crashed = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0], attempt=2, last=TIMED_OUT, identity="202@test")
    crashed.run_tool(3, TURN_1[1], identity="202@test").ask(4, 1, []).end()
    assert (
        "activity run_tool 2 was retried after its attempt 1 timed out (activity StartToClose timeout; event 12: "
        "a worker crash?): from-trace reads one uninterrupted run"
    ) in refused(crashed.write(tmp_path / "a.json"))
    third = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0], attempt=3, last=RAISED).end()
    assert "activity run_tool 2 ran 3 attempts (event 12)" in refused(third.write(tmp_path / "b.json"))
    timed_out = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0], close="TIMED_OUT").end()
    assert "activity run_tool 2 timed out for good" in refused(timed_out.write(tmp_path / "c.json"))
    cancelled = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0], close="CANCELED").end()
    assert "activity run_tool 2 was cancelled" in refused(cancelled.write(tmp_path / "d.json"))
    left = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0], close=None).end()
    assert "activity run_tool 2 (event 11) never closed" in refused(left.write(tmp_path / "e.json"))


def test_activities_that_are_not_one_agent_loop_are_refused(tmp_path: Path) -> None:
    """A first activity that is no reply, a call with no activity, an activity after the answer, no answer."""
    first = History().run_tool(1, TURN_1[0]).end()
    assert "activity run_tool 1 (event 5): not a model reply (its result is no list of calls)" in refused(
        first.write(tmp_path / "a.json")
    )
    unrun = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0]).ask(3, 1, []).end()
    assert "activity ask_model 3 (event 17) runs none of the calls create_b" in refused(
        unrun.write(tmp_path / "b.json")
    )
    short = History().ask(1, 0, TURN_1).run_tool(2, TURN_1[0]).end()
    assert "call create_b of event 7 has no activity that ran it" in refused(short.write(tmp_path / "c.json"))
    after = History().ask(1, 0, []).run_tool(2, TURN_1[0]).end()
    assert "activity run_tool 2 (event 11): an activity after the final answer" in refused(
        after.write(tmp_path / "d.json")
    )
    unfinished = History().ask(1, 0, TURN_1[:1]).run_tool(2, TURN_1[0]).end()
    assert "the last model reply asks for calls" in refused(unfinished.write(tmp_path / "e.json"))
    none = History().end()
    assert "workflow triage-1 ran no activity" in refused(none.write(tmp_path / "f.json"))


def test_payloads_other_than_json_are_refused_naming_the_encoding(tmp_path: Path) -> None:
    sealed = History().activity("1", "ask_model", 0, result=[], encoding="binary/encrypted").end()
    assert "event 5: a payload encoded 'binary/encrypted'" in refused(sealed.write(tmp_path / "a.json"))
    history = History().ask(1, 0, []).end()
    history.events[6]["activityTaskCompletedEventAttributes"]["result"] = payloads([]) | {"payloads": "x"}
    assert "event 7: a value without its list of payloads" in refused(history.write(tmp_path / "b.json"))


def test_a_file_that_is_no_history_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text('{"events": [{"eventId": "x"}]}', encoding="utf-8")
    assert "eventId 'x'" in refused(path)
