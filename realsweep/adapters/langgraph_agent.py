"""The built-in LangGraph agent: the tutorials' tool-calling agent, playing a job, swept by `--framework langgraph`.

A StateGraph over MessagesState with an "agent" node (the scripted chat model with tools
bound) and LangGraph's prebuilt ToolNode, which runs the calls of one turn in parallel, routed
by `tools_condition`; checkpoints go to LangGraph's SqliteSaver in the work directory, wrapped
in CrashPointSaver. One process runs the thread "triage" to its end (starting or resuming).

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

from crashsweep.realsweep.adapters.langgraph import CrashPointSaver, ScriptedChatModel, resume, tracker_tools
from crashsweep.realsweep.adapters.script import CALL_IDS, workdir
from crashsweep.spec.job import TRIAGE, Job, load_job

DURABILITY = ("sync", "async", "exit")
THREAD = "triage"
CHECKPOINTS = "checkpoints.sqlite"


def build(job: Job, *, keys: bool, call_ids: str, saver: Any) -> Any:
    """The agent's graph, compiled with `saver` as its checkpointer."""
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
    return graph.compile(checkpointer=saver)


def parse(argv: list[str]) -> argparse.Namespace:
    """The agent's options."""
    parser = argparse.ArgumentParser(prog="python -m crashsweep.realsweep.adapters.langgraph_agent")
    parser.add_argument("--job", help="job file (TOML); default: the built-in triage job")
    parser.add_argument("--keys", choices=("on", "off"), default="on")
    parser.add_argument("--call-ids", choices=CALL_IDS, default="stable")
    parser.add_argument("--durability", choices=DURABILITY, default="async")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the thread to its end from what the work directory holds."""
    args = parse(sys.argv[1:] if argv is None else argv)
    job = TRIAGE if args.job is None else load_job(Path(args.job))
    connection = sqlite3.connect(workdir() / CHECKPOINTS, check_same_thread=False)
    try:
        saver = CrashPointSaver(SqliteSaver(connection))
        graph = build(job, keys=args.keys == "on", call_ids=args.call_ids, saver=saver)
        config: RunnableConfig = {"configurable": {"thread_id": THREAD}}
        resume(graph, {"messages": [("user", f"Run the {job.name} job.")]}, config, durability=args.durability)
    finally:
        connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
