"""The langgraph importer on SqliteSaver databases written by LangGraph (1.2.24, checkpoint-sqlite 3.1.2) itself."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from crashsweep.importers import langgraph_db
from crashsweep.importers.base import Unusable
from crashsweep.spec.history import Event
from crashsweep.spec.history import args_digest as digest

CALLS = [
    {"id": "c1", "name": "create_issue", "args": {"title": "A"}},
    {"id": "c2", "name": "create_issue", "args": {"title": "B"}},
]


@tool
def create_issue(title: str) -> str:
    """File an issue."""
    return f"filed {title}"


def agent(state: MessagesState) -> dict[str, Any]:
    """The scripted model: asks for c1 and c2 first, answers "done" once it has a reply of its own."""
    if any(m.type == "ai" for m in state["messages"]):
        return {"messages": [AIMessage("done")]}
    return {"messages": [AIMessage("", tool_calls=CALLS)]}


def approve(state: MessagesState) -> dict[str, Any]:
    """Asks a person before the tools run."""
    interrupt({"approve": ["c1", "c2"]})
    return {}


def boom(state: MessagesState) -> dict[str, Any]:
    """A node that fails beside the tools (their writes stay pending, no checkpoint follows)."""
    raise RuntimeError("crash beside the tools")


def run(path: Path, thread: str, build: Callable[[StateGraph[Any]], None]) -> None:
    """Thread `thread` of the graph `build` makes (after an "agent" node), run once on SqliteSaver at `path`."""
    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([create_issue]))
    graph.add_edge(START, "agent")
    build(graph)
    with closing(sqlite3.connect(path, check_same_thread=False)) as db:
        compiled = graph.compile(checkpointer=SqliteSaver(db))
        with suppress(RuntimeError):  # boom's crash: what it leaves saved is the test's record
            compiled.invoke(MessagesState(messages=[HumanMessage("triage")]), {"configurable": {"thread_id": thread}})


def plain(graph: StateGraph[Any]) -> None:
    """The tutorials' agent: the tools after each reply with calls, then the agent again."""
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")


def asking(graph: StateGraph[Any]) -> None:
    """The agent, then a person's approval before the tools."""
    graph.add_node("approve", approve)
    graph.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
    graph.add_edge("approve", "tools")


def failing(graph: StateGraph[Any]) -> None:
    """The agent, then the tools and boom in one step."""
    graph.add_node("boom", boom)
    graph.add_edge("agent", "tools")
    graph.add_edge("agent", "boom")


def cut_after_tools(graph: StateGraph[Any]) -> None:
    """The agent, the tools, then boom: the tools' checkpoint is saved, then the thread stops."""
    graph.add_node("boom", boom)
    graph.add_edge("agent", "tools")
    graph.add_edge("tools", "boom")


def cut_before_tools(graph: StateGraph[Any]) -> None:
    """The agent, then boom instead of the tools: the reply with its calls is saved, then the thread stops."""
    graph.add_node("boom", boom)
    graph.add_edge("agent", "boom")


def asking_after_the_answer(graph: StateGraph[Any]) -> None:
    """The tutorials' agent, then a person's approval once it has answered (instead of ending)."""
    graph.add_node("approve", approve)
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "approve"})
    graph.add_edge("tools", "agent")


def answering_beside_boom(graph: StateGraph[Any]) -> None:
    """The tutorials' agent, with boom beside the agent's second step: its answer stays a pending write."""
    plain(graph)
    graph.add_node("boom", boom)
    graph.add_edge("tools", "boom")


def shape(events: tuple[Event, ...]) -> list[tuple[str, str, str]]:
    """Each event's f, call ID and tool."""
    return [(e.f, e.call_id, e.tool) for e in events]


def last_checkpoint(path: Path, thread: str) -> str:
    """The ID of the thread's last checkpoint, as SqliteSaver orders them."""
    with closing(sqlite3.connect(path)) as db:
        query = "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?"
        return str(db.execute(query, (thread,)).fetchone()[0])


def test_a_finished_thread_is_its_last_checkpoints_conversation(tmp_path: Path) -> None:
    """The user; the reply calling c1, c2; their two ToolMessages; the answer.

    By hand: a model call before each of the two AIMessages; the reply's two calls after the
    first; a result per ToolMessage (ToolNode answers in the calls' order); the answer calls no
    tool and nothing waits, so the thread finished.
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", plain)
    (history,) = langgraph_db.read(path)
    assert shape(history.events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
        ("result_saved", "c1", ""),
        ("result_saved", "c2", ""),
        ("model_call", "", ""),
        ("run_status", "", ""),
    ]
    assert history.events[-1].status == "finished"
    assert [e.seq for e in history.events] == [1, 2, 3, 4, 5, 6, 7]
    assert {(e.run, e.incarnation, e.time) for e in history.events} == {("t1", 0, 0.0)}
    assert {e.src for e in history.events} == {f"checkpoints.sqlite:checkpoint {last_checkpoint(path, 't1')}"}
    assert [e.args_digest for e in history.events[1:3]] == [digest({"title": "A"}), digest({"title": "B"})]
    assert [e.call for e in history.events[1:5]] == ["c1", "c2", "c1", "c2"]
    assert history.facts == {"transcript", "status"}
    assert set(history.unseen) == {"effects", "approvals"}


def test_a_thread_waiting_at_an_interrupt_ends_with_an_approval_request(tmp_path: Path) -> None:
    """The reply calling c1, c2, then approve's interrupt(): the thread waits; the tools never ran.

    By hand: a model call, c1 and c2 (no results), then one approval_request whose detail is
    what approve asked, from the pending __interrupt__ write of the last checkpoint. The last
    message calls tools and an interrupt waits: no status.
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", asking)
    events = langgraph_db.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
        ("approval_request", "", ""),
    ]
    assert events[3].type == "invoke"
    assert events[3].detail.endswith('asked {"approve": ["c1", "c2"]}')
    assert events[3].src.startswith(f"checkpoints.sqlite:checkpoint {last_checkpoint(path, 't1')} write of task ")


def test_results_saved_as_pending_writes_follow_the_checkpoints_messages(tmp_path: Path) -> None:
    """The tools answered c1, c2 but boom failed in the same step: their ToolMessages are pending writes.

    By hand: the last checkpoint holds the user and the reply (a model call, c1, c2); the
    tools' write adds the two results, named by its task; boom's error write adds nothing.
    The last message is a ToolMessage: no status.
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", failing)
    events = langgraph_db.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
        ("result_saved", "c1", ""),
        ("result_saved", "c2", ""),
    ]
    checkpoint = f"checkpoints.sqlite:checkpoint {last_checkpoint(path, 't1')}"
    assert {e.src for e in events[:3]} == {checkpoint}
    assert all(e.src.startswith(f"{checkpoint} write of task ") for e in events[3:])


def test_a_thread_cut_short_after_its_tool_messages_has_no_status(tmp_path: Path) -> None:
    """agent, tools, then boom fails: the last checkpoint (after the tools) ends with the two ToolMessages.

    By hand: a model call, c1, c2, their results, all in the checkpoint (the tools' step was
    saved before boom ran); boom's error write adds no message. The model never answered: the
    last message is a ToolMessage, so no status, though the status family stays in `facts`.
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", cut_after_tools)
    (history,) = langgraph_db.read(path)
    assert shape(history.events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
        ("result_saved", "c1", ""),
        ("result_saved", "c2", ""),
    ]
    assert {e.src for e in history.events} == {f"checkpoints.sqlite:checkpoint {last_checkpoint(path, 't1')}"}
    assert history.facts == {"transcript", "status"}


def test_a_thread_cut_short_after_a_reply_that_calls_tools_has_no_status(tmp_path: Path) -> None:
    """agent, then boom fails: the last checkpoint ends with the AIMessage asking for c1 and c2.

    By hand: a model call, c1, c2, with no results (the tools never ran). The last message is
    the model's, but it calls tools: not an answer, so no status.
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", cut_before_tools)
    assert shape(langgraph_db.read(path)[0].events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
    ]


def test_an_interrupt_after_the_answer_keeps_the_thread_unfinished(tmp_path: Path) -> None:
    """The tutorials' run to its answer "done", then approve's interrupt(): the thread waits for a person.

    By hand: the finished thread's conversation (a model call, c1, c2, their results, the
    answer's model call), then one approval_request. The last message is the answer, a
    message that calls no tool, but an interrupt waits: the graph goes on after it, no status.
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", asking_after_the_answer)
    events = langgraph_db.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
        ("result_saved", "c1", ""),
        ("result_saved", "c2", ""),
        ("model_call", "", ""),
        ("approval_request", "", ""),
    ]


def test_an_answer_saved_as_a_pending_write_finishes_the_thread(tmp_path: Path) -> None:
    """The agent's answer and boom's failure in one step: the answer is a pending write of the last checkpoint.

    By hand: the checkpoint after the tools holds the user, the reply (a model call, c1, c2)
    and the two results; the agent's write adds the answer (a model call, src its task). A
    resume applies that write first, so the last message is the answer, calling no tool, and
    no interrupt waits: finished, its src the checkpoint (the thread's state, not one task's).
    """
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", answering_beside_boom)
    events = langgraph_db.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", ""),
        ("tool_call", "c1", "create_issue"),
        ("tool_call", "c2", "create_issue"),
        ("result_saved", "c1", ""),
        ("result_saved", "c2", ""),
        ("model_call", "", ""),
        ("run_status", "", ""),
    ]
    checkpoint = f"checkpoints.sqlite:checkpoint {last_checkpoint(path, 't1')}"
    assert events[5].src.startswith(f"{checkpoint} write of task ")
    assert (events[-1].type, events[-1].status, events[-1].src) == ("ok", "finished", checkpoint)


def test_each_thread_is_a_history_in_the_order_they_began(tmp_path: Path) -> None:
    """Thread "z" runs before thread "a": z's history first (by its first checkpoint, not its name)."""
    path = tmp_path / "checkpoints.sqlite"
    run(path, "z", plain)
    run(path, "a", asking)
    first, second = langgraph_db.read(path)
    assert {e.run for e in first.events} == {"z"}
    assert {e.run for e in second.events} == {"a"}
    assert second.events[-1].f == "approval_request"


def test_a_database_out_of_wal_mode_is_read_without_changing_it(tmp_path: Path) -> None:
    """SqliteSaver's own setup would set WAL mode, a write a read-only connection refuses; the importer's does not."""
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", plain)
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=DELETE")
    before = path.read_bytes()
    assert len(langgraph_db.read(path)[0].events) == 7  # test_a_finished_thread_is_its_last_checkpoints_conversation's
    assert path.read_bytes() == before


def test_a_checkpoint_its_serializer_refuses_is_named_by_table_and_row(tmp_path: Path) -> None:
    """The last checkpoint's blob cut short: refused, naming table checkpoints and the checkpoint's ID."""
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", plain)
    last = last_checkpoint(path, "t1")
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 20) WHERE checkpoint_id = ?", (last,))
    with pytest.raises(Unusable, match=rf"checkpoints\.sqlite: table checkpoints row {last}: its checkpoint cannot"):
        langgraph_db.read(path)


def test_a_pending_write_its_serializer_refuses_is_named_by_table_row_and_task(tmp_path: Path) -> None:
    """The tools' pending write (the failing graph's) cut short: refused, naming its table, checkpoint and task."""
    path = tmp_path / "checkpoints.sqlite"
    run(path, "t1", failing)
    last = last_checkpoint(path, "t1")
    with closing(sqlite3.connect(path)) as db, db:
        query = "SELECT task_id FROM writes WHERE checkpoint_id = ? AND channel = 'messages'"
        (task,) = db.execute(query, (last,)).fetchone()
        db.execute("UPDATE writes SET value = substr(value, 1, 5) WHERE task_id = ? AND channel = 'messages'", (task,))
    refusal = rf"table writes row {last} task {task} idx 0 \(channel messages\) cannot be read by LangGraph"
    with pytest.raises(Unusable, match=refusal):
        langgraph_db.read(path)


def test_only_a_database_with_the_savers_tables_is_recognised(tmp_path: Path) -> None:
    """SqliteSaver's database is; one with a `checkpoints` table only, and a text file, are not."""
    path, other, text = tmp_path / "checkpoints.sqlite", tmp_path / "other.sqlite", tmp_path / "notes.txt"
    run(path, "t1", plain)
    with closing(sqlite3.connect(other)) as db, db:
        db.execute("CREATE TABLE checkpoints (thread_id TEXT, checkpoint BLOB)")
    text.write_text("checkpoints writes\n")
    assert langgraph_db.recognises(path, path.read_bytes()[:100])
    assert not langgraph_db.recognises(other, other.read_bytes()[:100])
    assert not langgraph_db.recognises(text, text.read_bytes())
