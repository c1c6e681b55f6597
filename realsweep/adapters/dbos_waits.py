"""DBOS's waits in a swept process, ended by the event each one waits for instead of by its poll's timer.

A DBOS process of a sweep runs for 50-150 ms, and DBOS's background loops poll their database
on timers: every restart waited on them, not on any work. Three waits, tested against dbos
3.4.0 (the version the `dbos` extra pins; private names, as dbos.py's other hooks):

- **A workflow's result** (`retrieve_workflow(...).get_result()`, how a restart awaits the
  workflow DBOS recovers) polls the workflow's status, sleeping between two looks.
- **The notification listener** sleeps between two looks at the workflows waiting on
  `recv`/`get_event`; `DBOS.destroy()` joins it, so every exit waited for its sleep to end.
- **The internal queue's worker**, which runs a recovered workflow (recovery puts a PENDING
  workflow back on DBOS's internal queue), waits its polling interval before each look.

`install()` ends each such wait when what it waits for happens: every sleep of DBOS's system
database module (dbos._sys_db: the result's and the listener's polls, its retries' back-off)
ends early at `wake()`, which dbos.py calls once a workflow's outcome is recorded (after the
points around it) and which runs as DBOS tells its background loops to stop (destroy); the
internal queue's worker also looks at once when a workflow is re-enqueued for recovery
(`reenqueue_for_recovery`, after its commit) and when DBOS stops.

None of this changes what DBOS does, only when: each of those sleeps sits in a loop that looks
at the database again after it (a result not yet there, a listener still running, a retry), so
a sleep that ends early is a look taken sooner, and it finds what a later look would have found,
or sleeps again. The records a run leaves, and the points it passes in their order, are the
same; a wake that never comes leaves each wait to its timer, as before.
"""

from __future__ import annotations

import threading
import time
import types
from typing import Any

from dbos import _queue, _sys_db
from dbos._sys_db import SystemDatabase
from dbos._sys_db_sqlite import SQLiteSystemDatabase
from dbos._utils import INTERNAL_QUEUE_NAME


class Wake:
    """Sleeps that end at their timeout or at the next `wake()`; the internal queue's waits, at a `nudge()`."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._rounds = 0
        self._nudged = False  # a nudge the internal queue's worker has not taken yet (`look`)

    def sleep(self, seconds: float) -> None:
        """Sleep `seconds`, or until the next wake."""
        with self._changed:
            start = self._rounds
            self._changed.wait_for(lambda: self._rounds != start, timeout=seconds)

    def look(self, seconds: float | None) -> None:
        """Wait `seconds`, or until a nudge: at once if one came since the last look (none is lost)."""
        with self._changed:
            self._changed.wait_for(lambda: self._nudged, timeout=seconds)
            self._nudged = False

    def wake(self) -> None:
        """End every sleep now under way."""
        with self._changed:
            self._rounds += 1
            self._changed.notify_all()

    def nudge(self) -> None:
        """End the internal queue worker's wait under way, or its next one."""
        with self._changed:
            self._nudged = True
            self._changed.notify_all()


WAKE = Wake()
_installed: list[bool] = []
_ORIGINAL_WORKER = _queue.queue_worker_thread
_ORIGINAL_REENQUEUE = SystemDatabase.reenqueue_for_recovery
_ORIGINAL_CLEANUP = SQLiteSystemDatabase._cleanup_connections


class _Looking:
    """The stop event the internal queue's worker waits on: its waits also end at a wake.

    It stands for DBOS's own event (`is_set`, `wait`), and sits among the DBOS instance's stop
    events, so that destroy, which sets each of them, ends its wait at once (`set`).
    """

    def __init__(self, stop: threading.Event, dbos: Any) -> None:
        self.stop = stop
        dbos.background_thread_stop_events.append(self)

    def is_set(self) -> bool:
        """Whether DBOS asked its loops to stop."""
        return self.stop.is_set()

    def set(self) -> None:
        """DBOS stops: end the wait under way."""
        WAKE.nudge()

    def wait(self, timeout: float | None = None) -> bool:
        """The worker's wait between two looks at its queue; True once DBOS stops."""
        if not self.stop.is_set():
            WAKE.look(timeout)
        return self.stop.is_set()


def _worker(stop_event: threading.Event, dbos: Any, queue: Any) -> None:
    """DBOS's queue worker; the internal queue's waits on a `_Looking` stop event."""
    if queue.name == INTERNAL_QUEUE_NAME:
        stop_event = _Looking(stop_event, dbos)  # type: ignore[assignment]
    _ORIGINAL_WORKER(stop_event, dbos, queue)


def _reenqueue(self: SystemDatabase, workflow_id: str, executor_ids: list[str], recovery_queue_name: str) -> bool:
    """DBOS's re-enqueue of a PENDING workflow for recovery; once committed, its queue's worker looks at once."""
    enqueued = _ORIGINAL_REENQUEUE(self, workflow_id, executor_ids, recovery_queue_name)
    if enqueued:
        WAKE.nudge()
    return enqueued


def _cleanup(self: SQLiteSystemDatabase) -> None:
    """Called by DBOS right after it told its background loops to stop: end their sleeps, then DBOS's own cleanup."""
    WAKE.wake()
    _ORIGINAL_CLEANUP(self)


def install() -> None:
    """End DBOS's waits at their events in this process (see the module's docstring); once per process."""
    if _installed:
        return
    clock = types.SimpleNamespace(**vars(time))
    clock.sleep = WAKE.sleep
    _sys_db.time = clock  # type: ignore[attr-defined,assignment]  # the `time` DBOS's system database module sleeps with
    _queue.queue_worker_thread = _worker
    SystemDatabase.reenqueue_for_recovery = _reenqueue  # type: ignore[method-assign]
    SQLiteSystemDatabase._cleanup_connections = _cleanup  # type: ignore[method-assign]
    _installed.append(True)
