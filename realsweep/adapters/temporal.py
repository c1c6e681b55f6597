"""Temporal adapter: one dev server per sweep, crash points around activities, a workflow that outlives its workers.

A Temporal workflow's history lives in the server, not in the worker: a swept process is a
worker (and the client that starts the workflow), killed at its crash points, and its restart
finds the history where the server kept it. So the server must outlive every process of a
scenario, and it is not part of the scenario's work folder:

- `zygote_warm(argv)`, `address()`, `DevServer` (temporal_server.py): the sweep's zygote calls
  `zygote_warm` before each fork; the first call starts one `temporal server start-dev` for the
  whole sweep, in memory, on free ports, killed when the zygote ends. A module swept with
  `--target` makes it its own: `from crashsweep.realsweep.adapters.temporal import zygote_warm`.
  `address()` is that server, $CRASHSWEEP_TEMPORAL_ADDRESS (a server of one's own), or, in a
  process run by hand, a server started for this process alone.
- `Scenario`: the names one scenario's processes share (workflow ID and task queue), in
  `temporal.json` in the work folder, written atomically before the workflow starts. Concurrent
  scenarios share the server, so each gets its own task queue (no worker of one runs another's
  tasks) and workflow IDs, from the start world (`scenario_suffix`: a determinism check's two
  runs of a scenario send the same IDs). A world this file came from that was not this scenario's (a merging
  sweep restores a saved work folder in a new scenario; the history it names is another
  scenario's, still running or done) is refused: a Temporal sweep runs every scenario from
  scratch (`--no-dedup`).
- `CrashPointInterceptor()`: a worker interceptor; every activity passes "before activity T N"
  (T its type, N its activity ID, the same on every attempt) before its body and "before
  reporting activity T N" (or "... failed") after it, before the worker sends the result to the
  server. The tracker tools add "tracker filed ..." after the tracker accepted a write.
- `ActivityTools`: the tracker tools' bodies, keyed from (workflow_id, activity_id).
- `run_to_end(client, ...)`: start the workflow, or attach to it after a crash, and wait for
  its result; on the sweep's own server a dead worker's activity attempt is reported timed
  out at once instead of after its start-to-close timeout (temporal_attempts.py). Under a
  sweep it then leaves the workflow's history in the work folder (`temporal-history.json`,
  `keep_history`), which a kept sweep (`--keep`) keeps for `crashsweep audit` (the `temporal`
  kind of crashsweep/importers).
- `SWEEP_WORKER`: the worker options that make a crashed worker's tasks re-dispatch fast.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from crashsweep.realsweep.adapters import script, temporal_server, transcripts
from crashsweep.realsweep.adapters.script import TRACKER_URL, WORKDIR, TrackerTools, workdir
from crashsweep.realsweep.adapters.temporal_attempts import time_out_dead_attempts
from crashsweep.realsweep.adapters.temporal_server import (
    ADDRESS,
    DevServer,
    address,
    exit_now,
    temporal_binary,
    zygote_warm,
)
from crashsweep.realsweep.probe.crashpoint import WORLD, SweepRefused, crashpoint, fresh_id
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Check
from crashsweep.spec.job import Job

__all__ = [
    "ADDRESS",
    "CRASHSWEEP_FROM_SCRATCH",
    "HISTORY",
    "SCENARIO",
    "SWEEP_WORKER",
    "ActivityTools",
    "CrashPointInterceptor",
    "DevServer",
    "Scenario",
    "address",
    "check",
    "exit_now",
    "keep_history",
    "run_to_end",
    "scenario",
    "temporal_binary",
    "zygote_warm",
]

SCENARIO = "temporal.json"
HISTORY = "temporal-history.json"
"""The workflow's history as `temporal workflow show --output json` prints it, left in the work folder at its end."""
SWEEP_WORKER: dict[str, Any] = {
    # No sticky cache. A worker that caches a workflow asks the server to send its next workflow
    # task to the worker's own sticky queue; once that worker is killed the task waits there for
    # sticky_queue_schedule_to_start_timeout (10 s by default) before going to the shared queue.
    # Uncached, every workflow task goes to the shared queue and is replayed from the history,
    # which is what a restarted worker does anyway: the crash points and effects are the same.
    "max_cached_workflows": 0,
}
"""Worker options for a swept process (pass them as `Worker(..., **SWEEP_WORKER)`); see the comments."""
CRASHSWEEP_FROM_SCRATCH = True
"""Read by the sweep from a target's module (import it there): its worlds are not all in the work folder.

The workflow's history is in the server: a merging sweep, which saves a scenario's work folder
and tracker space and restores them in another, would hand a process a workflow that is not
its scenario's. Every scenario is run from scratch instead: `crashsweep sweep --target` reads
the name from the module's source; through the API, `SweepOptions(dedup=False)`.
"""


@dataclass(frozen=True)
class Scenario:
    """What a scenario's processes share, kept in the work folder: the server, task queue and workflow IDs.

    `tracker` is the tracker space the scenario writes to: a process that finds another one
    there was handed a world saved by another scenario (a merging sweep), whose history is
    not its own.
    """

    address: str
    task_queue: str
    suffix: str
    tracker: str

    def workflow_id(self, name: str) -> str:
        """The ID of workflow `name` in this scenario (scenarios share the server: each has its own IDs)."""
        return f"{name}-{self.suffix}"


def scenario(base: str, folder: Path | None = None) -> Scenario:
    """This scenario's names, read from the work folder, or made and saved (atomically) by its first process."""
    path = (folder or workdir()) / SCENARIO
    here = address()
    tracker = os.environ.get(TRACKER_URL, "")
    if path.exists():
        found = Scenario(**json.loads(path.read_text(encoding="utf-8")))
        if found.tracker != tracker:
            raise SweepRefused(
                f"{path} was written by another scenario (tracker {found.tracker}, this one's {tracker}): "
                "Temporal's history lives in its server, not in the work folder, so a saved world cannot be "
                "restored in another scenario; sweep every scenario from scratch (--no-dedup)"
            )
        if found.address != here:
            raise SweepRefused(
                f"the workflows of {path} are on the Temporal server at {found.address}, this process's is {here}: "
                f"that server is gone (run under a sweep's zygote, or set {ADDRESS})"
            )
        return found
    suffix = scenario_suffix(path.parent)
    made = Scenario(here, f"{base}-{suffix}", suffix, tracker)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(asdict(made)), encoding="utf-8")
    os.replace(partial, path)
    return made


def scenario_suffix(folder: Path) -> str:
    """12 hex digits naming a scenario's workflows and task queue: from its start world, unique on the server.

    From `fresh_id()`: random outside a sweep; under a determinism check, from the world the
    process started from, so both runs of a scenario send the same workflow IDs (the records'
    run, the keys' part). Scenarios from scratch all start from the empty world and share the
    sweep's server: the scenario's folder (the work folder's parent, named after the scenario
    by the sweep, alike in both runs) keeps them apart. A server of one's own outlives both
    runs, which would meet each other's workflows: refused under a determinism check.
    """
    if os.environ.get(WORLD) and os.environ.get(ADDRESS):
        raise SweepRefused(
            f"a determinism check runs each scenario twice with the same workflow IDs: it needs a server per run, "
            f"the sweep's own (unset {ADDRESS})"
        )
    scope = folder.resolve().parent.name
    return hashlib.sha256(f"{fresh_id()}:{scope}".encode()).hexdigest()[:12]


async def run_to_end(
    client: Client, workflow: Callable[..., Any], *args: Any, id: str, task_queue: str, **options: Any
) -> Any:
    """Start workflow `id` (`workflow` is its run method) with `args`, or attach to it as it is; its result.

    The ID is never run twice: a running workflow is attached to (USE_EXISTING), and a closed
    one is refused a new run (REJECT_DUPLICATE) and its result read. Run it inside the
    worker's `async with`, so that the worker runs the workflow's tasks meanwhile. Attached to
    a running workflow on the sweep's own server, the attempts a killed worker left are
    reported timed out (temporal_attempts.py: the retry a restart sees anyway, without the
    start-to-close wait). Once the workflow closed (its result, or its failure raised), its
    history is left in the work folder (`keep_history`).
    """
    handle: WorkflowHandle[Any, Any]
    try:
        handle = await client.start_workflow(
            workflow,
            args=args,
            id=id,
            task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            **options,
        )
    except WorkflowAlreadyStartedError:
        handle = client.get_workflow_handle(id)
    if temporal_server.own_server() and not _started(handle) and not Points.from_env().syscalls:
        await time_out_dead_attempts(client, id)
    try:
        result = await handle.result()
    except WorkflowFailureError:
        await keep_history(client, id)
        raise
    await keep_history(client, id)
    return result


def _started(handle: WorkflowHandle[Any, Any]) -> bool:
    """Whether `handle`'s workflow was started by this call (so no attempt of another worker exists yet)."""
    response = getattr(handle, "_start_workflow_response", None)  # temporalio keeps the server's answer there
    return bool(getattr(response, "started", False))


async def keep_history(client: Client, id: str) -> Path | None:
    """Write workflow `id`'s history into the sweep's work folder (HISTORY); its path, or None when not written.

    Called once the workflow closed, after the scenario's last crash point: the file is what
    `crashsweep audit` reads of the scenario's run, and a kept sweep (`--keep`) keeps it beside
    the others; a sweep without `--keep` removes it with the folder (the process cannot tell
    which: a local fetch and one file). Nothing is written outside a sweep (no
    $CRASHSWEEP_WORKDIR), nor under `--points auto` or `syscalls`, where the write would be
    crash points of the sweep's own making. A failure to fetch it is not the run's: it is
    skipped, and the process ends as the workflow did.
    """
    points = Points.from_env()
    if not os.environ.get(WORKDIR) or points.auto or points.syscalls:
        return None
    try:
        history = await client.get_workflow_handle(id).fetch_history()
    except Exception:  # the server's answer is a by-product of the run, never its failure
        return None
    path = workdir() / HISTORY
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(history.to_json(), encoding="utf-8")
    os.replace(partial, path)
    return path


class CrashPointInterceptor(Interceptor):
    """A worker interceptor: crash points before each activity's body and before its outcome is reported."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityPoints(next)


class _ActivityPoints(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        name = f"activity {info.activity_type} {info.activity_id}"

        crashpoint(f"before {name}")
        try:
            result = await self.next.execute_activity(input)
        except BaseException:
            crashpoint(f"before reporting {name} failed")
            raise
        crashpoint(f"before reporting {name}")  # the worker encodes the result and reports it after this returns
        return result


def activity_ids() -> tuple[str, tuple[str, str]]:
    """The running activity's record IDs: the workflow ID as the run, and the key's parts (workflow, activity)."""
    info = activity.info()
    workflow = info.workflow_id or ""
    return workflow, (workflow, f"activity {info.activity_id}")


class ActivityTools:
    """The tracker tools as activity bodies: the record's run is the workflow ID, its call the model's call ID.

    With keys, a write's key is derived from (workflow_id, activity_id): the same on every
    attempt of the activity, whichever worker runs it, different for every other activity.
    """

    def __init__(self, keys: bool, client: TrackerClient | None = None) -> None:
        self.ops = TrackerTools(keys, client)

    def create_issue(self, call_id: str, title: str) -> str:
        """File an issue."""
        run, parts = activity_ids()
        return self.ops.create_issue(title, run=run, call=call_id, key_parts=parts)

    def comment(self, call_id: str, issue_title: str, body: str) -> str:
        """Comment on the issue titled `issue_title`."""
        run, parts = activity_ids()
        return self.ops.comment(issue_title, body, run=run, call=call_id, key_parts=parts)

    def search(self, call_id: str, query: str) -> str:
        """Search the issues."""
        return self.ops.search(query)


def check(job: Job) -> Check:
    """The default check of a temporal agent: the tracker's records; what the stack keeps none of is not decided.

    Temporal's workflow history lives in its server, and it has no tool
    approvals: well-formed-transcript and approved-exactly are "not decided", with the reasons
    transcripts.UNDECIDED gives.
    """
    return script.check(job, None, transcripts.UNDECIDED["temporal"])
