"""The crash points a run of a Temporal agent passed, named as `sweep --framework temporal --list-points` names them.

The Temporal adapter's worker interceptor (realsweep/adapters/temporal.py CrashPointInterceptor)
passes two points in each attempt of each activity: "before activity T N" before the body and
"before reporting activity T N" after it returned (T the activity's type, N its ID); the tracker's
tools pass one of their own between them once the tracker accepted a write: "tracker filed TITLE"
(create_issue's result "filed issue #N") and "tracker commented BODY" (comment's "commented #N"),
TITLE and BODY the call's arguments. Nothing else of the run passes a point: the workflow's code
and the client pass none. In a run whose every activity completed at its first attempt and whose
every call is to a tracker tool, the history determines each of them: the activities by their
types and IDs, the writes by their recorded arguments and results.

Otherwise none are derived: another tool's points are its code's, an attempt that raised passed
"before reporting ... failed" after points of its body the history does not show. The order is the
order the activities were scheduled in: the order they ran in a workflow that awaits each before
the next (the built-in agent); activities run side by side pass theirs in the threads' order, which
no event keeps (`--points from:FILE` reads the names and passes, not their order).
"""

from __future__ import annotations

from collections.abc import Iterable

from crashsweep.fromtrace.derive import TRACKER_TOOLS
from crashsweep.fromtrace.langgraph_points import tracker_point
from crashsweep.fromtrace.recording import ToolRun
from crashsweep.fromtrace.temporal_activities import Activity


def passed(steps: Iterable[tuple[Activity, ToolRun | None]]) -> tuple[str, ...]:
    """The points, in order, of `steps` (each activity with its call's run, None for a model's); () if unknown."""
    steps = list(steps)
    if any(activity.attempts > 1 or activity.failure is not None for activity, _ in steps):
        return ()
    if any(run is not None and run.tool not in TRACKER_TOOLS for _, run in steps):
        return ()
    points: list[str] = []
    for activity, run in steps:
        inside = tracker_point(run) if run is not None else []
        points += [f"before {activity.name}", *inside, f"before reporting {activity.name}"]
    return tuple(points)
