"""A killed worker's activity attempt, timed out as soon as the restart sees it, not after its start-to-close.

A worker killed inside an activity never reports the attempt: the server times it out after
the activity's start-to-close timeout, then schedules the next attempt after the retry
interval, and the restarted worker runs it. In a sweep the restart knows what the server does
not: the worker that started the attempt was a process of this machine that is gone (the
sweep killed it at its crash point and reaped it before starting the restart), so the attempt
can never report. The restart reports the attempt timed out itself, at once
(RespondActivityTaskFailedById), with the failure the server's timer would have written: a
StartToClose timeout, message "activity StartToClose timeout", its `source` "crashsweep" (the
server's says "Server"). The server then retries it after the retry interval, as after its
own timeout (to within 10 ms on the sweep's server: temporal_server.DYNAMIC_CONFIG). What
the processes see is unchanged: the same next attempt, with the same number, the same points
and effects, the same count against the retry policy's maximum; the history differs only in
that `source` and its times (the temporal importer reads both the same way: an `info` event,
outcome unknown, "attempt N: activity StartToClose timeout"). Only the wait is gone, a second
per crash inside an activity with the built-in agent's options. (A workflow that races a
timer of its own against the activity sees the retry as it would with a shorter
start-to-close: sooner than the timer, where the timeout was later.)

It is done only where it is certain to be what the timeout would do; elsewhere the restart
waits for the server, as a restart outside a sweep does:

- on the sweep's own dev server (temporal_server.own_server): every worker on it is a process
  of this machine; a server of one's own ($CRASHSWEEP_TEMPORAL_ADDRESS) may have workers
  elsewhere;
- an attempt in state STARTED whose worker's identity is temporalio's default, `pid@host`, of
  this host, and whose process no longer exists (a reused pid is taken for alive: it waits);
- when the server's timeout would retry it and nothing else would fire first: attempts left
  (no maximum, or more than this attempt), no schedule-to-close timeout (no expiration) and no
  heartbeat timeout. Under the built-in agent's `--schedule-to-close one-attempt` the server's
  timeout gives up (ScheduleToClose: no time left for another attempt) where a failure reported
  early would leave time, and be retried: the restart waits, and the server's outcome stands;
- not under `--points syscalls`, where its two requests would be system calls of the sweep's
  own making in a traced program (temporal.py decides).

A request the server refuses (the attempt timed out meanwhile, say) is skipped: the retry is
the server's then, as before.
"""

from __future__ import annotations

import os
import socket

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import PendingActivityState, TimeoutType
from temporalio.api.failure.v1 import Failure, TimeoutFailureInfo
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.api.workflowservice.v1 import DescribeWorkflowExecutionRequest, RespondActivityTaskFailedByIdRequest
from temporalio.client import Client
from temporalio.service import RPCError

TIMED_OUT = Failure(
    message="activity StartToClose timeout",  # the server's words for its own start-to-close timeout
    source="crashsweep",
    timeout_failure_info=TimeoutFailureInfo(timeout_type=TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE),
)
"""The failure reported for a dead worker's attempt: the server's start-to-close timeout, but for its source."""


async def time_out_dead_attempts(client: Client, workflow_id: str) -> list[str]:
    """Report every attempt of workflow `workflow_id` whose worker is gone as timed out; their activity IDs.

    Call it only on the sweep's own server (see the module's docstring), before waiting for
    the workflow's result: the retries then start after their retry interval, not after the
    dead attempts' start-to-close timeout.
    """
    service = client.workflow_service
    try:
        described = await service.describe_workflow_execution(
            DescribeWorkflowExecutionRequest(
                namespace=client.namespace, execution=WorkflowExecution(workflow_id=workflow_id)
            )
        )
    except RPCError:
        return []  # a shortcut of the sweep's, never the run's failure: the server's timeouts stand
    run_id = described.workflow_execution_info.execution.run_id
    done = []
    for pending in described.pending_activities:
        if not dead(pending):
            continue
        request = RespondActivityTaskFailedByIdRequest(
            namespace=client.namespace,
            workflow_id=workflow_id,
            run_id=run_id,
            activity_id=pending.activity_id,
            failure=TIMED_OUT,
            identity=client.identity,
        )
        try:
            await service.respond_activity_task_failed_by_id(request)
        except RPCError:
            continue  # e.g. the server timed it out meanwhile (NOT_FOUND): its retry is scheduled all the same
        done.append(pending.activity_id)
    return done


def dead(pending: PendingActivityInfo) -> bool:
    """Whether the attempt runs on a worker process of this host that is gone, and a timeout would retry it."""
    if pending.state != PendingActivityState.PENDING_ACTIVITY_STATE_STARTED:
        return False
    if pending.maximum_attempts and pending.attempt >= pending.maximum_attempts:
        return False  # its last attempt: the timeout closes the activity (a timed-out event), left to the server
    if pending.HasField("expiration_time") and pending.expiration_time.ToNanoseconds():
        return False  # a schedule-to-close timeout: whether a retry fits in it is the server's to say
    options = pending.activity_options
    if options.HasField("heartbeat_timeout") and options.heartbeat_timeout.ToNanoseconds():
        return False  # a heartbeat timeout may fire before start-to-close, with another failure
    pid, _, host = pending.last_worker_identity.partition("@")
    return pid.isdigit() and host == socket.gethostname() and gone(int(pid))


def gone(pid: int) -> bool:
    """Whether no process `pid` runs here (a zombie has ended: it only waits to be reaped)."""
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # another user's: alive
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False  # no /proc here, or it ended between the two looks: the server's timeout decides
