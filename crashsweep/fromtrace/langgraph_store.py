"""One uninterrupted run, read from LangGraph's SQLite checkpoints (langgraph-checkpoint-sqlite's SqliteSaver).

The file holds one thread: its checkpoints (the graph's state after each superstep) and the
writes each task saved on a checkpoint (spec/FROM_TRACE.md 2, "LangGraph's records"), read as
the importer reads them (importers/langgraph_db.py: LangGraph's own saver, on a copy, safe types
only). The last checkpoint's `messages` channel is the conversation: each AIMessage a reply (its
`tool_calls` the calls in order; without calls, its text the final answer), each ToolMessage a
tool run (its call, its content the result, status "error" a failure). Each checkpoint is a
save, named by what it newly holds in the reference loop's words: "start" (no reply yet: the
input checkpoint and the one after `__start__`), "reply K" (the K-th reply with calls), "turn K"
(all of reply K's results) or "result C" (some of them), "final" (the answer). The records carry
no time: the order numbers are the supersteps' order, each message before the checkpoint that
first holds it. The crash points are derived in langgraph_points.py.

Refused, in one line naming the file: no thread or more than one; checkpoints that are not one
line of supersteps (a fork, a state update, a second input); a thread LangGraph resumed (a
resumed run marks `versions_seen["__interrupt__"]` in every later checkpoint: a restart after a
crash, or an answered interrupt); a pending interrupt; a run whose last message is not the
model's answer; a call with no result, or a result of no call.
"""

from __future__ import annotations

import itertools
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from crashsweep.fromtrace import langgraph_points
from crashsweep.fromtrace.langgraph_points import Saved
from crashsweep.fromtrace.recording import Asked, Marked, Recording, Reply, ToolRun, TraceError
from crashsweep.importers import langgraph_db
from crashsweep.importers.base import Unusable, connect, tables

RECORDS = "checkpoints and writes"
"""What `Recording.spans` counts: the thread's rows of both tables."""
SOURCES = frozenset({"input", "loop"})
"""The checkpoints a run makes itself: its input, and one per superstep (not `update_state`'s, nor forks)."""
UNSEEN = frozenset({"keys", "lock", "reply_save"})
"""What these records cannot show, whatever the program did (Recording.unseen): the key a call sent and
a lock (no row holds them), and whether a reply's checkpoint reached the disk before its calls ran
(LangGraph writes it before the next step's tools run under durability "sync" and while they run
under "async": the checkpoints are the same)."""
_TASKS = "SELECT DISTINCT task_id, task_path FROM writes WHERE thread_id = ? AND checkpoint_ns = ''"
_NO_TASKS = "SELECT DISTINCT task_id, '' FROM writes WHERE thread_id = ? AND checkpoint_ns = ''"


def read(path: Path) -> Recording:
    """The one run of the SqliteSaver database at `path`; TraceError (one line) when it is not one finished run."""
    if not tables(path) >= langgraph_db.TABLES:
        raise TraceError(f"{path}: not a LangGraph SqliteSaver database (no tables checkpoints and writes)")
    try:
        with closing(connect(path)) as db:
            found = langgraph_db.threads(path, db)
            if len(found) != 1:
                some = f"{len(found)} threads ({', '.join(found[:3])})" if found else "no thread"
                raise TraceError(f"{path}: {some}: from-trace reads one run")
            (thread,) = found
            saved = checkpoints(path, db, thread)
            rows = sum(_count(db, table, thread) for table in ("checkpoints", "writes"))
    except Unusable as error:
        raise TraceError(str(error)) from None
    _check_line(path, thread, saved)
    _check_finished(path, thread, saved)
    replies, tools, marked = timeline(saved)
    _check_calls(path, replies, tools)
    points = langgraph_points.points(saved, {t.call_id: t for t in tools})
    return Recording(path, thread, thread, "", replies, tools, marked, points, rows, RECORDS, UNSEEN)


def checkpoints(path: Path, db: sqlite3.Connection, thread: str) -> tuple[Saved, ...]:
    """The thread's root checkpoints, oldest first, each with its tasks' writes (LangGraph's saver reads them)."""
    saver = langgraph_db.reader(db)
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    try:
        found = list(saver.list(config))[::-1]
        paths = dict(db.execute(_TASKS if saver._has_task_path else _NO_TASKS, (thread,)).fetchall())
    except sqlite3.Error as error:
        raise Unusable(f"{path}: tables checkpoints and writes cannot be read ({error})") from None
    except Exception as error:  # LangGraph's decoders raise many kinds
        raise Unusable(f"{path}: thread {thread}'s checkpoints cannot be read by LangGraph ({error})") from None
    return tuple(_saved(path, item, paths) for item in found)


def _count(db: sqlite3.Connection, table: str, thread: str) -> int:
    query = f"SELECT COUNT(*) FROM {table} WHERE thread_id = ? AND checkpoint_ns = ''"
    return int(db.execute(query, (thread,)).fetchone()[0])


def _saved(path: Path, item: Any, paths: dict[str, str]) -> Saved:
    """One CheckpointTuple as a Saved: its messages, and its writes' messages by task in the saver's order."""
    checkpoint_id = str(item.config["configurable"]["checkpoint_id"])
    step = int(item.metadata.get("step", -2))
    channel = item.checkpoint["channel_values"].get(langgraph_db.MESSAGES, [])
    if not isinstance(channel, list):
        raise Unusable(f"{path}: table checkpoints row {checkpoint_id}: channel messages is not a list of messages")
    writes: dict[str, list[Any]] = {}
    for task, name, value in item.pending_writes:
        written = writes.setdefault(task, [])
        if name == langgraph_db.MESSAGES:
            written += langgraph_db.written(path, checkpoint_id, task, value)
    parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return Saved(
        checkpoint_id,
        None if parent is None else str(parent),
        step,
        str(item.metadata.get("source", "")),
        tuple(channel),
        tuple((langgraph_points.task_name(paths.get(task, "")), tuple(found)) for task, found in writes.items()),
        langgraph_db.INTERRUPT in item.checkpoint.get("versions_seen", {}),
        any(name == langgraph_db.INTERRUPT for _, name, _ in item.pending_writes),
    )


def _check_line(path: Path, thread: str, saved: tuple[Saved, ...]) -> None:
    """Refuse checkpoints that are not one line of the run's own supersteps, each keeping the messages before."""
    for before, after in itertools.pairwise(saved):
        if after.parent != before.checkpoint_id or after.step <= before.step:
            raise TraceError(
                f"{path}: thread {thread}: {after.place} does not follow {before.place} (a fork or a replay): "
                "from-trace reads one line of supersteps"
            )
        if [_id(m) for m in after.messages[: len(before.messages)]] != [_id(m) for m in before.messages]:
            raise TraceError(f"{path}: {after.place} does not keep {before.place}'s messages: a loop appends them")
    odd = [s for s in saved if s.source not in SOURCES]
    if odd:
        raise TraceError(f"{path}: thread {thread}: {odd[0].place} was made by {odd[0].source}: not by the run itself")
    inputs = [s for s in saved if s.source == "input"]
    if len(inputs) > 1:
        raise TraceError(f"{path}: thread {thread} was given input {len(inputs)} times: from-trace reads one run")


def _check_finished(path: Path, thread: str, saved: tuple[Saved, ...]) -> None:
    """Refuse a thread resumed, waiting for a person, or stopped before the model's answer."""
    resumed = next((s for s in saved if s.resumed), None)
    if resumed is not None:
        raise TraceError(
            f"{path}: thread {thread} was resumed before {resumed.place} (a crash and a restart, or an answered "
            "interrupt): from-trace reads one uninterrupted run"
        )
    asked = next((s for s in saved if s.asked), None)
    if asked is not None:
        raise TraceError(f"{path}: thread {thread} waited for a person (an interrupt on {asked.place}): not read yet")
    last = saved[-1].messages if saved else ()
    kinds = [m.type for m in last]
    if "ai" in kinds and "human" in kinds[kinds.index("ai") :]:
        raise TraceError(f"{path}: thread {thread}: a person's message after the model's: from-trace reads one run")
    if not last or not langgraph_db.answered(last[-1]):
        raise TraceError(f"{path}: thread {thread}'s last checkpoint holds no answer: the run did not finish")
    if any(messages for _, messages in saved[-1].writes):
        raise TraceError(f"{path}: writes saved after {saved[-1].place}: the run did not finish")


def _id(message: Any) -> object:
    return getattr(message, "id", None) or (message.type, text(message.content))


def timeline(saved: tuple[Saved, ...]) -> tuple[tuple[Reply, ...], tuple[ToolRun, ...], tuple[Marked, ...]]:
    """The replies, tool runs and saves, numbered in the supersteps' order (messages before their checkpoint)."""
    replies: list[Reply] = []
    tools: list[ToolRun] = []
    marked: list[Marked] = []
    asked: dict[str, Asked] = {}
    order = held = 0
    for checkpoint in saved:
        for index in range(held, len(checkpoint.messages)):
            message, place = checkpoint.messages[index], f"{checkpoint.place} message {index + 1}"
            order += 1
            if message.type == "ai":
                calls = tuple(Asked(str(c.get("id") or ""), str(c["name"]), c.get("args", {})) for c in _calls(message))
                asked.update((call.id, call) for call in calls)
                replies.append(Reply(calls, None if calls else text(message.content), order, place))
            elif message.type == "tool":
                tools.append(_run(message, asked, order, place))
        order += 1
        names = save_names(checkpoint.messages, held)
        marked += [Marked("save", value, order, checkpoint.place, ()) for value in names]
        held = len(checkpoint.messages)
    return tuple(replies), tuple(tools), tuple(marked)


def _calls(message: Any) -> list[dict[str, Any]]:
    return list(getattr(message, "tool_calls", ()) or ())


def _run(message: Any, asked: dict[str, Asked], order: int, place: str) -> ToolRun:
    """A ToolMessage as the run of its call: the call's tool and arguments, its content the result."""
    call_id = str(getattr(message, "tool_call_id", ""))
    call = asked.get(call_id)
    tool = call.tool if call is not None else str(getattr(message, "name", "") or "")
    failed = getattr(message, "status", "success") == "error"
    arguments = call.arguments if call is not None else None
    return ToolRun(call_id, tool, arguments, text(message.content), "", failed, False, order, place)


def text(content: Any) -> str:
    """A message's content as text: a string, or the text of its content blocks."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else [content]
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in blocks if isinstance(b, str | dict))


def save_names(messages: tuple[Any, ...], before: int) -> list[str]:
    """What a checkpoint saved, in the reference loop's words, given how many messages the one before it held."""
    if not any(m.type == "ai" for m in messages):
        return ["start"]
    if len(messages) == before:
        return []  # nothing of the conversation added
    asking = [m for m in messages if m.type == "ai" and _calls(m)]
    last = messages[-1]
    if last.type == "ai":
        return [f"reply {len(asking)}"] if _calls(last) else ["final"]
    if last.type != "tool" or not asking:
        return []
    answered = {str(m.tool_call_id) for m in messages if m.type == "tool"}
    if {str(c.get("id")) for c in _calls(asking[-1])} <= answered:
        return [f"turn {len(asking)}"]
    return [f"result {m.tool_call_id}" for m in messages[before:] if m.type == "tool"]


def _check_calls(path: Path, replies: tuple[Reply, ...], tools: tuple[ToolRun, ...]) -> None:
    """Each call a reply asked has one result, and each result answers a call asked before it."""
    asked = {call.id for reply in replies for call in reply.calls}
    seen: set[str] = set()
    for tool in tools:
        if tool.call_id not in asked or tool.call_id in seen:
            what = "answers no call a reply asked" if tool.call_id not in asked else "answers a call answered before"
            raise TraceError(f"{path}: {tool.span}: the result of call {tool.call_id} {what}")
        seen.add(tool.call_id)
    missing = [call for call in asked if call not in seen]
    if missing:
        raise TraceError(f"{path}: call {missing[0]} of the model's replies has no result in the checkpoints")
