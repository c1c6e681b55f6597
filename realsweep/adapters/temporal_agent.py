"""The built-in Temporal agent: a workflow playing a job, model and tools as activities (`--framework temporal`).

The workflow asks the scripted model for each tool turn in an activity (its reply, with its
call IDs, is in the model's ledger before the activity ends) and runs each call in an activity
of its own, one after the other; the activities are plain functions run on the worker's thread
pool, as Temporal's docs advise for blocking code. One process is a worker and the client that
starts workflow "triage" (or attaches to it after a crash): it runs the worker until the
workflow's result is in, then exits. The history is in the sweep's dev server (temporal.py),
which outlives every process.

Activity options, as a user would set them for a sweep: start-to-close 1 s and retries without
a limit (Temporal's default) after 50 ms. A worker killed mid-activity never reports; the
server would time the attempt out after start-to-close (in production these are minutes) and
schedule the next attempt after the retry interval. On the sweep's server the restart reports
the dead worker's attempt timed out itself, at once (temporal_attempts.py), so a crash inside
an activity costs its restart the retry interval, not the timeout. An activity that outlives
its start-to-close while its worker is alive gets a second live attempt beside it (Temporal's
at-least-once delivery): 1 s is 30 to 100 times this agent's activities.

`--schedule-to-close one-attempt` (spec/RETRIES.md 1.8): the tool activities' schedule-to-close
timeout equal to their start-to-close, the retry budget of one attempt users set by accident
(the model's activity keeps no budget: a design's `call` layer is about tool calls). A quick
tool error is still retried (50 ms leave time), but a worker killed inside a tool activity's
attempt never answers: the server times the attempt out with no time left for another (the
restart waits for the server: temporal_attempts.py leaves an expiration to it), the activity
fails with a timeout, and the workflow fails on its next step. The run is over: the process
says "run failed: ..." and exits 0, a finished run whose unapplied writes are missing, as the
model counts it (any other failure of the workflow is the program's: it raises).

    python -m crashsweep.realsweep.adapters.temporal_agent [--job FILE] [--keys on|off] [--call-ids stable|fresh]
        [--schedule-to-close one-attempt]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutError
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():  # the workflow's sandbox shares these modules, not re-imports them
    from crashsweep.realsweep.adapters.script import ScriptedModel, agent_parser, play
    from crashsweep.realsweep.adapters.temporal import (
        CRASHSWEEP_FROM_SCRATCH,
        SWEEP_WORKER,
        ActivityTools,
        CrashPointInterceptor,
        exit_now,
        run_to_end,
        scenario,
        zygote_warm,
    )
    from crashsweep.spec.job import TRIAGE, load_job
    from crashsweep.spec.retries import ONE_ATTEMPT

__all__ = [
    "BUDGETS",
    "CRASHSWEEP_FROM_SCRATCH",
    "ONE_ATTEMPT",
    "Triage",
    "ask_model",
    "main",
    "run_tool",
    "zygote_warm",
]

WORKFLOW = "triage"
START_TO_CLOSE = timedelta(seconds=1)
RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=50), backoff_coefficient=1.0)
"""Unbounded attempts (Temporal's default), 50 ms apart: a restart waits for the timeout, not for a backoff."""
BUDGETS = (ONE_ATTEMPT,)
"""`--schedule-to-close` values: one-attempt, the tool activities' schedule-to-close equal to their start-to-close."""
_setup: dict[str, Any] = {}  # the process's model and tools, set by main() before the worker starts


@activity.defn
def ask_model(turns_done: int) -> list[dict[str, Any]]:
    """The model's reply for the next tool turn (empty: the final answer)."""
    model: ScriptedModel = _setup["model"]
    return [asdict(call) for call in model.reply(turns_done) or []]


@activity.defn
def run_tool(call: dict[str, Any]) -> str:
    """One tool call, against the tracker."""
    tools: ActivityTools = _setup["tools"]
    return play(tools, call)


@workflow.defn(name="triage")
class Triage:
    """Ask, run the turn's calls, ask again, until the model answers; the tool turns run."""

    @workflow.run
    async def run(self, schedule_to_close: str = "") -> int:
        """`schedule_to_close`: ONE_ATTEMPT gives the tool activities a budget of one attempt; "" none."""
        budget = START_TO_CLOSE if schedule_to_close == ONE_ATTEMPT else None
        turns_done = 0
        while calls := await workflow.execute_activity(
            ask_model, turns_done, start_to_close_timeout=START_TO_CLOSE, retry_policy=RETRY
        ):
            for call in calls:
                await workflow.execute_activity(
                    run_tool,
                    call,
                    start_to_close_timeout=START_TO_CLOSE,
                    schedule_to_close_timeout=budget,
                    retry_policy=RETRY,
                )
            turns_done += 1
        return turns_done


def parse(argv: list[str]) -> argparse.Namespace:
    """The agent's options."""
    parser = agent_parser("crashsweep.realsweep.adapters.temporal_agent")
    parser.add_argument(
        "--schedule-to-close",
        choices=BUDGETS,
        help="the tool activities' schedule-to-close timeout: one-attempt, their start-to-close; default none",
    )
    return parser.parse_args(argv)


def run_failed(failure: WorkflowFailureError) -> str | None:
    """What ended the workflow when an activity timed out for good (a spent budget), else None."""
    cause = failure.cause
    if not isinstance(cause, ActivityError) or not isinstance(cause.cause, TimeoutError):
        return None
    kind = cause.cause.type.name if cause.cause.type is not None else "unknown"
    return f"activity {cause.activity_type} {cause.activity_id} timed out ({kind}), so workflow {WORKFLOW} failed"


async def run_workflow(schedule_to_close: str | None = None) -> int | None:
    """Be the scenario's worker until workflow "triage" has ended; the tool turns it ran, or None: the run failed.

    A workflow failed by an activity's timeout (a spent budget) ended the run: said on stdout,
    not raised. Any other failure is raised.
    """
    names = scenario(WORKFLOW)
    client = await Client.connect(names.address)
    with ThreadPoolExecutor(max_workers=4) as executor:
        async with Worker(
            client,
            task_queue=names.task_queue,
            workflows=[Triage],
            activities=[ask_model, run_tool],
            activity_executor=executor,
            interceptors=[CrashPointInterceptor()],
            **SWEEP_WORKER,
        ):
            args = (schedule_to_close,) if schedule_to_close else ()  # no input: the workflow's default options
            try:
                turns: int = await run_to_end(
                    client, Triage.run, *args, id=names.workflow_id(WORKFLOW), task_queue=names.task_queue
                )
            except WorkflowFailureError as failure:
                why = run_failed(failure)
                if why is None:
                    raise
                print(f"run failed: {why}", flush=True)
                return None
    return turns


def main(argv: list[str] | None = None) -> int:
    """Run workflow "triage" to its end, from the start or after a crash."""
    args = parse(sys.argv[1:] if argv is None else argv)
    job = TRIAGE if args.job is None else load_job(Path(args.job))
    _setup["model"] = ScriptedModel(job, args.call_ids)
    _setup["tools"] = ActivityTools(keys=args.keys == "on")
    asyncio.run(run_workflow(args.schedule_to_close))
    return 0  # finished, or failed for good ("run failed"): either way the run is over


if __name__ == "__main__":
    exit_now(main())  # no teardown, where temporalio's threads may abort it
