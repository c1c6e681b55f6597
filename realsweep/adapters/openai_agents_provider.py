"""The provider's side of a malformed conversation: refused with HTTP 400, as the OpenAI API refuses it.

The Responses API refuses a request whose input holds a function_call_output with no
function_call of its call ID before it ("No tool call found for function call output with
call_id ..."), or a function_call with no output ("No tool output found for function call
..."): an HTTP 400, `openai.BadRequestError`. The conversation a session stores does not change
by being refused, so every later request is refused too: the process can never go on
(spec/CONVERSATIONS.md 4 and 7). The scripted model (openai_agents.ScriptedAgentsModel) checks
each request here first.

Each refused request is written, one JSON line, to `REFUSALS_FILE` in the work directory
(what was sent: its items' types and call IDs, and the provider's message) and counted
(crashpoint.MALFORMED, with the model call): the check reads the file (`refused_events`) to
decide well-formed-transcript on what was sent. This module imports neither the SDK nor
openai until a request is refused: the check's reader runs in the sweep's own process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crashsweep.realsweep.probe.crashpoint import MALFORMED, count
from crashsweep.spec import metrics
from crashsweep.spec.history import Event

REFUSALS_FILE = "model-refusals.jsonl"
"""The requests the provider refused, one JSON line each (in the work directory)."""
STUCK_WORDS = "the provider refuses the conversation (HTTP 400)"
"""How a process stuck on a refusal says why (its last line, after "stuck: ")."""


def _shape(item: Any) -> tuple[str, str]:
    if isinstance(item, dict):
        return str(item.get("type", "message")), str(item.get("call_id", ""))
    return str(getattr(item, "type", "message")), str(getattr(item, "call_id", "") or "")


def refusal(items: str | Sequence[Any]) -> str | None:
    """The provider's message refusing the request whose input is `items`; None when it is well formed."""
    if isinstance(items, str):
        return None
    shapes = [_shape(item) for item in items]
    calls: set[str] = set()
    for item_type, call_id in shapes:
        if item_type == "function_call":
            calls.add(call_id)
        elif item_type == "function_call_output" and call_id not in calls:
            return f"No tool call found for function call output with call_id {call_id}."
    outputs = {call_id for item_type, call_id in shapes if item_type == "function_call_output"}
    orphan = next(
        (call_id for item_type, call_id in shapes if item_type == "function_call" and call_id not in outputs), None
    )
    return None if orphan is None else f"No tool output found for function call {orphan}."


def refuse(items: str | Sequence[Any], folder: Path) -> None:
    """Refuse a malformed request as the API does (openai.BadRequestError, HTTP 400), after writing it down."""
    message = refusal(items)
    if message is None:
        return
    import httpx
    from openai import BadRequestError

    sent = [{"type": item_type, "call_id": call_id} for item_type, call_id in map(_shape, items)]
    line = json.dumps({"items": sent, "message": message})
    fd = os.open(folder / REFUSALS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))  # one write(2): a kill cannot leave half a line
    finally:
        os.close(fd)
    count(metrics.MODEL_CALLS)
    count(MALFORMED)
    body = {"error": {"message": message, "type": "invalid_request_error", "param": "input", "code": None}}
    request = httpx.Request("POST", "https://api.openai.com/v1/responses")
    response = httpx.Response(400, json=body, request=request)
    raise BadRequestError(f"Error code: 400 - {body}", response=response, body=body["error"])


def refused(folder: Path) -> list[dict[str, Any]]:
    """The requests refused in work directory `folder`, in order: {"items": [...], "message": ...}."""
    path = folder / REFUSALS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def refused_events(folder: Path, run: str) -> tuple[Event, ...]:
    """Each refused request as a conversation of its own (incarnation n, from 1), ending with its model call.

    Its function_calls are tool_call invokes, its outputs result_saved oks, in the order sent,
    then the model_call invoke: well-formed-transcript finds in it the output without its call
    (or the call without its output) that made the provider refuse it.
    """
    events: list[Event] = []
    for n, request in enumerate(refused(folder), start=1):
        for item in request["items"]:
            if item["type"] == "function_call":
                events.append(Event(run, n, 0, "invoke", "tool_call", call_id=item["call_id"], src="request"))
            elif item["type"] == "function_call_output":
                events.append(Event(run, n, 0, "ok", "result_saved", call_id=item["call_id"], src="request"))
        events.append(Event(run, n, 0, "invoke", "model_call", src="request"))
        events.append(Event(run, n, 0, "fail", "model_call", detail=request["message"], src="request"))
    return tuple(events)


def stuck_line(error: BaseException) -> str | None:
    """The line a process stuck on the provider's refusal prints last; None when `error` is no refusal (400)."""
    seen: BaseException | None = error
    while seen is not None:
        if getattr(seen, "status_code", None) == 400 and type(seen).__name__ == "BadRequestError":
            message = getattr(seen, "body", None) or {}
            said = message.get("message", str(seen)) if isinstance(message, dict) else str(seen)
            return f"stuck: {STUCK_WORDS}: {said}"
        seen = seen.__cause__ or seen.__context__
    return None
