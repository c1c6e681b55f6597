"""OTLP JSON traces built by hand for from-trace's tests: a run's spans, one call at a time.

`Trace` numbers spans and times them in the order they are added (a nanosecond apart), so a test
writes a run as the loop would make it: the agent span, a model span with its reply, tool spans,
save spans with the points passed inside them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _value(value: object) -> dict[str, object]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


class Trace:
    """The spans of one or more runs, written as one OTLP JSON line."""

    def __init__(self, run: str = "run-1", trace: str = "a" * 32) -> None:
        self.run, self.trace, self.clock, self.seq = run, trace, 1_000, 0
        self.spans: list[dict[str, Any]] = []
        self.agent = self.add(
            "invoke_agent loop",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "loop",
                "gen_ai.conversation.id": run,
                "crashsweep.job": "job",
            },
        )

    def add(
        self, name: str, attributes: dict[str, object], *, error: bool = False, points: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """A span under the agent span (the first one is the agent span itself), with points as its events."""
        self.clock += 10
        span_id = f"{len(self.spans) + 1:016x}"
        events = []
        for point in points:
            self.clock += 1
            self.seq += 1
            events.append(
                {
                    "name": "crashsweep.point",
                    "timeUnixNano": str(self.clock),
                    "attributes": [
                        {"key": "crashsweep.point.name", "value": _value(point)},
                        {"key": "crashsweep.point.seq", "value": _value(self.seq)},
                    ],
                }
            )
        span: dict[str, Any] = {
            "traceId": self.trace,
            "spanId": span_id,
            "name": name,
            "startTimeUnixNano": str(self.clock),
            "endTimeUnixNano": str(self.clock + 5),
            "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
            "events": events,
        }
        if self.spans:
            span["parentSpanId"] = self.spans[0]["spanId"]
        if error:
            span["status"] = {"code": 2, "message": "boom"}
        self.spans.append(span)
        return span

    def reply(self, *calls: tuple[str, str, Mapping[str, object]], final: str = "done") -> None:
        """A model span whose reply makes these (id, tool, arguments) calls, or gives `final`."""
        parts: list[dict[str, Any]] = [
            {"type": "tool_call", "id": i, "name": t, "arguments": dict(a)} for i, t, a in calls
        ]
        parts = parts or [{"type": "text", "content": final}]
        self.add(
            "chat scripted",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
            },
        )

    def tool(
        self,
        call: str,
        tool: str,
        arguments: dict[str, object],
        result: str,
        *,
        key: str = "",
        error: bool = False,
        points: tuple[str, ...] = (),
    ) -> None:
        """A tool span that ran `call`."""
        attributes: dict[str, object] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call,
            "gen_ai.tool.call.arguments": json.dumps(arguments),
            "gen_ai.tool.call.result": result,
        }
        if key:
            attributes["crashsweep.idempotency_key"] = key
        self.add(f"execute_tool {tool}", attributes, error=error, points=points)

    def save(self, what: str, *, synced: str = "") -> None:
        """A `save WHAT` span passing the reference loop's points (`synced`: "tmp" or "dir" adds its fsyncs)."""
        points = [f"{what}: tmp written"]
        if synced:
            points.append(f"{what}: tmp synced")
        points.append(f"{what}: renamed")
        if synced == "dir":
            points.append(f"{what}: dir synced")
        self.add(f"save {what}", {"crashsweep.save": what}, points=tuple(points))

    def write(self, path: Path) -> Path:
        """The spans as one OTLP JSON line at `path`."""
        document = {"resourceSpans": [{"scopeSpans": [{"spans": self.spans}]}]}
        path.write_text(json.dumps(document) + "\n", encoding="utf-8")
        return path


def triage(keys: bool = False, markers: bool = False, results: str = "each-call") -> Trace:
    """The triage job's run under a save-after-reply-like loop: saves at start, each reply, results, turns."""
    trace = Trace()
    trace.save("start")
    turns: list[list[tuple[str, str, dict[str, object], str]]] = [
        [
            ("create_a", "create_issue", {"title": "issue create_a"}, "filed issue #1"),
            ("create_b", "create_issue", {"title": "issue create_b"}, "filed issue #2"),
        ],
        [
            ("search", "search_issues", {"query": "issue"}, '[{"number": 1, "title": "issue create_a"}]'),
            ("comment_a", "comment", {"issue_title": "issue create_a", "body": "comment comment_a"}, "commented"),
        ],
    ]
    for k, turn in enumerate(turns, 1):
        trace.reply(*((i, t, a) for i, t, a, _ in turn))
        trace.save(f"reply {k}")
        for call, tool, arguments, result in turn:
            write = tool != "search_issues"
            if markers and write:
                trace.save(f"marker {call}")
            trace.tool(call, tool, arguments, result, key=f"k-{call}" if keys else "")
            if results == "each-call" or (results == "writes-only" and write):
                trace.save(f"result {call}")
        if results != "none":
            trace.save(f"turn {k}")
    trace.reply()
    trace.save("final")
    return trace
