"""crashsweep.fromtrace.langgraph_store: one run from SqliteSaver checkpoints LangGraph itself wrote, in this process.

Each record is made by a real LangGraph graph (langgraph 1.2.24, checkpoint-sqlite 3.1.2) on a
real SqliteSaver: the tutorials' agent (a scripted "agent" node, the prebuilt ToolNode, routed by
`tools_condition`) playing one turn of two calls, c1 (create_issue A) and c2 (lookup q), then the
answer "done". By hand from LangGraph's supersteps: checkpoints at steps -1 (the input), 0
(`__start__` wrote the person's message), 1 (the agent's reply with calls), 2 (the ToolNode's
results) and 3 (the answer); writes on them: `__start__`'s messages and branch (2 rows), the
agent's messages and branch to the tools (2), the tools' messages and branch back (2), the last
agent's messages (1; the route to the end writes none): 5 + 7 = 12 rows. Under durability "exit"
LangGraph saves one checkpoint at the end (step 3) and no writes: 1 row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Durability, interrupt

from crashsweep.fromtrace import langgraph_store
from crashsweep.fromtrace.design import fields
from crashsweep.fromtrace.readers import READERS
from crashsweep.fromtrace.recording import TraceError
from crashsweep.variants.presets import FRAMEWORKS

CALLS = [
    {"id": "c1", "name": "create_issue", "args": {"title": "A"}},
    {"id": "c2", "name": "lookup", "args": {"query": "q"}},
]
CONFIG: Any = {"configurable": {"thread_id": "t-1"}}


@tool
def create_issue(title: str) -> str:
    """File an issue (as the tracker's tool answers)."""
    return "filed issue #1"


@tool
def lookup(query: str) -> str:
    """Look something up."""
    if query == "fail":
        raise ValueError("lookup failed")
    return json.dumps({"found": query})


def scripted(calls: list[dict[str, Any]] = CALLS, fail_once: list[bool] | None = None) -> Callable[..., Any]:
    """The agent node: asks for `calls` first, answers "done" once a reply of its own is in the conversation.

    With `fail_once` holding True, its second call raises once (a crash inside the run), clearing it.
    """

    def agent(state: MessagesState) -> dict[str, Any]:
        if any(m.type == "ai" for m in state["messages"]):
            if fail_once and fail_once[0]:
                fail_once[0] = False
                raise RuntimeError("the process died here")
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("", tool_calls=calls)]}

    return agent


def ask_person(state: MessagesState) -> dict[str, Any]:
    """Asks a person before the tools run."""
    interrupt("may I?")
    return {}


def graph(agent: Callable[..., Any] | None = None, tools: Any = None, ask: bool = False) -> StateGraph[Any]:
    """The tutorials' agent; with `ask`, a node asking a person (interrupt) before the tools."""
    built = StateGraph(MessagesState)
    built.add_node("agent", agent or scripted())
    built.add_node("tools", tools or ToolNode([create_issue, lookup], handle_tool_errors=True))
    built.add_edge(START, "agent")
    if ask:
        built.add_node("ask", ask_person)
        built.add_conditional_edges("agent", tools_condition, {"tools": "ask", END: END})
        built.add_edge("ask", "tools")
    else:
        built.add_conditional_edges("agent", tools_condition)
    built.add_edge("tools", "agent")
    return built


def run(path: Path, built: StateGraph[Any], *inputs: Any, durability: Durability = "sync", thread: str = "t-1") -> None:
    """Invoke the graph on SqliteSaver at `path` once per input (None resumes); a node's exception is swallowed."""
    with closing(sqlite3.connect(path, check_same_thread=False)) as db:
        compiled = built.compile(checkpointer=SqliteSaver(db))
        for value in inputs:
            with suppress(RuntimeError):
                compiled.invoke(value, {"configurable": {"thread_id": thread}}, durability=durability)


def finished(path: Path, durability: Durability = "sync") -> Path:
    run(path, graph(), {"messages": [HumanMessage("triage")]}, durability=durability)
    return path


def test_a_finished_run_gives_its_replies_results_and_saves(tmp_path: Path) -> None:
    recording = READERS["langgraph"](finished(tmp_path / "db.sqlite"))
    assert (recording.run, recording.job, recording.agent, recording.spans, recording.records) == (
        "t-1",
        "t-1",
        "",
        12,
        "checkpoints and writes",
    )
    first, last = recording.replies
    assert [(c.id, c.tool, c.arguments) for c in first.calls] == [(c["id"], c["name"], c["args"]) for c in CALLS]
    assert (first.final, last.calls, last.final) == (None, (), "done")
    ran = [(t.call_id, t.tool, t.arguments, t.result, t.key, t.failed, t.deferred) for t in recording.tools]
    assert ran == [
        ("c1", "create_issue", {"title": "A"}, "filed issue #1", "", False, False),
        ("c2", "lookup", {"query": "q"}, '{"found": "q"}', "", False, False),
    ]
    saves = [(m.value, m.span) for m in recording.of("save")]
    assert saves == [
        ("start", "checkpoint step -1"),
        ("start", "checkpoint step 0"),
        ("reply 1", "checkpoint step 1"),
        ("turn 1", "checkpoint step 2"),
        ("final", "checkpoint step 3"),
    ]
    assert (first.span, recording.tools[1].span) == ("checkpoint step 1 message 2", "checkpoint step 2 message 4")
    order = [first.start, recording.named("save", "reply 1")[0].start, *(t.start for t in recording.tools)]
    order += [recording.named("save", "turn 1")[0].start, last.start, recording.named("save", "final")[0].start]
    assert order == sorted(set(order))  # the supersteps' order, each its own number


SHOWN: dict[Durability, dict[str, bool]] = {
    "sync": {"startup_save": True, "result_saves": True, "markers": True},
    "exit": {"startup_save": True, "reply_save": True, "result_saves": True, "markers": True},
}
"""The fields these records show, by durability ("async" writes the same records as "sync")."""


def _design(path: Path) -> dict[str, tuple[object, bool]]:
    return {f.name: (f.value, f.decided) for f in fields(langgraph_store.read(path))}


def test_the_design_reads_langgraphs_presets_where_the_records_show_them(tmp_path: Path) -> None:
    """Sync: a save before the first reply, one after each turn, no marker. Exit: one save, at the end.

    Each is decided and the durability's preset's; the key a call sent is in no record: not decided.
    """
    presets = {p.name: p.policy for p in FRAMEWORKS}
    for durability, shown in SHOWN.items():
        path = finished(tmp_path / f"{durability}.sqlite", durability)
        found, preset = _design(path), presets[f"langgraph-{durability}"]
        assert {name: found[name] for name in shown} == {name: (getattr(preset, name), True) for name in shown}
        assert found["keys"] == ("none", False)
        assert langgraph_store.read(path).unseen == {"keys", "lock", "reply_save"}


def test_a_saved_reply_and_the_lock_are_not_decided(tmp_path: Path) -> None:
    """Sync and async write the same checkpoints: reply_save is not decided; exit saved no reply: "never", decided."""
    assert _design(finished(tmp_path / "sync.sqlite"))["reply_save"] == ("never", False)
    assert _design(tmp_path / "sync.sqlite")["lock"] == ("none", False)
    assert _design(finished(tmp_path / "exit.sqlite", "exit"))["reply_save"] == ("never", True)


def test_a_failed_tool_handed_to_the_model_is_a_failed_run(tmp_path: Path) -> None:
    calls = [{"id": "c1", "name": "lookup", "args": {"query": "fail"}}]
    run(tmp_path / "db.sqlite", graph(scripted(calls)), {"messages": [HumanMessage("go")]})
    recording = langgraph_store.read(tmp_path / "db.sqlite")
    assert [(t.call_id, t.failed) for t in recording.tools] == [("c1", True)]
    assert {f.name: (f.value, f.decided) for f in fields(recording)}["on_tool_error"] == ("model", True)


def test_save_names_say_what_each_checkpoint_newly_holds() -> None:
    person, asks = HumanMessage("go", id="h"), AIMessage("", tool_calls=CALLS, id="a")
    one, two = ToolMessage("x", tool_call_id="c1", id="t1"), ToolMessage("y", tool_call_id="c2", id="t2")
    assert langgraph_store.save_names((), 0) == ["start"]
    assert langgraph_store.save_names((person,), 0) == ["start"]
    assert langgraph_store.save_names((person, asks), 1) == ["reply 1"]
    assert langgraph_store.save_names((person, asks, one), 2) == ["result c1"]
    assert langgraph_store.save_names((person, asks, one, two), 3) == ["turn 1"]
    assert langgraph_store.save_names((person, asks, one, two), 4) == []  # nothing added
    assert langgraph_store.save_names((person, asks, one, two, AIMessage("done", id="d")), 4) == ["final"]


def refused(path: Path) -> str:
    with pytest.raises(TraceError) as raised:
        langgraph_store.read(path)
    message = str(raised.value)
    assert message.startswith(str(path))
    assert "\n" not in message
    return message


def test_a_thread_resumed_after_a_crash_is_refused(tmp_path: Path) -> None:
    """The agent dies on its second call; the restart (invoke(None)) finishes the thread: LangGraph marked it."""
    path, crash = tmp_path / "db.sqlite", [True]
    run(path, graph(scripted(fail_once=crash)), {"messages": [HumanMessage("go")]})
    assert "holds no answer: the run did not finish" in refused(path)
    run(path, graph(scripted()), None)
    assert "was resumed before checkpoint step 3" in refused(path)


def test_two_threads_an_empty_store_and_another_database_are_refused(tmp_path: Path) -> None:
    path = finished(tmp_path / "two.sqlite")
    run(path, graph(), {"messages": [HumanMessage("again")]}, thread="t-2")
    assert "2 threads (t-1, t-2): from-trace reads one run" in refused(path)
    with closing(sqlite3.connect(tmp_path / "empty.sqlite", check_same_thread=False)) as db:
        SqliteSaver(db).setup()
    assert "no thread" in refused(tmp_path / "empty.sqlite")
    with closing(sqlite3.connect(tmp_path / "other.sqlite")) as db:
        db.execute("CREATE TABLE other (x)")
    assert "not a LangGraph SqliteSaver database" in refused(tmp_path / "other.sqlite")


def test_a_second_input_a_state_update_and_a_waiting_person_are_refused(tmp_path: Path) -> None:
    path = finished(tmp_path / "again.sqlite")
    run(path, graph(), {"messages": [HumanMessage("again")]})
    assert "given input 2 times" in refused(path)
    path = finished(tmp_path / "update.sqlite")
    with closing(sqlite3.connect(path, check_same_thread=False)) as db:
        graph().compile(checkpointer=SqliteSaver(db)).update_state(CONFIG, {"messages": [AIMessage("edited")]})
    assert "checkpoint step 4 was made by update" in refused(path)
    run(tmp_path / "ask.sqlite", graph(ask=True), {"messages": [HumanMessage("go")]})
    assert "waited for a person" in refused(tmp_path / "ask.sqlite")


def test_a_result_of_no_call_and_a_call_without_result_are_refused(tmp_path: Path) -> None:
    ghost = lambda state: {"messages": [ToolMessage("boo", tool_call_id="ghost")]}  # noqa: E731
    run(tmp_path / "ghost.sqlite", graph(tools=ghost), {"messages": [HumanMessage("go")]})
    assert "the result of call ghost answers no call a reply asked" in refused(tmp_path / "ghost.sqlite")
    half = lambda state: {"messages": [ToolMessage("x", tool_call_id="c1")]}  # noqa: E731
    run(tmp_path / "half.sqlite", graph(tools=half), {"messages": [HumanMessage("go")]})
    assert "call c2 of the model's replies has no result" in refused(tmp_path / "half.sqlite")
