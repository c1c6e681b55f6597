"""The OpenAI Agents SDK's `SQLiteSession` database as Histories, one a session (spec/HISTORY.md 7).

`SQLiteSession` (openai-agents 0.24.0) keeps a conversation's items in two tables:
`agent_sessions` (session_id, created_at, updated_at) and `agent_messages` (id INTEGER PRIMARY
KEY AUTOINCREMENT, session_id, message_data: one item as JSON text, created_at: SQLite's
CURRENT_TIMESTAMP, "YYYY-MM-DD HH:MM:SS" in UTC). The SDK reads a session back `ORDER BY id`, so
the row ID is the runtime's order of the conversation: the events follow it. A run is a session
ID, its one incarnation 0 (the session does not say which process wrote an item).

The items are read as the SDK sends them to the model (spec/HISTORY.md 1.1), the rule the real
sweep's check reads its sessions by:

- a model output item (an assistant message, a reasoning item, any `*_call` item) right after
  an input (a user or system message, a tool output) begins a model reply: a `model_call`
  invoke goes before it, as that reply exists because the model was sent everything before it;
- a `function_call` (or `custom_tool_call`) is the model's request for a call: a `tool_call`
  invoke with its `call_id`, tool `name` and `args_digest` (`digest` of its arguments). The SDK
  drops every call with no output yet from each request it sends (`drop_orphan_function_calls`),
  so a call joins the sent conversation when its output is saved: its event goes right before
  its first output's, with that output's time (a call asked again before it had an output is
  one event, the latest request's; a call asked again after it is not sent again). A call
  still unanswered when the session ends goes last, with no time: it was never sent (a resume
  drops it too), and it stays in the record as the model's request with no result;
- a `function_call_output` (or `custom_tool_call_output`) is a `result_saved` ok of its `call_id`.

`call` is the item's `call_id`: the SDK's key of the call (the real sweep's tools derive their
idempotency key from the session ID and it). Each event's `src` is its item's row
("agent_messages row 7"). A session whose last item is an assistant message, with no call left
unanswered, ends with its run's final output: a `run_status` `finished` (the SDK appends a
run's items when it ends, its final output last); one that does not has no status (the run
was cut short, or waits for an approval). The session holds no effect or approval: those facts
are unseen, with the reason.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crashsweep.importers.base import SQLITE, Kind, Unusable, connect, place, tables
from crashsweep.spec.history import FINISHED, Event, History, args_digest

TABLES = frozenset({"agent_sessions", "agent_messages"})
"""SQLiteSession's default table names (its `sessions_table` and `messages_table`)."""
CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
"""The model's requests of a call the agent runs, by item type, and the type of their output."""
OUTPUTS = frozenset(CALLS.values())
FACTS = frozenset({"transcript", "status"})
UNSEEN = {
    "effects": "a session holds the conversation, not the receiver's records",
    "approvals": "the SDK's approval is a flag in its RunState, not an item of the session",
}


@dataclass(frozen=True, slots=True)
class Row:
    """One row of agent_messages: its ID, session, item and time (0: not known)."""

    id: int
    session: str
    item: dict[str, Any]
    time: float


def recognises(path: Path, head: bytes) -> bool:
    """An SQLite database with SQLiteSession's two tables."""
    return head.startswith(SQLITE) and tables(path) >= TABLES


def read(path: Path) -> tuple[History, ...]:
    """The file's sessions as Histories, in the order each began (its first item's row)."""
    by_session: dict[str, list[Row]] = {}
    for row in rows(path):
        by_session.setdefault(row.session, []).append(row)
    return tuple(
        History(conversation(path, session, found), facts=FACTS, unseen=UNSEEN) for session, found in by_session.items()
    )


def rows(path: Path) -> Iterator[Row]:
    """agent_messages' rows in ID order, each item parsed; Unusable naming a row that is not an item."""
    try:
        with closing(connect(path)) as db:
            found = db.execute(
                "SELECT id, session_id, message_data, created_at FROM agent_messages ORDER BY id"
            ).fetchall()
    except sqlite3.Error as error:
        raise Unusable(f"{path}: table agent_messages cannot be read ({error})") from None
    for number, session, data, created in found:
        where = f"{path}: table agent_messages row {number}"
        try:
            item = json.loads(data)
        except (TypeError, ValueError) as error:
            raise Unusable(f"{where}: message_data is not JSON ({error})") from None
        if not isinstance(item, dict):
            raise Unusable(f"{where}: message_data is not an item (a JSON object), but {type(item).__name__}")
        yield Row(number, str(session), item, seconds(created, where))


def seconds(created: object, where: str) -> float:
    """created_at as seconds since the epoch: SQLite's "YYYY-MM-DD HH:MM:SS" (UTC) or a number; 0 when NULL."""
    if created is None:
        return 0.0
    if isinstance(created, (int, float)):
        return float(created)
    try:
        when = datetime.fromisoformat(str(created))
    except ValueError:
        raise Unusable(f"{where}: created_at {created!r} is not a time") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def conversation(path: Path, session: str, found: Iterable[Row]) -> tuple[Event, ...]:
    """One session's items as events (see the module's docstring), numbered from 1."""
    events: list[Event] = []
    pending: dict[str, Event] = {}  # call ID -> the tool_call of its latest request, while it has no output
    answered: set[str] = set()
    answering = False  # inside one model reply's output items
    last: Row | None = None
    for row in found:
        last = row
        shape = str(row.item.get("type", "message"))
        output = shape == "reasoning" or shape.endswith("_call") or row.item.get("role") == "assistant"
        src = place(path, f"agent_messages row {row.id}")
        if output and not answering:
            events.append(Event(session, 0, 0, "invoke", "model_call", src=src, time=row.time))
        answering = output
        call_id = str(row.item.get("call_id", ""))
        if shape in CALLS and call_id not in answered:
            pending[call_id] = request(session, row, call_id, src)
        elif shape in OUTPUTS:
            if call_id in pending:  # sent from now on, with its output
                events.append(replace(pending.pop(call_id), time=row.time))
            answered.add(call_id)
            result = Event(session, 0, 0, "ok", "result_saved", call=call_id, call_id=call_id, src=src, time=row.time)
            events.append(result)
    if last is not None and not pending and answer(last.item):
        src = place(path, f"agent_messages row {last.id}")
        events.append(Event(session, 0, 0, "ok", "run_status", status=FINISHED, src=src, time=last.time))
    events.extend(replace(call, time=0.0) for call in pending.values())
    return tuple(replace(event, seq=seq) for seq, event in enumerate(events, 1))


def answer(item: dict[str, Any]) -> bool:
    """Whether an item is the model's final output: an assistant message (a run's last item when it ends)."""
    return item.get("type", "message") == "message" and item.get("role") == "assistant"


def request(session: str, row: Row, call_id: str, src: str) -> Event:
    """The `tool_call` invoke of a function_call (or custom_tool_call) item."""
    arguments = row.item.get("arguments", row.item.get("input", ""))
    tool, digested = str(row.item.get("name", "")), args_digest(arguments)
    return Event(
        session, 0, 0, "invoke", "tool_call", call=call_id, call_id=call_id, tool=tool, args_digest=digested, src=src
    )


KIND = Kind("openai-session", "the OpenAI Agents SDK's SQLiteSession database", recognises, read)
