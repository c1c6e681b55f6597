"""The crash points a run of DBOS's agent passed, named as `sweep --framework dbos --list-points` names them.

The DBOS adapter (realsweep/adapters/dbos.py) passes a point at each of DBOS's records: "after
recording the workflow's start", "after recording step N" for each step's record, and "before" and
"after recording workflow W SUCCESS" around the final status; its `crash_points` decorator, on
both steps of DBOS's agent, passes "before recording step N" when the step's function returned.
The tracker's tools pass a point of their own once the tracker accepted a write: "tracker filed
TITLE" (create_issue) and "tracker commented BODY" (comment, when it found its issue: its answer
says "commented"), TITLE and BODY the call's arguments. In a run of DBOS's agent every one of
these is determined by the records: the steps by their numbers, the writes by their recorded
arguments and answers.

What the records do not say, the points are left empty for: a call to a tool other than the
tracker's (its own points are its code's), a step that raised (it passed no "before" point); and
(dbos_store.py) a workflow that made an operation of DBOS's own (`DBOS.sleep`, ...), whose
points are not read. A program whose steps lack `crash_points` passes no "before recording step
N": `sweep --points from:FILE` refuses, before any scenario, a listed point its run does not
pass (spec/POINTS.md 6).
"""

from __future__ import annotations

from crashsweep.fromtrace.derive import TRACKER_TOOLS
from crashsweep.fromtrace.recording import Reply, ToolRun

START = "after recording the workflow's start"


def passed(run: str, replies: tuple[Reply, ...], tools: tuple[ToolRun, ...]) -> tuple[str, ...]:
    """The points, in order, of workflow `run`, whose steps are `replies` and `tools`; () if unknown."""
    if any(t.tool not in TRACKER_TOOLS or t.failed for t in tools):
        return ()
    if any(call.tool not in TRACKER_TOOLS for reply in replies for call in reply.calls):
        return ()
    steps: list[tuple[int, list[str]]] = [(reply.start, []) for reply in replies]
    steps += [(tool.start, _tracker(tool)) for tool in tools]
    points = [START]
    for start, before in sorted(steps, key=lambda step: step[0]):
        number = start // 2
        points += [*before, f"before recording step {number}", f"after recording step {number}"]
    return (*points, f"before recording workflow {run} SUCCESS", f"after recording workflow {run} SUCCESS")


def _tracker(tool: ToolRun) -> list[str]:
    """The tracker's point a call passed inside its step: a write the tracker accepted, by its answer."""
    arguments = tool.arguments if isinstance(tool.arguments, dict) else {}
    answer = tool.result or ""
    if tool.tool == "create_issue" and answer.startswith("filed issue ") and "title" in arguments:
        return [f"tracker filed {arguments['title']}"]
    if tool.tool == "comment" and answer.startswith("commented ") and "body" in arguments:
        return [f"tracker commented {arguments['body']}"]
    return []
