"""The activities of a Temporal workflow history, each with its input, its outcome and its attempts, payloads decoded.

A history (crashsweep/importers/temporal_json.py reads its events) records an activity in up to
three events: ActivityTaskScheduled (its ID, type and input, written when the workflow asked for
it), ActivityTaskStarted (written when its last attempt closed: that attempt's number, and the
attempt before it's failure as `lastFailure`) and one close (Completed with its result, Failed,
TimedOut or Canceled). This module pairs them by `scheduledEventId` and decodes the payloads of
the JSON data converter (`json/plain`: base64 JSON; `binary/null`: None), the one Temporal's SDKs
use by default. What cannot be one uninterrupted run's activity is refused in one line
(TraceError): an activity never closed, timed out for good or cancelled; an attempt after one that
timed out (a worker gone, a crash: the body may have run twice); a third attempt or later (the
history keeps nothing of the first ones); a payload in another encoding (a codec's).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.fromtrace.recording import TraceError
from crashsweep.importers.temporal_json import Raw

SCHEDULED = "ACTIVITY_TASK_SCHEDULED"
STARTED = "ACTIVITY_TASK_STARTED"
COMPLETED = "ACTIVITY_TASK_COMPLETED"
FAILED = "ACTIVITY_TASK_FAILED"
REFUSED = {
    "ACTIVITY_TASK_TIMED_OUT": "timed out for good: its last attempt's outcome is unknown",
    "ACTIVITY_TASK_CANCELED": "was cancelled: from-trace reads activities that completed or failed",
}
"""The closes no uninterrupted run's activity is read from, and why."""


@dataclass(frozen=True, slots=True)
class Activity:
    """One activity: its ID and type, its events, its decoded input and result, how it ended."""

    id: str
    type: str
    scheduled: int
    """ActivityTaskScheduled's event ID (the order activities are read in)."""
    started: int
    """ActivityTaskStarted's event ID, or 0 when the history has none."""
    closed: int
    """The event ID of its close (Completed or Failed)."""
    input: tuple[Any, ...]
    result: Any
    """Its result's one payload, decoded (None when it failed or returned nothing)."""
    failure: str | None
    """None when it completed; else the failure's message (ActivityTaskFailed: its last attempt raised)."""
    raised: str | None
    """At attempt 2, the message of attempt 1's raise (`lastFailure`); None for a first attempt."""

    @property
    def name(self) -> str:
        """How the Temporal adapter's crash points name it: `activity TYPE ID`."""
        return f"activity {self.type} {self.id}"

    @property
    def attempts(self) -> int:
        """How many attempts ran: 1, or 2 after a raise."""
        return 1 if self.raised is None else 2


def activities(path: Path, raws: list[Raw]) -> list[Activity]:
    """Every activity of the history, in the order it was scheduled; TraceError (one line) for one not read."""
    scheduled: dict[int, Raw] = {}
    later: dict[int, dict[str, Raw]] = {}
    for raw in raws:
        if raw.type == SCHEDULED:
            scheduled[raw.id] = raw
        elif raw.type in (STARTED, COMPLETED, FAILED, *REFUSED):
            number = reference(raw.attrs.get("scheduledEventId"))
            if number not in scheduled:
                raise TraceError(f"{path}: event {raw.id}: scheduledEventId names no ActivityTaskScheduled before it")
            later.setdefault(number, {})[STARTED if raw.type == STARTED else "close"] = raw
    return [_activity(path, raw, later.get(raw.id, {})) for raw in scheduled.values()]


def reference(value: Any) -> int:
    """An event ID an event refers to (proto JSON's string of digits, or a number); 0 for none."""
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _activity(path: Path, raw: Raw, later: dict[str, Raw]) -> Activity:
    """The activity scheduled at `raw`, with its started and close events."""
    ident, kind = raw.attrs.get("activityId"), raw.attrs.get("activityType")
    tool = kind.get("name") if isinstance(kind, dict) else None
    if not isinstance(ident, str) or not ident or not isinstance(tool, str) or not tool:
        raise TraceError(f"{path}: event {raw.id}: an activity without activityId and activityType.name")
    name = f"activity {tool} {ident}"
    close, started = later.get("close"), later.get(STARTED)
    if close is None:
        raise TraceError(f"{path}: {name} (event {raw.id}) never closed: the run did not finish it")
    if close.type in REFUSED:
        raise TraceError(f"{path}: {name} {REFUSED[close.type]} (event {close.id}): from-trace reads one finished run")
    raised = _raised(path, name, started)
    failure = None if close.type == COMPLETED else message(close.attrs.get("failure")) or "no message"
    result = payloads(path, close.id, close.attrs.get("result"))
    return Activity(
        ident,
        tool,
        raw.id,
        0 if started is None else started.id,
        close.id,
        payloads(path, raw.id, raw.attrs.get("input")),
        result[0] if len(result) == 1 else (list(result) or None),
        failure,
        raised,
    )


def _raised(path: Path, name: str, started: Raw | None) -> str | None:
    """The message of attempt 1's raise when the last attempt was 2; None at 1; TraceError for what is not read."""
    attempt = started.attrs.get("attempt", 1) if started is not None else 1
    if started is None or not isinstance(attempt, int) or attempt <= 1:
        return None
    last = started.attrs.get("lastFailure")
    said = message(last) or "no failure recorded"
    if not isinstance(last, dict) or "applicationFailureInfo" not in last:
        raise TraceError(
            f"{path}: {name} was retried after its attempt {attempt - 1} timed out ({said}; event {started.id}: "
            "a worker crash?): from-trace reads one uninterrupted run"
        )
    if attempt > 2:
        raise TraceError(
            f"{path}: {name} ran {attempt} attempts (event {started.id}): the history keeps no outcome of attempts "
            f"1 to {attempt - 2} (a raise, or a crash?): from-trace reads one uninterrupted run"
        )
    return said


def message(failure: Any) -> str:
    """A failure's message ("" when there is none)."""
    return str(failure.get("message", "")) if isinstance(failure, dict) else ""


def payloads(path: Path, event: int, value: Any) -> tuple[Any, ...]:
    """The decoded payloads of an input or a result (`{"payloads": [...]}`; none when it is absent)."""
    if value is None:
        return ()
    found = value.get("payloads") if isinstance(value, dict) else None
    if not isinstance(found, list):
        raise TraceError(f"{path}: event {event}: a value without its list of payloads")
    return tuple(_payload(path, event, payload) for payload in found)


def _payload(path: Path, event: int, payload: Any) -> Any:
    """One payload of the JSON data converter: `json/plain` (base64 JSON) or `binary/null`."""
    metadata = payload.get("metadata") if isinstance(payload, dict) else None
    encoding = _text(metadata.get("encoding", "")) if isinstance(metadata, Mapping) else ""
    if encoding == "binary/null":
        return None
    if encoding != "json/plain":
        raise TraceError(
            f"{path}: event {event}: a payload encoded {encoding or 'without an encoding'!r}: from-trace reads "
            "the JSON data converter's json/plain (save a codec's payloads decoded)"
        )
    try:
        return json.loads(base64.b64decode(str(payload.get("data", "")), validate=True))
    except (binascii.Error, ValueError):
        raise TraceError(f"{path}: event {event}: a json/plain payload whose data is not base64 JSON") from None


def _text(value: Any) -> str:
    """A metadata value: base64 text (proto JSON's bytes), read as UTF-8."""
    try:
        return base64.b64decode(str(value), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return ""
