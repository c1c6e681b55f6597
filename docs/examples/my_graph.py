"""A LangGraph agent written as in LangGraph's tutorials, swept by crashsweep with a handful of lines.

The graph is the tutorials' tool-calling chatbot: a "chatbot" node that calls the model with
tools bound, LangGraph's ToolNode (which runs the calls of one turn in parallel) and
`tools_condition` between them, checkpoints in SQLite. The lines marked `# crashsweep` are all
it takes to sweep it: the checkpoint saver wrapped in CrashPointSaver, the tracker tools, a
scripted model that plays the triage job in place of the real one, `resume` to start or
resume the thread, and the default check. Sweep it from this folder:

    crashsweep sweep --target my_graph:run --check my_graph:check --depth 1
    crashsweep sweep --target my_graph:run --check my_graph:check --depth 1 --arg durability=sync
    crashsweep sweep --target my_graph:run --check my_graph:check --depth 1 --arg durability=exit
"""

from __future__ import annotations

import sqlite3
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from crashsweep.realsweep.adapters.langgraph import (  # crashsweep
    CrashPointSaver,
    ScriptedChatModel,
    resume,
    tracker_tools,
)
from crashsweep.realsweep.adapters.langgraph import check as graph_check  # crashsweep
from crashsweep.realsweep.adapters.script import target_args  # crashsweep: --arg key=value
from crashsweep.spec.job import TRIAGE  # crashsweep: the job the scripted model plays

CRASHSWEEP_ARGS = {"durability": ("sync", "async", "exit")}  # crashsweep: the --arg keys it takes
tools = tracker_tools(keys=True)  # crashsweep: create_issue, comment, search_issues
llm = ScriptedChatModel(TRIAGE)  # crashsweep: in production, init_chat_model("...")
llm_with_tools = llm.bind_tools(tools)


def chatbot(state: MessagesState) -> dict[str, Any]:
    """Call the model on the conversation so far."""
    return {"messages": [llm_with_tools.invoke(state["messages"])]}


graph_builder = StateGraph(MessagesState)
graph_builder.add_node("chatbot", chatbot)
graph_builder.add_node("tools", ToolNode(tools))
graph_builder.add_conditional_edges("chatbot", tools_condition)
graph_builder.add_edge("tools", "chatbot")
graph_builder.add_edge(START, "chatbot")


def run() -> None:
    """Run thread 1 to its end: start it, or resume it after a crash."""
    connection = sqlite3.connect("checkpoints.sqlite", check_same_thread=False)
    memory = CrashPointSaver(SqliteSaver(connection))  # crashsweep: crash points around every save
    graph = graph_builder.compile(checkpointer=memory)
    config: RunnableConfig = {"configurable": {"thread_id": "1"}}
    durability = target_args().get("durability", "async")  # crashsweep: --arg durability=sync
    user = {"messages": [{"role": "user", "content": "Triage today's alerts."}]}
    resume(graph, user, config, durability=durability)  # crashsweep: start, or resume after a crash
    connection.close()


check = graph_check(TRIAGE, "checkpoints.sqlite", "1")  # crashsweep: the records, and the checkpoint's messages
