"""Tests of crashsweep.reports.trace: the text trace and the JSON trace of a counterexample."""

from __future__ import annotations

import json
import re

from crashsweep.reports import trace
from crashsweep.reports.counterexample import Counterexample

STEP_LINE = re.compile(r"^\s{0,3}(\d+)  ")


def test_text_has_one_line_per_step(sar_cx: Counterexample) -> None:
    """Every step has exactly one numbered line, in order."""
    numbers = [int(m.group(1)) for line in trace.text(sar_cx).splitlines() if (m := STEP_LINE.match(line))]
    assert numbers == list(range(1, len(sar_cx.steps) + 1))


def test_crash_and_restart_stand_out(sar_cx: Counterexample) -> None:
    """The crash line sits between two rules and names its point; the restart line says RESTART."""
    lines = trace.text(sar_cx).splitlines()
    crash = next(i for i, line in enumerate(lines) if "CRASH" in line)
    assert lines[crash - 1].startswith("-----")
    assert lines[crash + 1].startswith("-----")
    assert "at tracker accepted create_a" in lines[crash]
    assert "RESTART" in lines[crash + 2]


def test_text_shows_diffs_not_dumps(sar_cx: Counterexample) -> None:
    """A step line names what changed (a new record), not the whole world."""
    line = next(line for line in trace.text(sar_cx).splitlines() if line.lstrip().startswith("10 "))
    assert "tracker: +record #2 create_a (run-1)" in line
    assert "checkpoint" not in line


def test_text_ends_with_the_violation_in_words_and_the_replay(sar_cx: Counterexample) -> None:
    """The violation is stated in words, followed by the replay and pytest commands."""
    tail = trace.text(sar_cx).splitlines()[-3:]
    assert tail[0] == "VIOLATED no-duplicate after step 10: create_a has 2 records: #1 and #2"
    assert tail[1] == "replay: crashsweep replay --variant save-after-reply --depth 2 --tracker keyed --path 10:7=1"
    assert tail[2].endswith("--path 10:7=1 --pytest")


def test_json_has_the_documented_keys(sar_cx: Counterexample) -> None:
    """The JSON trace carries the documented keys, and each step its kind, action, point and state."""
    data = json.loads(trace.to_json(sar_cx))
    assert list(data) == [
        "format",
        "variant",
        "job",
        "job_file",
        "depth",
        "tracker",
        "invariant",
        "invariant_kind",
        "violated",
        "violation",
        "path",
        "crashes",
        "length",
        "replay",
        "initial",
        "steps",
    ]
    assert (data["variant"], data["job"], data["depth"], data["tracker"]) == ("save-after-reply", "triage", 2, "keyed")
    assert (data["invariant"], data["violated"], data["crashes"], data["length"]) == ("no-duplicate", True, 1, 10)
    assert [s["kind"] for s in data["steps"]].count("crash") == 1
    step = data["steps"][6]
    assert (step["kind"], step["action"], step["point"]) == ("crash", "crash", "tracker accepted create_a")
    assert step["state"]["process"] is None
    assert set(data["steps"][0]) == {
        "index",
        "kind",
        "action",
        "choice",
        "point",
        "crashes",
        "counters",
        "changes",
        "state",
    }


def test_json_is_stable(sar_cx: Counterexample) -> None:
    """Rendering twice gives the same bytes."""
    assert trace.to_json(sar_cx) == trace.to_json(sar_cx)
    assert trace.to_json(sar_cx).endswith("}\n")


def test_the_replay_lines_start_with_the_program_given(sar_cx: Counterexample) -> None:
    """Text and JSON carry the replay command of the launcher the caller names (default: `crashsweep`)."""
    lines = trace.text(sar_cx, program=("bin/crashsweep",)).splitlines()
    assert lines[-2].startswith("replay: bin/crashsweep replay --variant save-after-reply ")
    assert lines[-1].startswith("pytest: bin/crashsweep replay --variant save-after-reply ")
    assert json.loads(trace.to_json(sar_cx, program=("bin/crashsweep",)))["replay"].startswith("bin/crashsweep ")
    assert trace.text(sar_cx).splitlines()[-2].startswith("replay: crashsweep replay ")


def test_two_processes_get_two_lanes_and_the_wake_stands_out(pause_cx: Counterexample) -> None:
    """With a pause: a column per lane, the pause and the wake-up ruled off and said in words."""
    lines = trace.text(pause_cx).splitlines()
    header = next(line for line in lines if line.startswith("step"))
    assert "lane 1" in header
    assert "lane 2" in header
    pause = next(i for i, line in enumerate(lines) if "FAULT pause" in line)
    wake = next(i for i, line in enumerate(lines) if " WAKE " in line)
    for row in (pause, wake):
        assert lines[row - 1].startswith("-----")
        assert lines[row + 1].startswith("-----")
    assert "process 1 PAUSED" in lines[pause]
    assert "p2 lock: tmp written" in lines[pause]
    assert "process 1 WAKES with its stale memory; process 2 held where it is" in lines[wake]
    assert "p1 start: tmp written" in lines[wake]
    assert lines[wake].index("p1 ") < lines[pause].index("p2 ")  # process 1 in the left column
