"""temporal_attempts: which attempt a restart may time out at once instead of waiting for the server's timeout."""

from __future__ import annotations

import os
import socket
import subprocess

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp
from temporalio.api.activity.v1 import ActivityOptions
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.api.workflow.v1 import PendingActivityInfo

from crashsweep.realsweep.adapters.temporal_attempts import dead


def test_only_an_attempt_of_a_gone_worker_of_this_host_that_a_timeout_would_retry_is_timed_out_early() -> None:
    """temporal_attempts.dead: started, on a worker `pid@host` of this host whose process is gone, attempts left.

    A live worker (this process, its parent), another host, an identity of the user's own, an
    attempt not started, the last allowed attempt, a schedule-to-close or heartbeat timeout:
    the server's own timeout decides.
    """
    host = socket.gethostname()
    shell = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    gone_pid = int(shell.stdout)  # that shell ended and was reaped: its pid names no process now

    def pending(identity: str, **fields: object) -> PendingActivityInfo:
        given = {"state": PendingActivityState.PENDING_ACTIVITY_STATE_STARTED, "attempt": 1, **fields}
        return PendingActivityInfo(last_worker_identity=identity, **given)  # type: ignore[arg-type]

    assert dead(pending(f"{gone_pid}@{host}"))
    assert dead(pending(f"{gone_pid}@{host}", attempt=2, maximum_attempts=5))
    assert not dead(pending(f"{os.getpid()}@{host}"))
    assert not dead(pending(f"{os.getppid()}@{host}"))
    assert not dead(pending(f"{gone_pid}@another-{host}"))
    assert not dead(pending("worker-7"))
    assert not dead(pending(f"{gone_pid}@{host}", state=PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED))
    assert not dead(pending(f"{gone_pid}@{host}", attempt=5, maximum_attempts=5))
    assert not dead(pending(f"{gone_pid}@{host}", expiration_time=Timestamp(seconds=1)))
    heartbeat = ActivityOptions(heartbeat_timeout=Duration(seconds=1))
    assert not dead(pending(f"{gone_pid}@{host}", activity_options=heartbeat))
