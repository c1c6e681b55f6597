"""A support agent of one's own on LangGraph, its own tools played by crashsweep from a job file.

The graph is the tutorials' tool-calling chatbot with three tools of the agent's own:
lookup_order (a read), refund and send_email (effects on the world: here the tracker service
stands for the payments and mail APIs, which is where a sweep counts them). Nothing in the
agent knows the job: support.toml maps each of the job's calls to one of these tools and its
arguments, and the scripted model plays them in place of the real one. The lines marked
`# crashsweep` are all the glue. Sweep it from this folder:

    crashsweep sweep --target my_support_graph:run --check my_support_graph:check --depth 1
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from crashsweep.realsweep.adapters.langgraph import CrashPointSaver, ScriptedChatModel, resume  # crashsweep
from crashsweep.realsweep.adapters.langgraph import check as graph_check  # crashsweep
from crashsweep.realsweep.adapters.script import tracker  # crashsweep: the service standing for the APIs
from crashsweep.spec.job import load_job  # crashsweep

JOB = load_job(Path(__file__).with_name("support.toml"))  # crashsweep: which tool, with what arguments


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: 1 item, 20 EUR, delivered"


@tool
def refund(order_id: str, amount: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Refund part of an order (no idempotency key: a retry pays twice)."""
    number = tracker().create_issue(f"refund {amount} on {order_id}", run="support", call=tool_call_id)
    return f"refund #{number} sent"


@tool
def send_email(to: str, body: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Send a customer an email."""
    number = tracker().create_issue(f"email to {to}", run="support", call=tool_call_id, body=body)
    return f"email #{number} sent"


tools = [lookup_order, refund, send_email]
llm = ScriptedChatModel(JOB)  # crashsweep: in production, init_chat_model("...")
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
    # One background thread: LangGraph then saves a step's task writes (put_writes) before the next
    # checkpoint (put), in the order it submits them, so every run passes the same crash points.
    config: RunnableConfig = {"configurable": {"thread_id": "1"}, "max_concurrency": 1}
    user = {"messages": [{"role": "user", "content": "Order A-17 arrived broken; please refund it."}]}
    resume(graph, user, config, durability="sync")  # crashsweep: start, or resume after a crash
    connection.close()


check = graph_check(JOB, "checkpoints.sqlite", "1")  # crashsweep: the records, and the checkpoint's messages
