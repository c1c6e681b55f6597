"""DBOS adapter: crash points around DBOS's records of a step's result and of a workflow's status.

DBOS records each step's result in its system database before the workflow goes on, and a
workflow's status when it starts (PENDING) and when it ends (SUCCESS/ERROR); after a crash,
launching DBOS again recovers the workflows left PENDING and replays recorded steps from
their records. The windows a crash can strike are around those records:

- "before recording step N": the step's function returned (its effect happened), its result
  is not recorded yet. Placed by `crash_points`, a decorator for a step's function, under
  `@DBOS.step()`: public, in the user's code.
- "after recording step N": through DBOS's debug hook DEBUG_TRIGGER_STEP_COMMIT
  (dbos._debug_trigger.DebugTriggers, the hook DBOS's own tests use to act right after a step's
  record commits).
- "after recording the workflow's start": through the debug hook DEBUG_TRIGGER_INITWF_COMMIT.
- "before/after recording workflow W SUCCESS": DBOS has no hook there. This adapter wraps the
  private method dbos._sys_db.SystemDatabase.update_workflow_outcome, tested against dbos
  3.4.0 (the version the `dbos` extra pins).

`tracker_step_tools(keys=...)` are the tracker tools' bodies with the key derived from
(workflow_id, step ID), and `launch_or_recover` runs a workflow to its end whether it is new,
left PENDING by a crash, or done. Both it and `install_crash_points` end DBOS's waits on
timers at their events (`end_waits`, dbos_waits.py): a restart's recovery, its result and
DBOS's shutdown wait for what they wait for, not for a poll. Importing this module registers
`warm_up` with a sweep's zygote (process/warming.py).
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from dbos import DBOS, DBOSConfig, SetWorkflowID
from dbos._dbos import _get_or_create_dbos_registry  # the internal queue's poll (see launch_or_recover)
from dbos._debug_trigger import DebugAction, DebugTriggers  # DBOS's debug hooks (see the docstring)
from dbos._sys_db import SystemDatabase  # no hook around the final status: a private name (see the docstring)
from dbos._utils import INTERNAL_QUEUE_NAME

from crashsweep.realsweep.adapters import dbos_waits, script, transcripts
from crashsweep.realsweep.adapters.script import TrackerTools, workdir
from crashsweep.realsweep.probe.crashpoint import crashpoint
from crashsweep.realsweep.process import warming
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Check
from crashsweep.spec.job import Job

F = TypeVar("F", bound=Callable[..., Any])
_ORIGINAL_OUTCOME = SystemDatabase.update_workflow_outcome
POLL = 0.02
"""Seconds between two looks of DBOS's notification listener, in a swept process's config.

DBOS's default is one second; `DBOS.destroy()` waits for the listener's sleep to end (a plain
`time.sleep`), which made every process of a sweep wait 0.5-1 s at its exit. That sleep now
ends as DBOS stops (`end_waits`), so this is only how often the listener looks meanwhile (for
workflows waiting on `recv`: none in the agents here).
"""


def crash_points(function: F) -> F:
    """A step's function, then the crash point "before recording step N" (put it under @DBOS.step())."""

    @functools.wraps(function)
    def step(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        crashpoint(f"before recording step {DBOS.step_id}")
        return result

    return step  # type: ignore[return-value]


def install_crash_points() -> None:
    """Hook the crash points on DBOS's records into this process (call before DBOS.launch()).

    DBOS's waits on timers are ended at their events too (`end_waits`): no process of a sweep
    waits out a poll.
    """
    DebugTriggers.set_debug_trigger(
        DebugTriggers.DEBUG_TRIGGER_STEP_COMMIT,
        DebugAction(callback=lambda: crashpoint(f"after recording step {DBOS.step_id}")),
    )
    DebugTriggers.set_debug_trigger(
        DebugTriggers.DEBUG_TRIGGER_INITWF_COMMIT,
        DebugAction(callback=lambda: crashpoint("after recording the workflow's start")),
    )
    _outcome_points.append(True)
    end_waits()


_outcome_points: list[bool] = []
"""Non-empty once install_crash_points ran: the final status's record passes its two points."""


def end_waits() -> None:
    """End DBOS's waits at their events in this process (dbos_waits), a recorded outcome among them; idempotent."""
    dbos_waits.install()
    SystemDatabase.update_workflow_outcome = _recorded_outcome  # type: ignore[method-assign]


def _recorded_outcome(self: SystemDatabase, workflow_id: str, status: Any, **options: Any) -> bool:
    """DBOS's record of a workflow's final status (between two points, once installed); then its awaiters look.

    The wake comes after the second point, so a process that awaits the result (a restart,
    `launch_or_recover`) ends after this thread has passed it, as it did when it polled.
    """
    if _outcome_points:
        crashpoint(f"before recording workflow {workflow_id} {status}")
    landed = _ORIGINAL_OUTCOME(self, workflow_id, status, **options)
    if _outcome_points:
        crashpoint(f"after recording workflow {workflow_id} {status}")
    dbos_waits.WAKE.wake()
    return landed


def internal_queue_poll(seconds: float) -> None:
    """Make DBOS's internal queue (where recovery puts a PENDING workflow) look for work every `seconds`.

    The queue is DBOS's own, in memory, made at the first launch of the process's registry with
    a one-second poll and no setting; this makes it first, or changes it (private names, tested
    against dbos 3.4.0). A sweep leaves it at DBOS's second: its worker looks at once when
    recovery re-enqueues a workflow (dbos_waits), and each look costs a transaction (about a
    millisecond of CPU), which a 20 ms poll paid five times in a process of 100 ms.
    """
    queue = _get_or_create_dbos_registry()._register_internal_queue(INTERNAL_QUEUE_NAME)
    queue._polling_interval_sec = seconds


class StepTools:
    """The tracker tools for DBOS steps: the record's run is the workflow ID, its call the model's call ID."""

    def __init__(self, keys: bool, client: TrackerClient | None = None) -> None:
        self.ops = TrackerTools(keys, client)

    def _ids(self) -> tuple[str, tuple[str, str]]:
        workflow = str(DBOS.workflow_id)
        return workflow, (workflow, f"step {DBOS.step_id}")

    def create_issue(self, call_id: str, title: str) -> str:
        """File an issue; the key comes from (workflow_id, step ID)."""
        run, parts = self._ids()
        return self.ops.create_issue(title, run=run, call=call_id, key_parts=parts)

    def comment(self, call_id: str, issue_title: str, body: str) -> str:
        """Comment on the issue titled `issue_title`; the key comes from (workflow_id, step ID)."""
        run, parts = self._ids()
        return self.ops.comment(issue_title, body, run=run, call=call_id, key_parts=parts)

    def search(self, call_id: str, query: str) -> str:
        """Search the issues."""
        return self.ops.search(query)


def launch_or_recover(workflow: Callable[..., Any], workflow_id: str, *args: Any) -> Any:
    """Launch DBOS and run workflow `workflow_id` to its end: start it, or wait for its recovery.

    DBOS.launch() recovers this executor's PENDING workflows on a thread of its own; starting
    the same ID again beside it would run it twice, so a workflow that exists is only awaited.
    That recovery puts the workflow back on DBOS's internal queue, whose worker looks for work
    once a second (in-memory, with no setting of DBOS's config), and the result is awaited by
    looking at the workflow's status every POLL: every restart of a sweep waited for both. The
    queue's worker now looks as soon as the workflow is re-enqueued, and the result is looked
    at as soon as its outcome is recorded (`end_waits`), else at DBOS's own interval; the
    workflow is still recovered by DBOS's own path, dequeued and run by the queue's worker.
    """
    end_waits()
    DBOS.launch()
    if DBOS.get_workflow_status(workflow_id) is None:
        with SetWorkflowID(workflow_id):
            return DBOS.start_workflow(workflow, *args).get_result()
    return DBOS.retrieve_workflow(workflow_id).get_result()


SYSTEM_DATABASE = "dbos.sqlite"
"""The system database's file in a swept process's work directory."""


def migrated() -> bytes:
    """The bytes of a system database DBOS has just created and migrated (`DBOS.migrate`), in a scratch folder.

    A built-in agent's zygote makes it once and lays it down in each fresh world, so that no
    process runs DBOS's 80-odd migrations (see dbos_agent.py).
    """
    with tempfile.TemporaryDirectory(prefix="crashsweep-dbos-") as folder:
        database = Path(folder) / SYSTEM_DATABASE
        DBOS.migrate(f"sqlite:///{database}")
        return database.read_bytes()


def sweep_config(name: str, database: Path, *, migrated_already: bool) -> DBOSConfig:
    """DBOS's configuration in a swept process: SQLite at `database`, short polls, one executor.

    `migrated_already`: the database was laid down from `migrated()`'s bytes, so launch only
    verifies the schema instead of migrating it.
    """
    return {
        "name": name,
        "system_database_url": f"sqlite:///{database}",
        "application_version": "crashsweep-example",
        "executor_id": "local",
        "log_level": "WARNING",
        "run_migrations": not migrated_already,
        "notification_listener_polling_interval_sec": POLL,
    }


def run_swept(workflow: Callable[..., Any], workflow_id: str, name: str, template: bytes | None) -> None:
    """One swept process of a DBOS agent: launch DBOS, run `workflow_id` to its end, destroy DBOS.

    The system database is the work directory's; a fresh world gets `template` (`migrated()`'s
    bytes, made once by the zygote) laid down, and launch then only verifies its schema.
    """
    database = (workdir() / SYSTEM_DATABASE).resolve()
    if template is not None and not database.exists():
        database.write_bytes(template)
    install_crash_points()
    DBOS(config=sweep_config(name, database, migrated_already=template is not None))
    try:
        launch_or_recover(workflow, workflow_id)
    finally:
        DBOS.destroy()


def warm_up(argv: list[str] | None = None) -> None:
    """In a sweep's zygote, once: DBOS's application version computed from the workflows the program registered.

    A launch with no `application_version` in its config hashes its workflows' source
    (`compute_app_version`: inspect.getsource); the first time in a process that reads the
    files and compiles the tokenizer's patterns, 3-4 ms of a process's 60-120. Done here, every
    forked process finds them read; the version itself is still computed by each launch, from
    its own config's name. Registered with the zygote (process/warming.py) when this module is
    imported, so a user's DBOS agent gets it too.
    """
    if _warmed:
        return
    _warmed.append(True)
    _get_or_create_dbos_registry().compute_app_version("crashsweep-warm-up")


_warmed: list[bool] = []
warming.register(warm_up)


def check(job: Job) -> Check:
    """The default check of a DBOS agent: the tracker's records; what DBOS keeps no record of is not decided.

    A DBOS workflow records its steps' outputs, not a conversation: well-formed-transcript and
    approved-exactly are "not decided", with the reasons transcripts.UNDECIDED gives.
    """
    return script.check(job, None, transcripts.UNDECIDED["dbos"])
