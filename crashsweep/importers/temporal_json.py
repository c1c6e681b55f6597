"""A Temporal workflow's history as JSON: each activity's attempts as `tool_run`, the close as `run_status`.

The file is what `temporal workflow show --output json` prints and what temporalio's
`WorkflowHistory.to_json()` writes (the same proto JSON: `{"events": [...]}`, `eventId` a
string, `eventType` "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED", one `...EventAttributes` object an
event); the older export of Temporal's web UI and tctl, whose names are "ActivityTaskScheduled"
and whose numbers may be JSON numbers, is read alike. One file is one workflow execution, one
History (spec/HISTORY.md 7):

- its run is the workflow ID (WorkflowExecutionStarted's `workflowId`; a server too old to
  write it: the execution's first run ID, which names the same execution and no other);
- an incarnation is a worker process: the identity (`pid@host`) of the workflow task that
  scheduled the activity, numbered 1, 2, ... in the order the identities first take a workflow
  task in the history (a restarted worker has a new pid, so a new identity); 0 where none is
  named. Every event of an activity keeps the incarnation of its scheduling, so that an attempt
  and its outcome are in one (run, incarnation), as spec/HISTORY.md 1 pairs them;
- each activity is a call (`call` its activity ID, `tool` its type, `args_digest` a digest of
  its input payloads): ActivityTaskScheduled is a `tool_run` `invoke`; ActivityTaskCompleted
  `ok`; ActivityTaskFailed `fail` (its body raised); ActivityTaskCanceled `fail`;
  ActivityTaskTimedOut `info`: the attempt neither returned nor raised in time, and its body
  may have run to its end (a killed worker's, or one still running when the server gave up), so
  its outcome is not known, which is Jepsen's `info` (spec/HISTORY.md 7's table says `fail`);
- Temporal writes ActivityTaskStarted only when the attempt closes, for the last attempt alone
  (its `attempt` number, and the previous attempt's failure as `lastFailure`): where it names
  attempt N > 1, the attempts before it are given at that event: the previous one closed by its
  `lastFailure` (`fail` when it raised, `info` for a timeout), those before it as one `info`
  (the history keeps nothing of them), then an `invoke` of attempt N. An activity the history
  leaves open keeps its `invoke` alone: an attempt of unknown outcome;
- the close: WorkflowExecutionCompleted is `run_status` `ok` `finished`; Failed and TimedOut
  `fail` `failed`; Canceled and Terminated `fail` `cancelled`; a WorkflowTaskFailed whose cause
  is nondeterminism (a replay found other commands than the history) `fail` `diverged`.
  ContinuedAsNew is no status: the workflow goes on in a new execution (another history).

Local activities (markers), child workflows, signals and timers are not read. Each event's
`src` is the file and "event N", its time the event's `eventTime`. The history holds no
receiver's records, no conversation and no approvals: those facts are unseen.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crashsweep.importers.base import Kind, Unusable, place
from crashsweep.spec.history import CANCELLED, DIVERGED, FAILED, FINISHED, Event, History, args_digest

PREFIX = "EVENT_TYPE_"
BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some Windows tools write before the JSON (read past)."""
CAUSE = "WORKFLOW_TASK_FAILED_CAUSE_"
NONDETERMINISM = "NON_DETERMINISTIC_ERROR"
"""A workflow task's failure cause (without CAUSE) when a replay found other commands than its history."""
UNSEEN = {
    "effects": "a Temporal history holds the activities' attempts, not the receiver's records",
    "transcript": "a Temporal history holds activities, not the conversation sent to the model",
    "approvals": "a Temporal history names no tool approval",
}
_WORKFLOW_TASKS = ("WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED", "WORKFLOW_TASK_FAILED")
_CLOSES = {
    "WORKFLOW_EXECUTION_COMPLETED": ("ok", FINISHED),
    "WORKFLOW_EXECUTION_FAILED": ("fail", FAILED),
    "WORKFLOW_EXECUTION_TIMED_OUT": ("fail", FAILED),
    "WORKFLOW_EXECUTION_CANCELED": ("fail", CANCELLED),
    "WORKFLOW_EXECUTION_TERMINATED": ("fail", CANCELLED),
}
_SAID = {
    "WORKFLOW_EXECUTION_TIMED_OUT": "the workflow execution timed out",
    "WORKFLOW_EXECUTION_CANCELED": "the workflow was cancelled",
    "WORKFLOW_EXECUTION_TERMINATED": "the workflow was terminated",
}
"""The detail of a close that carries no failure of its own."""
_ACTIVITY_ENDS = {
    "ACTIVITY_TASK_COMPLETED": "ok",
    "ACTIVITY_TASK_FAILED": "fail",
    "ACTIVITY_TASK_TIMED_OUT": "info",
    "ACTIVITY_TASK_CANCELED": "fail",
}


@dataclass(frozen=True, slots=True)
class Raw:
    """One event of the file: its ID, type (without EVENT_TYPE_), time and attributes."""

    id: int
    type: str
    time: float
    attrs: Mapping[str, Any]


def recognises(path: Path, head: bytes) -> bool:
    """A JSON object whose first bytes hold a list of `events` with an `eventType`."""
    return head.removeprefix(BOM).lstrip().startswith(b"{") and b'"events"' in head and b'"eventType"' in head


def histories(path: Path) -> tuple[History, ...]:
    """The file's one History; Unusable naming the file and the event that is wrong."""
    events = _Reader(path, read_events(path)).events()
    numbered = tuple(dataclasses.replace(event, seq=n) for n, event in enumerate(events, 1))
    return (History(numbered, facts=frozenset({"status"}), unseen=dict(UNSEEN)),)


def read_events(path: Path) -> list[Raw]:
    """The file's events in its order, each with its ID, type and attributes (Unusable naming the event that is wrong).

    What `histories` reads; from-trace's reader of a history (fromtrace/temporal_store.py) reads it too.
    """
    return [_raw(path, n, data) for n, data in enumerate(_events(path))]


def _events(path: Path) -> list[Any]:
    """The file's list of events; Unusable when it is not JSON or holds none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as error:
        raise Unusable(f"{path}: cannot be read ({error})") from None
    except json.JSONDecodeError as error:
        raise Unusable(f"{path}:{error.lineno}: not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise Unusable(f"{path}: expected a JSON object with a list of events")
    events: list[Any] = data["events"]
    return events


def _raw(path: Path, index: int, data: Any) -> Raw:
    """Event number `index` (from 0) of the list; Unusable for one that is not a history event."""
    if not isinstance(data, dict):
        raise Unusable(f"{path}: events[{index}]: expected a JSON object")
    number = _number(data.get("eventId"))
    if number is None or number < 1:
        raise Unusable(f"{path}: events[{index}]: eventId {data.get('eventId')!r}: expected a whole number, 1 or more")
    name = data.get("eventType")
    if not isinstance(name, str) or not name:
        raise Unusable(f"{path}: event {number}: eventType {name!r}: expected an event type")
    kind = _enum(name, PREFIX)
    words = kind.lower().split("_")
    attrs = data.get(words[0] + "".join(w.title() for w in words[1:]) + "EventAttributes", {})
    if not isinstance(attrs, dict):
        raise Unusable(f"{path}: event {number}: its attributes are not a JSON object")
    return Raw(number, kind, _time(path, number, data.get("eventTime")), attrs)


def _number(value: Any) -> int | None:
    """An event ID as proto JSON writes an int64 (a string of digits) or as a JSON number; None for neither."""
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _enum(name: str, prefix: str) -> str:
    """A proto enum's value without `prefix` ("ACTIVITY_TASK_SCHEDULED"), from proto JSON or the UI's PascalCase."""
    if not name.isupper():
        name = re.sub("([A-Z]+)", r"_\1", name).upper().lstrip("_")
    return name.removeprefix(prefix)


def _time(path: Path, number: int, text: Any) -> float:
    """Seconds since the epoch of an RFC 3339 `eventTime` (0 when there is none)."""
    if text is None or text == "":
        return 0.0
    try:
        when = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        when = None
    if when is None:
        raise Unusable(f"{path}: event {number}: eventTime {text!r}: expected an RFC 3339 time")
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _failure(attrs: Mapping[str, Any], name: str = "failure") -> str:
    failure = attrs.get(name)
    return str(failure.get("message", "")) if isinstance(failure, dict) else ""


class _Reader:
    """The events of one history, in order: what each Temporal event says about the run."""

    def __init__(self, path: Path, raws: list[Raw]) -> None:
        self.path = path
        self.raws = raws
        self.by_id = {raw.id: raw for raw in raws}
        self.workers: dict[str, int] = {}
        for raw in raws:
            identity = raw.attrs.get("identity")
            if raw.type in _WORKFLOW_TASKS and isinstance(identity, str) and identity:
                self.workers.setdefault(identity, len(self.workers) + 1)
        self.run = self._run()
        self.scheduled: dict[int, Event] = {}
        self.handlers: dict[str, Callable[[Raw], list[Event]]] = {
            "ACTIVITY_TASK_SCHEDULED": self._scheduled,
            "ACTIVITY_TASK_STARTED": self._started,
            "WORKFLOW_TASK_FAILED": self._task_failed,
            **dict.fromkeys(_ACTIVITY_ENDS, self._activity_end),
            **dict.fromkeys(_CLOSES, self._close),
        }

    def events(self) -> list[Event]:
        found: list[Event] = []
        for raw in self.raws:
            handler = self.handlers.get(raw.type)
            if handler is not None:
                found.extend(handler(raw))
        return found

    def _run(self) -> str:
        """The workflow ID, else the execution's first run ID, else "" (a history without its start)."""
        for raw in self.raws:
            if raw.type == "WORKFLOW_EXECUTION_STARTED":
                for name in ("workflowId", "firstExecutionRunId", "originalExecutionRunId"):
                    if isinstance(raw.attrs.get(name), str) and raw.attrs[name]:
                        return str(raw.attrs[name])
        return ""

    def _incarnation(self, task_id: Any) -> int:
        """The incarnation of the worker that completed workflow task event `task_id` (0: not named)."""
        task = self.by_id.get(_number(task_id) or 0)
        return 0 if task is None else self.workers.get(str(task.attrs.get("identity", "")), 0)

    def _event(self, raw: Raw, type_: str, f: str, incarnation: int, **fields: str) -> Event:
        """An event of this history's run at `raw`: its place in the file and its time."""
        src = place(self.path, f"event {raw.id}")
        return Event(self.run, incarnation, 0, type_, f, src=src, time=raw.time, **fields)

    def _scheduled(self, raw: Raw) -> list[Event]:
        call, kind = raw.attrs.get("activityId"), raw.attrs.get("activityType")
        tool = kind.get("name") if isinstance(kind, dict) else None
        if not isinstance(call, str) or not call or not isinstance(tool, str) or not tool:
            raise Unusable(f"{self.path}: event {raw.id}: an activity without activityId and activityType.name")
        incarnation = self._incarnation(raw.attrs.get("workflowTaskCompletedEventId", 0))
        args = args_digest(raw.attrs.get("input", {}))
        invoke = self._event(raw, "invoke", "tool_run", incarnation, call=call, tool=tool, args_digest=args)
        self.scheduled[raw.id] = invoke
        return [invoke]

    def _of(self, raw: Raw) -> Event:
        """The invoke of the activity `raw` is about (its scheduledEventId)."""
        number = raw.attrs.get("scheduledEventId")
        invoke = self.scheduled.get(_number(number) or 0)
        if invoke is None:
            raise Unusable(
                f"{self.path}: event {raw.id}: scheduledEventId {number!r} names no ActivityTaskScheduled before it"
            )
        return invoke

    def _attempt(self, raw: Raw, invoke: Event, type_: str, detail: str) -> Event:
        """An event of the activity of `invoke` at `raw`: its run, incarnation, call, tool and arguments."""
        fields = {"call": invoke.call, "tool": invoke.tool, "args_digest": invoke.args_digest, "detail": detail}
        return self._event(raw, type_, "tool_run", invoke.incarnation, **fields)

    def _started(self, raw: Raw) -> list[Event]:
        """The attempts before the last one, closed, and the last one's invoke (when it is not the first)."""
        invoke = self._of(raw)
        attempt = raw.attrs.get("attempt", 1)
        if not isinstance(attempt, int) or attempt <= 1:
            return []
        found = []
        if attempt > 2:
            before = "attempt 1" if attempt == 3 else f"attempts 1 to {attempt - 2}"
            found.append(self._attempt(raw, invoke, "info", f"{before}: no outcome in the history"))
            found.append(self._attempt(raw, invoke, "invoke", f"attempt {attempt - 1}"))
        last = raw.attrs.get("lastFailure")
        raised = isinstance(last, dict) and "applicationFailureInfo" in last  # else a timeout: outcome unknown
        why = f"attempt {attempt - 1}: {_failure(raw.attrs, 'lastFailure') or 'no failure recorded'}"
        found.append(self._attempt(raw, invoke, "fail" if raised else "info", why))
        worker = raw.attrs.get("identity")
        by = f" by {worker}" if isinstance(worker, str) and worker else ""
        found.append(self._attempt(raw, invoke, "invoke", f"attempt {attempt}{by}"))
        return found

    def _activity_end(self, raw: Raw) -> list[Event]:
        invoke = self._of(raw)
        return [self._attempt(raw, invoke, _ACTIVITY_ENDS[raw.type], _failure(raw.attrs))]

    def _close(self, raw: Raw) -> list[Event]:
        type_, status = _CLOSES[raw.type]
        incarnation = self._incarnation(raw.attrs.get("workflowTaskCompletedEventId", 0))
        detail = _failure(raw.attrs) or _SAID.get(raw.type, "")
        if raw.type == "WORKFLOW_EXECUTION_TERMINATED":
            detail += f": {raw.attrs['reason']}" if raw.attrs.get("reason") else ""
        return [self._event(raw, type_, "run_status", incarnation, status=status, detail=detail)]

    def _task_failed(self, raw: Raw) -> list[Event]:
        cause = raw.attrs.get("cause")
        if not isinstance(cause, str) or _enum(cause, CAUSE) != NONDETERMINISM:
            return []
        incarnation = self.workers.get(str(raw.attrs.get("identity", "")), 0)
        return [self._event(raw, "fail", "run_status", incarnation, status=DIVERGED, detail=_failure(raw.attrs))]


KIND = Kind(
    "temporal",
    "a Temporal workflow history as JSON (temporal workflow show --output json, WorkflowHistory.to_json())",
    recognises,
    histories,
)
