"""Tests of crashsweep.reports.sequence: swim lanes, labelled messages, crash notes, escaping."""

from __future__ import annotations

import re
from typing import Any

from crashsweep.explorer.path import replay, shortest_path
from crashsweep.explorer.search import explore
from crashsweep.reports import sequence
from crashsweep.reports.counterexample import Counterexample, from_path
from crashsweep.spec.job import TRIAGE, job_from_mapping
from crashsweep.spec.tracker import KEYED, KEYLESS
from crashsweep.variants import model

HEAD = re.compile(r'^\s*(\w+)_0 \[label=(?:"([^"]*)"|(\w+))', re.MULTILINE)


def replayed(variant: str, tracker: Any, code: str) -> Counterexample:
    """The counterexample value of a replayed path of `variant` on the triage job at depth 2."""
    loop = model(variant, TRIAGE, tracker)
    return from_path(
        loop, replay(loop, 2, code), variant=variant, job="triage", job_file=None, depth=2, tracker=tracker.name
    )


def test_lanes_in_order(sar_cx: Counterexample) -> None:
    """The lanes are process, model, checkpoint file, tracker and person, left to right."""
    heads = HEAD.findall(sequence.sequence_diagram(sar_cx))
    assert [quoted or bare for _, quoted, bare in heads] == ["process", "model", "checkpoint file", "tracker", "person"]


def test_every_crash_point_labels_a_message(sar_cx: Counterexample) -> None:
    """Each step's crash point appears in a message or note numbered with the step."""
    texts = [row.text for row in sequence.rows(sar_cx)]
    for step in sar_cx.steps:
        assert step.point is not None
        assert any(text.startswith(f"{step.index}. ") and step.point in text for text in texts), step


def test_crash_restart_and_violation_rows(sar_cx: Counterexample) -> None:
    """The crash and the restart are notes on the process lane, the violation a note at the end."""
    rows = sequence.rows(sar_cx)
    styles = [(row.source, row.target, row.style) for row in rows]
    assert ("process", None, "crash") in styles
    assert ("process", None, "restart") in styles
    assert rows[-1].style == "violation"
    assert rows[-1].text == "no-duplicate VIOLATED: create_a has 2 records: #1 and #2"
    sends = [row for row in rows if row.text.endswith("send create_a")]
    assert [(row.source, row.target) for row in sends] == [("process", "tracker")] * 2


def test_messages_right_to_left_point_back(sar_cx: Counterexample) -> None:
    """A message from a lane to one on its left is drawn left to right with dir=back."""
    source = sequence.sequence_diagram(sar_cx)
    assert re.search(r'process_\d+ -> model_\d+ \[label="3\. reply 1 arrived" [^]]*dir=back', source)
    assert re.search(r'process_\d+ -> model_\d+ \[label="3\. call the model" [^]]*dir=forward', source)


def test_person_and_lock_lanes_are_used_by_the_agent_loop() -> None:
    """agent-loop against a keyless tracker takes a lock and asks a person after a crash."""
    cx = replayed("agent-loop", KEYLESS, "13:8=1")
    rows = sequence.rows(cx)
    assert any(row.target == "lock" and row.text == "1. lock: tmp written" for row in rows)
    assert any(row.target == "person" and row.text == "13. did create_a happen?" for row in rows)
    assert any(row.source == "person" and row.text == "13. no: send it now" for row in rows)
    heads = [quoted or bare for _, quoted, bare in HEAD.findall(sequence.sequence_diagram(cx))]
    assert heads == ["process", "model", "checkpoint file", "lock file", "tracker", "person"]


def test_deterministic(small_cx: Counterexample) -> None:
    """The same counterexample gives the same bytes, and a new replay of it too."""
    again = replayed("save-after-reply", KEYED, "10:7=1")
    first = sequence.sequence_diagram(again)
    assert first == sequence.sequence_diagram(replayed("save-after-reply", KEYED, "10:7=1"))
    assert sequence.sequence_diagram(small_cx) == sequence.sequence_diagram(small_cx)


def test_call_ids_are_escaped() -> None:
    """A call ID with quotes, backslashes and tags is escaped in every label."""
    odd = 'x"y\\z<b>'
    job = job_from_mapping({"name": "odd", "turns": [[odd]], "calls": {odd: {"tool": "t", "writes": True}}})
    loop = model("save-once-per-turn", job, KEYED)
    cx = from_path(
        loop, replay(loop, 1, "9:5=1"), variant="save-once-per-turn", job="odd", job_file=None, depth=1, tracker="keyed"
    )
    source = sequence.sequence_diagram(cx)
    assert 'send x\\"y\\\\z<b>"' in source
    assert 'x"y\\z' not in source


def test_approvals_and_tool_failures_have_their_lanes() -> None:
    """Approval requests go to the person and back; a tool failure comes from the tracker; retries go to the model."""
    job = job_from_mapping(
        {
            "name": "situations",
            "turns": [["w"]],
            "calls": {"w": {"tool": "t", "writes": True, "approval": True, "fails_after_accept": True}},
        }
    )
    loop = model("error-to-model", job, KEYED)
    exploration = explore(loop, 0)
    end = next(n for n, data in exploration.graph.nodes(data=True) if data["finished"])
    cx = from_path(
        loop,
        shortest_path(exploration, end),
        variant="error-to-model",
        job="situations",
        job_file=None,
        depth=0,
        tracker="keyed",
    )
    moves = {(row.source, row.target, row.text.partition(". ")[2]) for row in sequence.rows(cx)}
    assert ("process", "person", "approval requested w") in moves
    assert ("person", "process", "approved w") in moves
    assert ("tracker", "process", "tool failed w") in moves
    assert ("model", "process", "retry reply arrived w") in moves


def test_two_live_processes_get_two_swim_lanes(pause_cx: Counterexample) -> None:
    """A pause adds the second process's lane; each process's messages start from its own lane."""
    heads = HEAD.findall(sequence.sequence_diagram(pause_cx))
    assert [quoted or bare for _, quoted, bare in heads][:2] == ["process", "second process"]
    rows = sequence.rows(pause_cx)
    sends = [(row.source, row.target) for row in rows if row.text.endswith("send create_a")]
    assert sends == [("second", "tracker"), ("process", "tracker")]
    notes = [(row.source, row.style, row.text) for row in rows if row.target is None and row.style == "crash"]
    assert ("process", "crash", "3. PAUSED at lock: renamed: alive, not running") in notes
    assert any(source == "process" and "WAKES with its stale memory" in text for source, _, text in notes)
    assert ("second", None, "3. RESTART", "restart") in [(r.source, r.target, r.text, r.style) for r in rows]


def test_a_pause_is_drawn_on_the_process_it_pauses(pause_cx: Counterexample) -> None:
    """The FAULT note sits on the paused process's lane, just before its PAUSED note (not on the tracker's)."""
    rows = sequence.rows(pause_cx)
    at = next(i for i, row in enumerate(rows) if "FAULT pause" in row.text)
    assert (rows[at].source, rows[at].target, rows[at].style) == ("process", None, "crash")
    assert rows[at + 1].text == "3. PAUSED at lock: renamed: alive, not running"


LABEL = re.compile(r'label="((?:[^"\\]|\\.)*)"')


def test_labels_are_wrapped_so_seven_lanes_stay_legible(pause_cx: Counterexample) -> None:
    """Seven lanes: every label but the title is wrapped to short lines, and the lanes sit close."""
    source = sequence.sequence_diagram(pause_cx)
    labels = LABEL.findall(source)[1:]  # the first is the title
    lines = [line for text in labels for line in text.split("\\n")]
    assert "lock file" in lines
    assert "second process" in lines
    assert max(len(line) for line in lines) <= sequence.WRAP
    assert "3. FAULT pause: the" in lines


def test_the_seven_lane_diagram_fits_the_page_at_full_size(pause_cx: Counterexample) -> None:
    """Drawn by dot, the pause diagram is at most 1,100 pt wide: the page shows it unscaled (10 pt labels)."""
    import subprocess

    from tests.conftest import require_tool

    svg = subprocess.run(
        [require_tool("dot"), "-Tsvg"],
        input=sequence.sequence_diagram(pause_cx),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r'<svg width="([\d.]+)pt"', svg)
    assert match is not None
    assert float(match.group(1)) <= 1100
