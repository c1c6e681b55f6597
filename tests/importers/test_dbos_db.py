"""The dbos importer on system databases written by DBOS (3.4.0) itself, with SQLite."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import pytest
from dbos import DBOS, SetWorkflowID
from dbos._error import DBOSAwaitedWorkflowCancelledError

from crashsweep.importers import dbos_db
from crashsweep.importers.base import Unusable
from crashsweep.spec.history import Event


@DBOS.step()
def create_issue(title: str) -> str:
    """A step that returns."""
    return f"filed {title}"


@DBOS.step()
def find_issue(title: str) -> str:
    """A step that raises."""
    raise ValueError(f"no issue {title}")


@DBOS.workflow()
def child() -> str:
    """A child workflow of one step."""
    return create_issue("C")


@DBOS.workflow()
def triage() -> str:
    """Steps create_issue (1), find_issue raising (2); set_event (3); the child (4, 5); create_issue (6)."""
    create_issue("A")
    with suppress(ValueError):
        find_issue("X")
    DBOS.set_event("phase", "filed")
    with SetWorkflowID("w2-child"):
        handle = DBOS.start_workflow(child)
    handle.get_result()
    return create_issue("B")


@DBOS.workflow()
def failing() -> None:
    """create_issue (1), then the workflow raises."""
    create_issue("D")
    raise RuntimeError("gave up")


RELEASE = threading.Event()
ENTERED = threading.Event()


@DBOS.step()
def wait_for_release() -> None:
    """A step that waits until the test releases it (no clock: two events)."""
    ENTERED.set()
    RELEASE.wait()


@DBOS.workflow()
def waiting() -> None:
    """wait_for_release (1), then create_issue (2)."""
    wait_for_release()
    create_issue("E")


@contextmanager
def launched(path: Path) -> Iterator[None]:
    """DBOS launched on the SQLite system database `path`, destroyed on leaving."""
    url = f"sqlite:///{path}"
    # The listener's poll: DBOS.destroy() waits out its sleep (1 s by default).
    DBOS(config={"name": "audit-test", "system_database_url": url, "notification_listener_polling_interval_sec": 0.01})
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()


def shape(events: tuple[Event, ...]) -> list[tuple[str, str, str, str, str]]:
    """Each event's f, type, call, tool and status."""
    return [(e.f, e.type, e.call, e.tool, e.status) for e in events]


def test_steps_are_tool_runs_and_the_status_ends_each_workflow(tmp_path: Path) -> None:
    """triage (SUCCESS) with a child, then failing (ERROR): three workflows, created in that order.

    By hand, from the workflows' code: triage's rows 1 (ok), 2 (fail: the ValueError), 6 (ok)
    are steps; 3 is DBOS.setEvent, 4 the child's start, 5 DBOS.getResult: no event; then SUCCESS.
    The child's one step (1, ok) and its SUCCESS; failing's one step and its ERROR.
    The IDs sort in creation order, as DBOS's created_at (whole seconds) may tie.
    """
    path = tmp_path / "dbos.sqlite"
    with launched(path):
        with SetWorkflowID("w1-triage"):
            triage()
        with SetWorkflowID("w3-failing"), pytest.raises(RuntimeError):
            failing()
    parent, child_run, failed = dbos_db.read(path)
    assert shape(parent.events) == [
        ("tool_run", "ok", "w1-triage:1", "create_issue", ""),
        ("tool_run", "fail", "w1-triage:2", "find_issue", ""),
        ("tool_run", "ok", "w1-triage:6", "create_issue", ""),
        ("run_status", "ok", "", "", "finished"),
    ]
    assert parent.events[1].detail == "ValueError: no issue X"
    assert shape(child_run.events) == [
        ("tool_run", "ok", "w2-child:1", "create_issue", ""),
        ("run_status", "ok", "", "", "finished"),
    ]
    assert shape(failed.events) == [
        ("tool_run", "ok", "w3-failing:1", "create_issue", ""),
        ("run_status", "fail", "", "", "failed"),
    ]
    assert failed.events[1].detail == "RuntimeError: gave up"
    assert [e.seq for e in parent.events] == [1, 2, 3, 4]
    assert {(e.run, e.incarnation) for e in parent.events} == {("w1-triage", 0)}
    assert parent.events[0].src == "dbos.sqlite:operation_outputs row w1-triage:1"
    assert parent.events[3].src == "dbos.sqlite:workflow_status row w1-triage"
    assert all(e.time > 1e9 for e in parent.events)  # DBOS's milliseconds, as seconds since the epoch
    assert parent.facts == {"status"}
    assert set(parent.unseen) == {"effects", "transcript", "approvals"}


def test_a_step_still_running_has_no_row_and_its_workflow_no_status(tmp_path: Path) -> None:
    """Read while `waiting`'s first step runs: the workflow is PENDING, the step not recorded yet.

    By hand: DBOS writes a step's row after it returns, so nothing of the running step; PENDING
    gives no status: an empty history. Once released: two steps and SUCCESS.
    """
    path = tmp_path / "dbos.sqlite"
    RELEASE.clear()
    ENTERED.clear()
    with launched(path):
        with SetWorkflowID("w-wait"):
            handle = DBOS.start_workflow(waiting)
        ENTERED.wait()
        (running,) = dbos_db.read(path)
        RELEASE.set()
        handle.get_result()
    assert running.events == ()
    (done,) = dbos_db.read(path)
    assert [e.call for e in done.events] == ["w-wait:1", "w-wait:2", ""]


def test_a_workflow_cancelled_in_a_step_ends_cancelled_and_the_step_that_returned_has_no_row(tmp_path: Path) -> None:
    """`waiting` cancelled while its first step runs; then the step returns.

    By hand: DBOS records a step's row only while the workflow is still its own: the step's body
    returned, yet no row (the attempt is invisible), and no second step; CANCELLED ends it.
    """
    path = tmp_path / "dbos.sqlite"
    RELEASE.clear()
    ENTERED.clear()
    with launched(path):
        with SetWorkflowID("w-cancelled"):
            handle = DBOS.start_workflow(waiting)
        ENTERED.wait()
        DBOS.cancel_workflow("w-cancelled")
        RELEASE.set()
        with pytest.raises(DBOSAwaitedWorkflowCancelledError):
            handle.get_result()
    (history,) = dbos_db.read(path)
    assert shape(history.events) == [("run_status", "fail", "", "", "cancelled")]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a system database where workflow "w-ok" ran one step and succeeded."""
    path = tmp_path_factory.mktemp("dbos") / "dbos.sqlite"
    with launched(path), SetWorkflowID("w-ok"):
        child()
    return path.read_bytes()


def edited(tmp_path: Path, recorded: bytes, sql: str) -> Path:
    """A copy of the recorded database with `sql` applied."""
    path = tmp_path / "dbos.sqlite"
    path.write_bytes(recorded)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(sql)
    return path


@pytest.mark.parametrize(
    ("status", "ends"),
    [
        ("MAX_RECOVERY_ATTEMPTS_EXCEEDED", [("fail", "failed", "DBOS gave up recovering it (recovery_attempts 1)")]),
        ("ENQUEUED", []),
        ("DELAYED", []),
    ],
)
def test_each_status_dbos_writes_gives_its_end_or_none(
    tmp_path: Path, recorded: bytes, status: str, ends: list[tuple[str, str, str]]
) -> None:
    """w-ok's status set to each other status DBOS writes (its one recovery attempt: the first run)."""
    path = edited(tmp_path, recorded, f"UPDATE workflow_status SET status = '{status}'")
    (history,) = dbos_db.read(path)
    assert [(e.type, e.status, e.detail) for e in history.of("run_status")] == ends


def test_a_status_dbos_does_not_write_is_refused_with_its_row(tmp_path: Path, recorded: bytes) -> None:
    """A status outside DBOS's list: refused, naming workflow_status and the workflow."""
    path = edited(tmp_path, recorded, "UPDATE workflow_status SET status = 'PAUSED'")
    with pytest.raises(Unusable, match=r"dbos\.sqlite: table workflow_status row w-ok: status 'PAUSED' is not"):
        dbos_db.read(path)


def test_a_portable_json_error_that_is_not_json_is_refused_with_its_row(tmp_path: Path, recorded: bytes) -> None:
    """w-ok's step marked failed with a broken portable-JSON error: refused, naming operation_outputs w-ok:1."""
    sql = "UPDATE operation_outputs SET error = '{\"name\": ', serialization = 'portable_json'"
    path = edited(tmp_path, recorded, sql)
    with pytest.raises(Unusable, match=r"table operation_outputs row w-ok:1: error is not JSON"):
        dbos_db.read(path)


def test_only_a_database_with_dbos_tables_is_recognised(tmp_path: Path, recorded: bytes) -> None:
    """DBOS's database is; one with workflow_status only, and a text file, are not."""
    path = edited(tmp_path, recorded, "SELECT 1")
    other, text = tmp_path / "other.sqlite", tmp_path / "notes.txt"
    with closing(sqlite3.connect(other)) as db, db:
        db.execute("CREATE TABLE workflow_status (workflow_uuid TEXT, status TEXT)")
    text.write_text("workflow_status operation_outputs\n")
    assert dbos_db.recognises(path, path.read_bytes()[:100])
    assert not dbos_db.recognises(other, other.read_bytes()[:100])
    assert not dbos_db.recognises(text, text.read_bytes())
