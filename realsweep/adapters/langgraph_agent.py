"""The built-in LangGraph agent: the tutorials' tool-calling agent, playing a job, swept by `--framework langgraph`.

A StateGraph over MessagesState with an "agent" node (the scripted chat model with tools
bound) and LangGraph's prebuilt ToolNode, which runs the calls of one turn in parallel, routed
by `tools_condition`; checkpoints go to LangGraph's SqliteSaver in the work directory, wrapped
in CrashPointSaver. One process runs the thread "triage" to its end (starting or resuming).

Under a sweep the zygote calls `zygote_warm` before each fork: the graph's definition (its
nodes, the tools and their schemas, the model) is made there once per command line, as a
module that builds its graph at import time would, and each process compiles it with its own
saver, on its own work directory's checkpoints. Nothing in the definition reads the disk or
the tracker before the run: the tools find the tracker and the model its ledger when used.

    python -m crashsweep.realsweep.adapters.langgraph_agent [--job FILE] [--keys on|off]
        [--call-ids stable|fresh] [--durability sync|async|exit]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from crashsweep.realsweep.adapters.frameworks import named
from crashsweep.realsweep.adapters.langgraph import (
    CrashPointSaver,
    ScriptedChatModel,
    checkpoint_events,
    resume,
    tracker_tools,
)
from crashsweep.realsweep.adapters.script import agent_parser, made_from, workdir
from crashsweep.spec.history import Event
from crashsweep.spec.job import TRIAGE, Job, load_job

LANGGRAPH = named("langgraph")
DURABILITY = LANGGRAPH.durability
THREAD = "triage"
CHECKPOINTS = "checkpoints.sqlite"
_definitions: dict[tuple[object, ...], tuple[Job, StateGraph[Any]]] = {}
"""The job and the graph's definition per `made_from` (job file as it is, keys, call IDs), made in the zygote."""
_parsed: dict[tuple[str, ...], argparse.Namespace] = {}


def build(job: Job, *, keys: bool, call_ids: str, saver: Any) -> Any:
    """The agent's graph, compiled with `saver` as its checkpointer."""
    return definition(job, keys=keys, call_ids=call_ids).compile(checkpointer=saver)


def definition(job: Job, *, keys: bool, call_ids: str) -> StateGraph[Any]:
    """The agent's graph before it is compiled: the nodes, the tools and the model, no saver."""
    tools = tracker_tools(keys=keys)
    model = ScriptedChatModel(job, call_ids).bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph


def parse(argv: list[str]) -> argparse.Namespace:
    """The agent's options."""
    parser = agent_parser("crashsweep.realsweep.adapters.langgraph_agent")
    parser.add_argument("--durability", choices=DURABILITY, default=LANGGRAPH.default_durability)
    return parser.parse_args(argv)


def zygote_warm(argv: list[str]) -> None:
    """In the zygote, before a fork: parse this command line and make the graph's definition, once."""
    defined(parsed(argv))


def parsed(argv: list[str]) -> argparse.Namespace:
    """The options of `argv`, parsed once per process tree (the zygote's, or now)."""
    key = tuple(argv)
    if key not in _parsed:
        _parsed[key] = parse(argv)
    return _parsed[key]


def defined(args: argparse.Namespace) -> tuple[Job, StateGraph[Any]]:
    """The job and the graph's definition for the parsed options: the zygote's, or made now."""
    key = made_from(args)
    if key not in _definitions:
        job = TRIAGE if args.job is None else load_job(Path(args.job))
        _definitions[key] = job, definition(job, keys=args.keys == "on", call_ids=args.call_ids)
    return _definitions[key]


def main(argv: list[str] | None = None) -> int:
    """Run the thread to its end from what the work directory holds."""
    args = parsed(sys.argv[1:] if argv is None else argv)
    job, graph_definition = defined(args)
    connection = sqlite3.connect(workdir() / CHECKPOINTS, check_same_thread=False)
    try:
        graph = graph_definition.compile(checkpointer=CrashPointSaver(SqliteSaver(connection)))
        config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
        resume(graph, {"messages": [("user", f"Run the {job.name} job.")]}, config, durability=args.durability)
    finally:
        connection.close()
    return 0


def conversation(folder: Path) -> tuple[Event, ...]:
    """Thread "triage"'s last checkpoint's messages in the work folder `folder`, as History events (for the check)."""
    return checkpoint_events(folder / CHECKPOINTS, THREAD)


if __name__ == "__main__":
    sys.exit(main())
