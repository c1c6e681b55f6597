"""LangGraph's SQLite checkpointer (SqliteSaver) as Histories, one a thread (spec/HISTORY.md 7).

SqliteSaver (langgraph-checkpoint-sqlite 3.1.2, langgraph 1.2.24) keeps two tables:
`checkpoints` (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
metadata) and `writes` (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
channel, type, value): a checkpoint is the graph's state after a step, a write is a task's
output saved on top of a checkpoint before the next one exists. Both are read through
LangGraph's own saver (`get_tuple`), whose serializer is given the safe types only
(`allowed_msgpack_modules=None`: messages, interrupts, dates; no code of the file is run), on a
read-only connection; the file is never changed.

A run is a thread (its root namespace, checkpoint_ns ""; subgraphs' checkpoints are not read),
its one incarnation 0: a checkpoint does not say which process saved it. Threads come in the
order they began (checkpoint IDs are time-ordered). Of each thread's LAST checkpoint:

- the `messages` channel is the conversation, as the real sweep's check reads it: a
  `model_call` invoke before each AIMessage, then a `tool_call` invoke per entry of its
  `tool_calls` (its `id` as `call` and `call_id`, `name`, `args_digest` the digest of `args`);
  a ToolMessage is a `result_saved` ok of its `tool_call_id`;
- the pending writes to `messages` (a step's output saved before the crash, or before the next
  checkpoint) follow, in the order LangGraph applies them (task path, task, index): a resume
  applies them before anything is sent, so the model's next request holds them. A message
  whose ID the channel holds already replaces it and adds nothing; a RemoveMessage is not read;
- each interrupt of a pending `__interrupt__` write is an `approval_request` invoke (the thread
  waits for a person's answer): `detail` is the interrupt's ID and what the node asked. LangGraph
  keeps interrupts answered earlier in older checkpoints' writes, which are not read; a
  `__resume__` write (an answer) is not a grant: whether it approved is the graph's reading.

The messages carry no time (a checkpoint's `ts` is when it was saved, not when each message
came): every event's `time` is 0. `src` names the checkpoint, and the task of a pending write.
A thread has finished (`run_status` `finished`) when its last message, pending writes included,
is the model's answer (an AI message that calls no tool) and no interrupt waits: a
tool-calling agent's loop ends there (the prebuilt agents', and the graphs of this project's
guides); a graph that goes on after such a message is not read rightly by this rule. A thread
that has not finished has no status: it may be running, waiting, or abandoned after a crash. A
checkpoint says nothing of effects or of approvals given: those facts are unseen, with the reason.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

from crashsweep.importers.base import SQLITE, Kind, Unusable, connect, place, tables
from crashsweep.spec.history import FINISHED, Event, History, args_digest

TABLES = frozenset({"checkpoints", "writes"})
MESSAGES = "messages"
"""The conversation's channel: MessagesState's, and the prebuilt agents'."""
INTERRUPT = "__interrupt__"
FACTS = frozenset({"transcript", "status"})
UNSEEN = {
    "effects": "a checkpoint holds the graph's state, not the receiver's records",
    "approvals": "LangGraph's approval is the value interrupt() returns; no record says what it approved",
}


def recognises(path: Path, head: bytes) -> bool:
    """An SQLite database with SqliteSaver's two tables."""
    return head.startswith(SQLITE) and tables(path) >= TABLES


def read(path: Path) -> tuple[History, ...]:
    """The file's threads as Histories, in the order they began; Unusable naming a row LangGraph cannot read."""
    with closing(connect(path)) as db:
        found = threads(path, db)
        saver = reader(db)
        return tuple(History(thread_events(path, saver, thread), facts=FACTS, unseen=UNSEEN) for thread in found)


def threads(path: Path, db: sqlite3.Connection) -> list[str]:
    """The IDs of the threads with a checkpoint in the root namespace, in the order they began."""
    try:
        return [
            str(row[0])
            for row in db.execute(
                "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' "
                "GROUP BY thread_id ORDER BY MIN(checkpoint_id), thread_id"
            )
        ]
    except sqlite3.Error as error:
        raise Unusable(f"{path}: table checkpoints cannot be read ({error})") from None


def reader(db: sqlite3.Connection) -> Any:
    """LangGraph's SqliteSaver on `db`, rebuilding safe types only and creating nothing (no `setup`)."""
    try:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:
        raise Unusable("reading LangGraph's checkpoints needs langgraph: pip install 'crashsweep[langgraph]'") from None

    class Reader(SqliteSaver):
        """SqliteSaver whose setup creates no table and changes no journal mode: it only reads."""

        def setup(self) -> None:
            """Whether `writes` has task_path (SqliteSaver's own setup would ALTER the table to add it)."""
            if not self.is_setup:
                self._has_task_path = "task_path" in {row[1] for row in self.conn.execute("PRAGMA table_info(writes)")}
                self.is_setup = True

    return Reader(db, serde=JsonPlusSerializer(allowed_msgpack_modules=None))


def thread_events(path: Path, saver: Any, thread: str) -> tuple[Event, ...]:
    """Thread `thread`'s last checkpoint as events (see the module's docstring), numbered from 1."""
    try:
        saved = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    except sqlite3.Error as error:
        raise Unusable(f"{path}: tables checkpoints and writes cannot be read ({error})") from None
    except Exception as error:  # LangGraph's decoders raise many kinds; which row, culprit() says
        raise culprit(path, saver, thread, error) from None
    if saved is None:  # the thread's checkpoints were deleted while this was read
        return ()
    checkpoint_id = str(saved.config["configurable"]["checkpoint_id"])
    where = f"checkpoint {checkpoint_id}"
    channel = saved.checkpoint["channel_values"].get(MESSAGES, [])
    if not isinstance(channel, list):
        raise Unusable(f"{path}: table checkpoints row {checkpoint_id}: channel {MESSAGES} is not a list of messages")
    events = list(conversation(path, thread, channel, place(path, where), f"table checkpoints row {checkpoint_id}"))
    seen = {getattr(message, "id", None) for message in channel} - {None}
    last = channel[-1] if channel else None
    for task, name, value in saved.pending_writes:
        src = place(path, f"{where} write of task {task}")
        if name == MESSAGES:
            fresh = [m for m in written(path, checkpoint_id, task, value) if getattr(m, "id", None) not in seen]
            events.extend(conversation(path, thread, fresh, src, f"table writes row {checkpoint_id} task {task}"))
            last = fresh[-1] if fresh else last
        elif name == INTERRUPT:
            events.extend(asks(thread, value, src))
    if answered(last) and not any(event.f == "approval_request" for event in events):
        events.append(Event(thread, 0, 0, "ok", "run_status", status=FINISHED, src=place(path, where)))
    return tuple(replace(event, seq=seq) for seq, event in enumerate(events, 1))


def answered(message: Any) -> bool:
    """Whether `message` is the model's answer: an AI message that calls no tool (a tool-calling agent's end)."""
    return getattr(message, "type", "") == "ai" and not (getattr(message, "tool_calls", ()) or ())


def conversation(path: Path, thread: str, messages: Iterable[Any], src: str, row: str) -> Iterator[Event]:
    """The events of LangChain messages: AIMessage (a model call and its tool calls), ToolMessage (a result).

    `row` names where they were read ("table writes row C task T"), for a value that is no message.
    """
    from langchain_core.messages import BaseMessage

    for message in messages:
        if not isinstance(message, BaseMessage):
            what = type(message).__name__
            raise Unusable(f"{path}: {row}: {what} in channel {MESSAGES} is not a message")
        if message.type == "ai":
            yield Event(thread, 0, 0, "invoke", "model_call", src=src)
            for call in getattr(message, "tool_calls", ()) or ():
                yield request(thread, call, src)
        elif message.type == "tool":
            call_id = str(getattr(message, "tool_call_id", ""))
            yield Event(thread, 0, 0, "ok", "result_saved", call=call_id, call_id=call_id, src=src)


def request(thread: str, call: Any, src: str) -> Event:
    """The `tool_call` invoke of one of an AIMessage's tool calls (a dict of id, name, args)."""
    call_id, tool, digested = str(call.get("id") or ""), str(call.get("name", "")), args_digest(call.get("args", {}))
    return Event(
        thread, 0, 0, "invoke", "tool_call", call=call_id, call_id=call_id, tool=tool, args_digest=digested, src=src
    )


def written(path: Path, checkpoint_id: str, task: str, value: Any) -> list[Any]:
    """The messages of a pending write to `messages` (a list, or one message), as LangChain makes them."""
    from langchain_core.messages import RemoveMessage, convert_to_messages

    try:
        messages = convert_to_messages(value if isinstance(value, list) else [value])
    except (TypeError, ValueError, NotImplementedError) as error:
        raise Unusable(f"{path}: table writes row {checkpoint_id} task {task}: not messages ({error})") from None
    return [message for message in messages if not isinstance(message, RemoveMessage)]


def asks(thread: str, value: Any, src: str) -> Iterator[Event]:
    """An `approval_request` per interrupt of a pending `__interrupt__` write (a list of Interrupt)."""
    for interrupt in value if isinstance(value, (list, tuple)) else [value]:
        asked = getattr(interrupt, "value", interrupt)
        detail = f"interrupt {getattr(interrupt, 'id', '?')} asked {shown(asked)}"
        yield Event(thread, 0, 0, "invoke", "approval_request", detail=detail, src=src)


def shown(value: Any, limit: int = 200) -> str:
    """What a node asked, as JSON where it is JSON (else its repr), cut at `limit` characters."""
    try:
        text = json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # keys that do not sort, a value that loops
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def culprit(path: Path, saver: Any, thread: str, error: Exception) -> Unusable:
    """The row of thread `thread`'s last checkpoint (or of its writes) that LangGraph's serializer refuses."""
    db, serde = saver.conn, saver.serde
    checkpoint_id, kind, blob, metadata = db.execute(
        "SELECT checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    ).fetchone()
    parts = [(f"table checkpoints row {checkpoint_id}: its checkpoint", kind, blob)]
    for task, idx, name, kind, value in db.execute(
        "SELECT task_id, idx, channel, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = '' "
        "AND checkpoint_id = ? ORDER BY task_id, idx",
        (thread, checkpoint_id),
    ):
        parts.append((f"table writes row {checkpoint_id} task {task} idx {idx} (channel {name})", kind, value))
    for what, kind, data in parts:
        try:
            serde.loads_typed((kind, data))
        except Exception as refused:  # the first row the decoder refuses is the one to name
            return Unusable(f"{path}: {what} cannot be read by LangGraph ({type(refused).__name__}: {refused})")
    try:
        json.loads(metadata or "{}")
    except ValueError as refused:
        return Unusable(f"{path}: table checkpoints row {checkpoint_id}: its metadata is not JSON ({refused})")
    return Unusable(f"{path}: thread {thread}'s last checkpoint cannot be read by LangGraph ({error})")


KIND = Kind("langgraph", "LangGraph's SqliteSaver checkpoint database", recognises, read)
