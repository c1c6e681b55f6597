"""A support agent of one's own on Temporal, swept by crashsweep with the lines marked `# crashsweep`.

The agent is the usual Temporal agent loop: a workflow that calls the model in an activity,
then runs each tool the model asked for as an activity of its own (by name, its arguments in
one dict, the model's call ID as the activity ID), until the model answers. Its tools are its
own: lookup_order (a read) and refund (an effect on the world: here the tracker service
stands for the payments API, which is where a sweep counts it). Its activities retry as its
author set them: at most 5 attempts, 100 ms apart (1 s to close, for the sweep).

The glue: the scripted model plays JOB (which of the agent's tools, with what arguments) in
place of the real model; the sweep's dev server and task queue instead of one's own; the
worker's crash points and options; start-or-attach instead of `execute_workflow`. Sweep it
from this folder (every scenario from scratch, as the CRASHSWEEP_FROM_SCRATCH imported below
tells the sweep: the history lives in the server):

    crashsweep sweep --target my_temporal_agent:run --check my_temporal_agent:check --depth 1
"""

from __future__ import annotations

import asyncio
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from crashsweep.realsweep.adapters import temporal  # crashsweep
    from crashsweep.realsweep.adapters.script import ScriptedModel, tracker  # crashsweep
    from crashsweep.realsweep.adapters.temporal import CRASHSWEEP_FROM_SCRATCH, zygote_warm  # noqa: F401  # crashsweep
    from crashsweep.spec.job import job_from_mapping  # crashsweep

JOB = job_from_mapping(  # crashsweep: which tool the model calls, with what arguments
    tomllib.loads("""
name = "support"
turns = [["lookup", "refund"]]
[calls]
lookup = { tool = "lookup_order", writes = false, args = { order_id = "A-17" } }
refund = { tool = "refund", writes = true, args = { order_id = "A-17", amount = 20 } }
""")
)
model = ScriptedModel(JOB)  # crashsweep: in production, an LLM client
TOOL_OPTIONS: dict[str, Any] = {
    "start_to_close_timeout": timedelta(
        seconds=1
    ),  # crashsweep: in production, minutes (a killed attempt waits it out)
    "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=100), maximum_attempts=5),
}


@activity.defn
def call_model(turns_done: int) -> list[dict[str, Any]]:
    """The model's next tool calls (none: its final answer)."""
    return [asdict(call) for call in model.reply(turns_done) or []]  # crashsweep: the scripted model


@activity.defn
def lookup_order(args: dict[str, Any]) -> str:
    """Look an order up."""
    return f"order {args['order_id']}: 1 item, 20 EUR, delivered"


@activity.defn
def refund(args: dict[str, Any]) -> str:
    """Refund part of an order (no idempotency key: a retried attempt pays twice)."""
    info = activity.info()
    number = tracker().create_issue(
        f"refund {args['amount']} on {args['order_id']}", run=info.workflow_id or "", call=info.activity_id
    )
    return f"refund #{number} sent"


@workflow.defn
class SupportAgent:
    """Ask the model, run the tools it asks for, until it answers."""

    @workflow.run
    async def run(self, request: str) -> int:
        turns = 0
        while calls := await workflow.execute_activity(call_model, turns, **TOOL_OPTIONS):
            for call in calls:
                await workflow.execute_activity(call["name"], call["args"], activity_id=call["id"], **TOOL_OPTIONS)
            turns += 1
        return turns


async def support(request: str) -> int:
    """Run the support workflow for `request` to its end, with a worker of its own."""
    names = temporal.scenario("support")  # crashsweep: this scenario's task queue and workflow ID
    client = await Client.connect(names.address)  # crashsweep: in production, "localhost:7233"
    with ThreadPoolExecutor(max_workers=4) as executor:
        async with Worker(
            client,
            task_queue=names.task_queue,  # crashsweep: in production, "support"
            workflows=[SupportAgent],
            activities=[call_model, lookup_order, refund],
            activity_executor=executor,
            interceptors=[temporal.CrashPointInterceptor()],  # crashsweep: crash points around every activity
            **temporal.SWEEP_WORKER,  # crashsweep: a killed worker's tasks go to the next one at once
        ):
            turns: int = await temporal.run_to_end(  # crashsweep: start, or attach after a crash
                client, SupportAgent.run, request, id=names.workflow_id("order-A-17"), task_queue=names.task_queue
            )
    return turns


def run() -> None:
    """One process: the worker and the client, until the workflow has ended."""
    asyncio.run(support("Order A-17 arrived broken; please refund it."))


check = temporal.check(JOB)  # crashsweep: the records, mapped back to the job's calls by the model's ledger
