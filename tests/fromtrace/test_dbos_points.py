"""The points a run of DBOS's agent passed, from its steps: the adapter's names, or none when the records cannot say."""

from __future__ import annotations

from crashsweep.fromtrace.dbos_points import passed
from crashsweep.fromtrace.recording import Asked, Reply, ToolRun


def reply(number: int, *calls: Asked) -> Reply:
    """Step `number`'s reply (its body starts at 2N)."""
    return Reply(calls, None if calls else "", 2 * number, f"row {number}")


def run(number: int, asked: Asked, result: str, failed: bool = False) -> ToolRun:
    """Step `number`'s run of `asked`."""
    return ToolRun(asked.id, asked.tool, asked.arguments, result, "", failed, False, 2 * number, f"row {number}")


FILE = Asked("a", "create_issue", {"title": "issue a"})
COMMENT = Asked("c", "comment", {"issue_title": "issue a", "body": "comment c"})
SEARCH = Asked("s", "search_issues", {"query": "issue"})


def test_each_step_between_the_start_and_the_status_and_each_accepted_write_inside_its_step() -> None:
    """By hand: the start; steps 1-4 (a write's point first); step 5 the answer; the status between two points."""
    replies = (reply(1, FILE, SEARCH, COMMENT), reply(5))
    tools = (run(2, FILE, "filed issue #1"), run(3, SEARCH, "[]"), run(4, COMMENT, "commented #2 on issue #1"))
    assert passed("w", replies, tools) == (
        "after recording the workflow's start",
        "before recording step 1",
        "after recording step 1",
        "tracker filed issue a",
        "before recording step 2",
        "after recording step 2",
        "before recording step 3",
        "after recording step 3",
        "tracker commented comment c",
        "before recording step 4",
        "after recording step 4",
        "before recording step 5",
        "after recording step 5",
        "before recording workflow w SUCCESS",
        "after recording workflow w SUCCESS",
    )


def test_a_comment_that_found_no_issue_passed_no_tracker_point() -> None:
    """The tracker's comment passes its point only once it found the issue: its answer says so."""
    points = passed("w", (reply(1, COMMENT), reply(3)), (run(2, COMMENT, "error: no issue titled 'issue a'"),))
    assert "tracker commented comment c" not in points
    assert "before recording step 2" in points


def test_a_tool_not_the_trackers_or_a_step_that_raised_leaves_the_points_unknown() -> None:
    """Another tool's own points are its code's; a step that raised passed no "before" point: no points at all."""
    own = Asked("x", "send_mail", {"to": "a"})
    assert passed("w", (reply(1, own), reply(3)), (run(2, own, "sent"),)) == ()
    assert passed("w", (reply(1, FILE), reply(3)), (run(2, FILE, "", failed=True),)) == ()
