"""A LangGraph graph that files an issue, then asks a person with `interrupt()`: the write runs again on resume.

LangGraph resumes an interrupted node from its start, so a side effect placed before
`interrupt()` in the same node runs again on every resume, with or without a crash (the
failure users report as "the side effect before interrupt() runs twice"). `run` builds it that
way: one node files the issue, then waits for the person's approval of the comment. `run_split`
gives the filing a node of its own, which a resume does not re-run. The lines marked
`# crashsweep` wrap the saver in crash points, resume the thread (the scripted person answers
every interrupt with `Command(resume=True)`, after a crash too; `resume(..., person=f)` answers
with `f(value)` instead, for a node that reads a dict) and check the tracker's records
against the job (spec/CONVERSATIONS.md 3; examples/approval-node.toml is the same job for the
model). Sweep both from this folder:

    crashsweep sweep --target my_approval_graph:run --check my_approval_graph:check --depth 1
    crashsweep sweep --target my_approval_graph:run_split --check my_approval_graph:check --depth 1
"""

from __future__ import annotations

import sqlite3
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from crashsweep.realsweep.adapters.langgraph import CrashPointSaver, resume, thread_id  # crashsweep
from crashsweep.realsweep.adapters.script import TrackerTools  # crashsweep: the tracker as a tool's backend
from crashsweep.realsweep.adapters.script import check as job_check  # crashsweep
from crashsweep.spec.job import Call, Job  # crashsweep: the job the check maps records to

JOB = Job(  # crashsweep: two writes, the second approved by a person (no keys: a repeat is a duplicate)
    "approval-graph",
    ((Call("create_a", "create_issue", True), Call("comment_a", "comment", True, approval=True)),),
)
TITLE = "approval-graph: create_a"
tracker = TrackerTools(keys=False)


class Ticket(TypedDict, total=False):
    """The graph's state: whether the person approved the comment."""

    approved: bool


def file_issue(state: Ticket, config: RunnableConfig) -> Ticket:
    """File the issue (a side effect)."""
    tracker.create_issue(TITLE, run=thread_id(config), call="create_a", key_parts=())
    return {}


def approve_and_comment(state: Ticket, config: RunnableConfig) -> Ticket:
    """Ask a person to approve the comment; once approved, post it."""
    approved = bool(interrupt({"approve": "comment_a"}))
    if approved:
        tracker.comment(TITLE, "approved", run=thread_id(config), call="comment_a", key_parts=())
    return {"approved": approved}


def file_and_approve(state: Ticket, config: RunnableConfig) -> Ticket:
    """Both in one node: the filing runs again when the approval resumes the node."""
    file_issue(state, config)
    return approve_and_comment(state, config)


def _graph(split: bool) -> Any:
    builder = StateGraph(Ticket)
    if split:
        builder.add_node("file", file_issue)
        builder.add_node("approve", approve_and_comment)
        builder.add_edge(START, "file")
        builder.add_edge("file", "approve")
        builder.add_edge("approve", END)
    else:
        builder.add_node("file_and_approve", file_and_approve)
        builder.add_edge(START, "file_and_approve")
        builder.add_edge("file_and_approve", END)
    return builder


def _run(split: bool) -> None:
    connection = sqlite3.connect("checkpoints.sqlite", check_same_thread=False)
    saver = CrashPointSaver(SqliteSaver(connection))  # crashsweep: crash points around every save
    graph = _graph(split).compile(checkpointer=saver)
    config: RunnableConfig = {"configurable": {"thread_id": "1"}}
    resume(graph, {}, config, durability="sync")  # crashsweep: start, or resume; approve each interrupt
    connection.close()


def run() -> None:
    """The filing and the approval in one node."""
    _run(split=False)


def run_split() -> None:
    """The filing in a node of its own, before the approval's."""
    _run(split=True)


check = job_check(JOB)  # crashsweep: the tracker's records, mapped back to the job's calls
