"""The points a run of the Temporal agent passed, from its activities: the adapter's names, or none when unknown."""

from __future__ import annotations

from pathlib import Path

from crashsweep.fromtrace import temporal_store
from crashsweep.fromtrace.recording import ToolRun
from crashsweep.fromtrace.temporal_activities import Activity
from crashsweep.fromtrace.temporal_points import passed
from tests.fromtrace.temporal_history import History


def activity(ident: str, kind: str, failure: str | None = None, raised: str | None = None) -> Activity:
    return Activity(ident, kind, 1, 2, 3, (), None, failure, raised)


def run(tool: str, arguments: dict[str, str], result: str) -> ToolRun:
    return ToolRun("c", tool, arguments, result, "", False, False, 1, "event 3")


FILED = run("create_issue", {"title": "issue a"}, "filed issue #1")


def test_two_points_an_activity_and_an_accepted_writes_point_between_them() -> None:
    """By hand: the model's activity, a filed issue (its point inside), a refused comment (none), a search."""
    refused = run("comment", {"issue_title": "x", "body": "comment c"}, "error: no issue titled 'x'")
    steps = [
        (activity("1", "ask_model"), None),
        (activity("2", "run_tool"), FILED),
        (activity("3", "run_tool"), refused),
        (activity("4", "run_tool"), run("search_issues", {"query": "q"}, "[]")),
    ]
    assert passed(steps) == (
        "before activity ask_model 1",
        "before reporting activity ask_model 1",
        "before activity run_tool 2",
        "tracker filed issue a",
        "before reporting activity run_tool 2",
        "before activity run_tool 3",
        "before reporting activity run_tool 3",
        "before activity run_tool 4",
        "before reporting activity run_tool 4",
    )


def test_none_when_a_tool_is_not_the_trackers_or_an_activity_failed_or_was_retried() -> None:
    model = (activity("1", "ask_model"), None)
    assert passed([model, (activity("refund", "refund"), run("refund", {}, "refund #1 sent"))]) == ()
    assert passed([model, (activity("2", "run_tool", failure="boom"), FILED)]) == ()
    assert passed([model, (activity("2", "run_tool", raised="boom"), FILED)]) == ()
    assert passed([(activity("1", "ask_model", raised="rate limited"), None)]) == ()


def test_the_built_in_agents_run_passes_the_seventeen_points_of_its_workflow(tmp_path: Path) -> None:
    """tests/realsweep/adapters/test_temporal.py's derivation by hand: 7 activities x 2, and 3 accepted writes."""
    recording = temporal_store.read(History().builtin().write(tmp_path / "history.json"))
    effects = {2: "tracker filed issue create_a", 3: "tracker filed issue create_b"}
    effects[6] = "tracker commented comment comment_a"
    expected = []
    for number in range(1, 8):
        kind = "ask_model" if number in (1, 4, 7) else "run_tool"
        inside = [effects[number]] if number in effects else []
        expected += [f"before activity {kind} {number}", *inside, f"before reporting activity {kind} {number}"]
    assert recording.points == tuple(expected)
