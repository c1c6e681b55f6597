"""One uninterrupted run, read from a Temporal workflow history (JSON): the model's replies, the tools' runs, the saves.

`crashsweep from-trace history.json` reads the history `temporal workflow show --output json` and
temporalio's `WorkflowHistory.to_json()` write (spec/FROM_TRACE.md 2, "Temporal's history"), its
events read as the importer reads them (importers/temporal_json.py), its activities paired and
their payloads decoded in temporal_activities.py. The loop read is the Temporal agent's
(`--framework temporal`, realsweep/adapters/temporal_agent.py, and docs/examples/
my_temporal_agent.py): an activity asks the model and returns the reply's calls as a list of
{id, name, args} (empty: the final answer, whose text is not recorded); the next activities run
those calls, one each, matched to a call by their input (the call itself, as the built-in
agent's `run_tool` takes it) or by their ID and type (the call's ID as the activity ID, its tool
as the activity's type, as the example's are scheduled).

The saves, in the reference loop's words, at their event IDs (the order): the workflow's start
and input (WorkflowExecutionStarted, "start"), each model activity's completion, recorded before
the workflow schedules the reply's calls ("reply K"; the final answer's "final"), each call's
activity's close, recorded after it ran ("result C"). A reply's order number is its activity's
scheduling, a call's run its activity's (attempt 2 after attempt 1 raised: a failed run, then
the run at its ActivityTaskStarted). The history holds no key a call sent (keys are unseen).

Refused in one line (TraceError): not one workflow start; a workflow continued from another
run (continue-as-new) or retried as a whole; one that did not complete (still running, failed,
timed out, cancelled, terminated, continued as new); a workflow task that failed (a reset, a
replay that diverged, a raise) or timed out (a worker gone); more than one worker process
(a restarted worker has another identity); an activity not read (temporal_activities.py); an
activity that is neither a model reply nor a run of one of its calls; a call with no run; a run
whose last reply asks for calls.
"""

from __future__ import annotations

from pathlib import Path

from crashsweep.fromtrace import temporal_points
from crashsweep.fromtrace.dbos_store import CALL_KEYS
from crashsweep.fromtrace.dbos_values import text
from crashsweep.fromtrace.recording import Asked, Marked, Recording, Reply, ToolRun, TraceError
from crashsweep.fromtrace.temporal_activities import Activity, activities, message
from crashsweep.importers import temporal_json
from crashsweep.importers.base import Unusable
from crashsweep.importers.temporal_json import Raw

RECORDS = "history events"
"""What the Recording's records are called (`spans` counts every event of the history)."""
UNSEEN = frozenset({"keys"})
"""What a history cannot show (Recording.unseen): the key a call sent (its activity's input holds the call)."""
STARTED = "WORKFLOW_EXECUTION_STARTED"
ENDED = {
    "WORKFLOW_EXECUTION_COMPLETED": "",
    "WORKFLOW_EXECUTION_FAILED": "failed",
    "WORKFLOW_EXECUTION_TIMED_OUT": "timed out",
    "WORKFLOW_EXECUTION_CANCELED": "was cancelled",
    "WORKFLOW_EXECUTION_TERMINATED": "was terminated",
    "WORKFLOW_EXECUTION_CONTINUED_AS_NEW": "continued as new (the run goes on in another history)",
}
"""The events that close a workflow execution, and what each says of a run that did not complete."""
WORKERS = (
    "WORKFLOW_TASK_STARTED",
    "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_STARTED",
    "ACTIVITY_TASK_COMPLETED",
    "ACTIVITY_TASK_FAILED",
)
"""The events whose `identity` is a worker's (the workflow's start names its client's)."""


def read(path: Path) -> Recording:
    """The one workflow run of the history at `path`; TraceError (one line) when it is not one that completed."""
    try:
        raws = temporal_json.read_events(path)
    except Unusable as error:
        raise TraceError(str(error)) from None
    start = _started(path, raws)
    run = str(start.attrs.get("workflowId") or start.attrs.get("firstExecutionRunId") or "")
    kind = start.attrs.get("workflowType")
    workflow = str(kind.get("name") or run) if isinstance(kind, dict) else run
    _completed(path, run, raws)
    _uninterrupted(path, run, raws)
    found = activities(path, raws)  # an activity retried after a crash is refused here, naming it
    _one_worker(path, run, raws)
    if not found:
        raise TraceError(f"{path}: workflow {run} ran no activity: from-trace needs the model's replies")
    replies, tools, marked, steps = _timeline(path, found)
    if replies[-1].final is None:
        raise TraceError(f"{path}: the last model reply asks for calls: the run stopped before its final answer")
    saved = Marked("save", "start", start.id, f"event {start.id}", ())
    points = temporal_points.passed(steps)
    ordered = (saved, *sorted(marked, key=lambda m: m.start))  # side by side, activities close in any order
    return Recording(path, run, workflow, workflow, replies, tools, ordered, points, len(raws), RECORDS, UNSEEN)


def _started(path: Path, raws: list[Raw]) -> Raw:
    """The history's one WorkflowExecutionStarted, of a run that is not a continuation or a retry of another."""
    starts = [raw for raw in raws if raw.type == STARTED]
    if len(starts) != 1:
        raise TraceError(f"{path}: {len(starts)} workflow starts (WorkflowExecutionStarted): from-trace reads one run")
    (start,) = starts
    before = start.attrs.get("continuedExecutionRunId")
    if before:
        raise TraceError(f"{path}: the workflow continued run {before} (continue-as-new): it is not one whole run")
    attempt = start.attrs.get("attempt", 1)
    if isinstance(attempt, int) and attempt > 1:
        raise TraceError(
            f"{path}: the workflow's attempt {attempt}: it was retried after a failure: from-trace reads one run"
        )
    return start


def _completed(path: Path, run: str, raws: list[Raw]) -> None:
    """Refuse a workflow that has not closed, or closed otherwise than completed."""
    closes = [raw for raw in raws if raw.type in ENDED]
    if not closes:
        raise TraceError(
            f"{path}: workflow {run} has not closed (still running, or stopped with its worker): "
            "from-trace reads a run that finished"
        )
    said = ENDED[closes[-1].type]
    if said:
        detail = message(closes[-1].attrs.get("failure"))
        detail = f": {detail}" if detail else ""
        raise TraceError(f"{path}: workflow {run} {said}{detail}: from-trace reads a run that completed")


def _uninterrupted(path: Path, run: str, raws: list[Raw]) -> None:
    """Refuse a workflow task that failed (a reset, a replay that diverged, a raise) or timed out (a worker gone)."""
    for raw in raws:
        if raw.type == "WORKFLOW_TASK_FAILED":
            cause = str(raw.attrs.get("cause", "")).removeprefix("WORKFLOW_TASK_FAILED_CAUSE_")
            what = "was reset" if "RESET" in cause.upper() else f"had a workflow task fail ({cause or 'no cause'})"
            detail = message(raw.attrs.get("failure"))
            raise TraceError(
                f"{path}: workflow {run} {what} at event {raw.id}{': ' + detail if detail else ''}: "
                "from-trace reads one uninterrupted run"
            )
        if raw.type == "WORKFLOW_TASK_TIMED_OUT":
            raise TraceError(
                f"{path}: a workflow task of {run} timed out at event {raw.id} (its worker gone, a crash?): "
                "from-trace reads one uninterrupted run"
            )


def _one_worker(path: Path, run: str, raws: list[Raw]) -> None:
    """Refuse a run more than one worker process served: a restarted worker has another identity (`pid@host`)."""
    workers = list(
        dict.fromkeys(str(r.attrs["identity"]) for r in raws if r.type in WORKERS and r.attrs.get("identity"))
    )
    if len(workers) > 1:
        raise TraceError(
            f"{path}: workflow {run} was served by {len(workers)} worker processes ({', '.join(workers[:3])}): "
            "a worker restarted, or several shared the run: from-trace reads one uninterrupted run by one worker"
        )


Steps = list[tuple[Activity, ToolRun | None]]


def _timeline(
    path: Path, found: list[Activity]
) -> tuple[tuple[Reply, ...], tuple[ToolRun, ...], tuple[Marked, ...], Steps]:
    """A model activity, then one activity per call of its reply, and so on; each activity with its call's run."""
    replies: list[Reply] = []
    tools: list[ToolRun] = []
    marked: list[Marked] = []
    steps: Steps = []
    pending: dict[str, Asked] = {}
    for activity in found:
        if pending:
            asked = _asked(path, activity, pending)
            del pending[asked.id]
            runs = _runs(activity, asked)
            tools += runs
            steps.append((activity, runs[-1]))
            marked.append(Marked("save", f"result {asked.id}", activity.closed, f"event {activity.closed}", ()))
            continue
        if replies and replies[-1].final is not None:
            raise TraceError(
                f"{path}: {activity.name} (event {activity.scheduled}): an activity after the final answer"
            )
        calls = _calls(activity)
        if calls is None:
            why = f"it failed: {activity.failure}" if activity.failure is not None else "its result is no list of calls"
            raise TraceError(
                f"{path}: {activity.name} (event {activity.scheduled}): not a model reply ({why}): from-trace reads "
                "a model activity returning the reply's calls as {id, name, args}, then an activity per call"
            )
        replies.append(Reply(calls, None if calls else "", activity.scheduled, f"event {activity.closed}"))
        value = f"reply {sum(1 for r in replies if r.calls)}" if calls else "final"
        marked.append(Marked("save", value, activity.closed, f"event {activity.closed}", ()))
        steps.append((activity, None))
        pending = {call.id: call for call in calls}
        if len(pending) < len(calls):
            raise TraceError(f"{path}: {activity.name} (event {activity.closed}): a reply asks two calls with one ID")
    if pending:
        raise TraceError(f"{path}: call {next(iter(pending))} of {replies[-1].span} has no activity that ran it")
    return tuple(replies), tuple(tools), tuple(marked), steps


def _calls(activity: Activity) -> tuple[Asked, ...] | None:
    """The calls of a model activity's result (a list of {id, name, args}), or None for another activity."""
    value = activity.result
    if activity.failure is not None or not isinstance(value, list):
        return None
    if not all(isinstance(c, dict) and set(c) == CALL_KEYS for c in value):
        return None
    return tuple(Asked(str(c["id"]), str(c["name"]), c["args"]) for c in value)


def _asked(path: Path, activity: Activity, pending: dict[str, Asked]) -> Asked:
    """The pending call `activity` ran: the one its input is, else the one of its ID and type; else TraceError."""
    if len(activity.input) == 1 and isinstance(activity.input[0], dict) and set(activity.input[0]) == CALL_KEYS:
        call = activity.input[0]
        asked = pending.get(str(call["id"]))
        if asked is not None and (asked.tool, asked.arguments) == (call["name"], call["args"]):
            return asked
    asked = pending.get(activity.id)
    if asked is not None and asked.tool == activity.type:
        return asked
    raise TraceError(
        f"{path}: {activity.name} (event {activity.scheduled}) runs none of the calls {', '.join(pending)} of the "
        "reply before it (its input is no such call, nor is its ID a call's ID with the call's tool as its type)"
    )


def _runs(activity: Activity, asked: Asked) -> list[ToolRun]:
    """The call's runs: attempt 1 when it raised, then the last attempt's outcome, at its close."""
    runs = []
    if activity.raised is not None:
        place = f"event {activity.started}"
        runs.append(ToolRun(asked.id, asked.tool, asked.arguments, None, "", True, False, activity.scheduled, place))
    start = activity.started if activity.raised is not None else activity.scheduled
    failed = activity.failure is not None
    result = None if failed else text(activity.result)
    runs.append(
        ToolRun(asked.id, asked.tool, asked.arguments, result, "", failed, False, start, f"event {activity.closed}")
    )
    return runs
