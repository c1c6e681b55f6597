"""crashsweep.fromtrace.design: each field of the draft as spec/FROM_TRACE.md 3's table reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.fromtrace.design import fields
from crashsweep.fromtrace.recording import read
from crashsweep.spec.policy import policy_from_mapping
from crashsweep.variants.presets import BUILT_IN
from tests.fromtrace.builder import Trace, triage


def _fields(tmp_path: Path, trace: Trace) -> dict[str, tuple[object, bool]]:
    return {f.name: (f.value, f.decided) for f in fields(read(trace.write(tmp_path / "t.jsonl")))}


def test_a_save_after_reply_run_reads_as_save_after_reply(tmp_path: Path) -> None:
    found = _fields(tmp_path, triage())
    assert found["startup_save"] == (True, True)
    assert found["reply_save"] == ("before-first-send", True)
    assert found["result_saves"] == ("each-call", True)
    assert found["markers"] == ("none", True)
    assert found["keys"] == ("none", True)
    assert found["lock"] == ("none", True)
    assert found["on_tool_error"] == ("retry", False)  # no tool failed
    assert found["fsync"] == ("none", True)
    assert "ladder" not in found
    assert "approval_storage" not in found
    preset = {p.name: p.policy for p in BUILT_IN}["save-after-reply"]
    assert policy_from_mapping({k: v for k, (v, _) in found.items()}) == preset


def test_keys_markers_and_the_ladder(tmp_path: Path) -> None:
    found = _fields(tmp_path, triage(keys=True, markers=True))
    assert found["keys"] == ("run-call", True)
    assert found["markers"] == ("before-writes", True)
    assert found["ladder"] == (["rerun-when-harmless", "lookup", "person"], False)
    preset = {p.name: p.policy for p in BUILT_IN}["keys-and-markers"]
    assert policy_from_mapping({k: v for k, (v, _) in found.items()}) == preset


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ("each-call", ("each-call", True)),
        ("writes-only", ("writes-only", True)),
        ("whole-turn", ("whole-turn", True)),
        ("none", ("none", True)),
    ],
)
def test_result_saves_by_which_results_were_saved(tmp_path: Path, results: str, expected: tuple[object, bool]) -> None:
    assert _fields(tmp_path, triage(results=results))["result_saves"] == expected


def test_no_reply_save_and_no_start_save(tmp_path: Path) -> None:
    trace = Trace()
    trace.reply(("create_a", "create_issue", {"title": "t"}))
    trace.tool("create_a", "create_issue", {"title": "t"}, "filed")
    trace.save("result create_a")
    trace.reply()
    trace.save("final")
    found = _fields(tmp_path, trace)
    assert found["startup_save"] == (False, True)
    assert found["reply_save"] == ("never", True)
    # every call writes: each-call and writes-only save alike
    assert found["result_saves"] == ("each-call", False)


def test_a_lock_span_and_synced_saves(tmp_path: Path) -> None:
    trace = Trace()
    trace.add("lock file", {"crashsweep.lock": "file"})
    trace.save("start", synced="dir")
    trace.reply()
    trace.save("final", synced="dir")
    found = _fields(tmp_path, trace)
    assert found["lock"] == ("file", True)
    assert found["fsync"] == ("full", True)
    trace = Trace()
    trace.save("start", synced="tmp")
    trace.reply()
    assert _fields(tmp_path, trace)["fsync"] == ("no-dir-fsync", True)


def test_a_failed_call_sent_again_or_handed_to_the_model(tmp_path: Path) -> None:
    trace = Trace()
    trace.save("start")
    trace.reply(("create_a", "create_issue", {"title": "t"}))
    trace.tool("create_a", "create_issue", {"title": "t"}, "error", error=True)
    trace.tool("create_a", "create_issue", {"title": "t"}, "filed")
    trace.reply()
    assert _fields(tmp_path, trace)["on_tool_error"] == ("retry", True)
    trace = Trace()
    trace.save("start")
    trace.reply(("create_a", "create_issue", {"title": "t"}))
    trace.tool("create_a", "create_issue", {"title": "t"}, "error", error=True)
    trace.reply()
    assert _fields(tmp_path, trace)["on_tool_error"] == ("model", True)


def test_approvals_saved_are_durable_else_not_decided(tmp_path: Path) -> None:
    def gated(saved: bool) -> Trace:
        trace = Trace()
        trace.save("start")
        trace.reply(("comment_a", "comment", {"issue_title": "t", "body": "b"}))
        trace.add("approval comment_a", {"crashsweep.approval.call": "comment_a"})
        if saved:
            trace.save("approval comment_a")
        trace.tool("comment_a", "comment", {"issue_title": "t", "body": "b"}, "ok")
        trace.reply()
        return trace

    assert _fields(tmp_path, gated(True))["approval_storage"] == ("durable", True)
    found = _fields(tmp_path, gated(False))
    assert found["approval_storage"] == ("memory", False)
    assert found["approval_binding"] == ("call-and-args", False)
    assert found["resume_granularity"] == ("step", False)


def test_a_run_without_save_spans_decides_no_save_field(tmp_path: Path) -> None:
    trace = Trace()
    trace.reply(("x", "lookup", {"id": 1}))
    trace.tool("x", "lookup", {"id": 1}, "{}", key="k")
    trace.reply()
    found = _fields(tmp_path, trace)
    assert not any(decided for name, (_, decided) in found.items() if name not in ("keys",))
    assert found["keys"] == ("run-call", True)
