"""Temporal workflow histories made by hand, event by event, as temporalio's `WorkflowHistory.to_json()` writes them.

The shape is the one a real dev server's history has (tests/fromtrace/real/test_temporal_store_run.py
reads one): `{"events": [...]}`, each event's `eventId` a string, `eventType` "EVENT_TYPE_...", its
attributes under `<type in camelCase>EventAttributes`, payloads of the JSON data converter
(`json/plain`, base64). Each activity is scheduled by a workflow task of its own (scheduled,
started, completed), then started and closed: six events; the workflow's start is event 1.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tests.fromtrace.triage_replies import TURN_1, TURN_2

SEARCHED = '[{"number": 1, "title": "issue create_a"}, {"number": 2, "title": "issue create_b"}]'
ANSWERS = {"create_a": "filed issue #1", "create_b": "filed issue #2", "search": SEARCHED}
ANSWERS["comment_a"] = "commented #3 on issue #1"
RAISED = {"message": "the tracker was down", "applicationFailureInfo": {"type": "RuntimeError"}}
TIMED_OUT = {
    "message": "activity StartToClose timeout",
    "timeoutFailureInfo": {"timeoutType": "TIMEOUT_TYPE_START_TO_CLOSE"},
}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def payloads(*values: Any, encoding: str = "json/plain") -> dict[str, Any]:
    """Values as the JSON data converter's payloads."""
    return {"payloads": [{"metadata": {"encoding": b64(encoding)}, "data": b64(json.dumps(v))} for v in values]}


class History:
    """One workflow's history, built in order: its start, then each activity, then its end."""

    def __init__(self, workflow: str = "triage", run: str = "triage-1", identity: str = "101@test", **start: Any):
        self.events: list[dict[str, Any]] = []
        self.identity = identity
        attrs = {"workflowType": {"name": workflow}, "workflowId": run, "attempt": 1, "identity": "client@test"}
        self.add("WORKFLOW_EXECUTION_STARTED", **(attrs | start))

    def add(self, kind: str, **attrs: Any) -> int:
        """The next event, of type EVENT_TYPE_`kind`; its ID."""
        number = len(self.events) + 1
        words = kind.lower().split("_")
        key = words[0] + "".join(w.title() for w in words[1:]) + "EventAttributes"
        self.events.append(
            {"eventId": str(number), "eventTime": f"2026-01-01T00:00:{number:02d}Z", "eventType": f"EVENT_TYPE_{kind}"}
            | {key: attrs}
        )
        return number

    def task(self, identity: str = "") -> int:
        """A workflow task, scheduled, started and completed by a worker; the completed event's ID."""
        scheduled = self.add("WORKFLOW_TASK_SCHEDULED", attempt=1)
        who = identity or self.identity
        started = self.add("WORKFLOW_TASK_STARTED", scheduledEventId=str(scheduled), identity=who)
        return self.add(
            "WORKFLOW_TASK_COMPLETED", scheduledEventId=str(scheduled), startedEventId=str(started), identity=who
        )

    def activity(
        self,
        ident: str,
        kind: str,
        *args: Any,
        result: Any = None,
        close: str | None = "COMPLETED",
        attempt: int = 1,
        last: dict[str, Any] | None = None,
        identity: str = "",
        encoding: str = "json/plain",
    ) -> History:
        """Activity `ident` of type `kind` with input `args`: scheduled, started (`attempt`), closed by `close`."""
        done = self.task()
        scheduled = self.add(
            "ACTIVITY_TASK_SCHEDULED",
            activityId=ident,
            activityType={"name": kind},
            input=payloads(*args, encoding=encoding),
            workflowTaskCompletedEventId=str(done),
        )
        if close is None:
            return self
        who = identity or self.identity
        started = self.add(
            "ACTIVITY_TASK_STARTED",
            scheduledEventId=str(scheduled),
            identity=who,
            attempt=attempt,
            **({"lastFailure": last} if last else {}),
        )
        attrs: dict[str, Any] = {"scheduledEventId": str(scheduled), "startedEventId": str(started), "identity": who}
        if close == "COMPLETED":
            attrs["result"] = payloads(result)
        elif close == "FAILED":
            attrs["failure"] = RAISED
        self.add(f"ACTIVITY_TASK_{close}", **attrs)
        return self

    def ask(self, ident: int, turns_done: int, calls: list[dict[str, Any]]) -> History:
        """The built-in agent's model activity: `ask_model(turns_done)`, the reply's calls its result."""
        return self.activity(str(ident), "ask_model", turns_done, result=calls)

    def run_tool(self, ident: int, call: dict[str, Any], **options: Any) -> History:
        """The built-in agent's tool activity: `run_tool(call)`, the tool's answer its result."""
        options.setdefault("result", ANSWERS.get(call["id"], "done"))
        return self.activity(str(ident), "run_tool", call, **options)

    def end(self, kind: str = "COMPLETED", **attrs: Any) -> History:
        """The workflow's close, after the workflow task that decided it."""
        done = self.task()
        self.add(f"WORKFLOW_EXECUTION_{kind}", workflowTaskCompletedEventId=str(done), **attrs)
        return self

    def builtin(self, end: bool = True) -> History:
        """Triage as the built-in agent runs it, activity by activity, then the workflow's result (2 tool turns).

        ask (1), create_a (2), create_b (3), ask (4), search (5), comment_a (6), ask (7): the final answer.
        """
        self.ask(1, 0, TURN_1).run_tool(2, TURN_1[0]).run_tool(3, TURN_1[1])
        self.ask(4, 1, TURN_2).run_tool(5, TURN_2[0]).run_tool(6, TURN_2[1]).ask(7, 2, [])
        return self.end(result=payloads(2)) if end else self

    def write(self, path: Path) -> Path:
        path.write_text(json.dumps({"events": self.events}), encoding="utf-8")
        return path


def legacy(history: History, path: Path) -> Path:
    """The history as Temporal's older web UI and tctl exported it: PascalCase event types, IDs as JSON numbers."""
    events = []
    for event in history.events:
        kind = event["eventType"].removeprefix("EVENT_TYPE_")
        pascal = "".join(word.title() for word in kind.split("_"))
        events.append(event | {"eventId": int(event["eventId"]), "eventType": pascal})
    path.write_text(json.dumps({"events": events}), encoding="utf-8")
    return path
