"""DBOS's system database (SQLite) as Histories, one a workflow (spec/HISTORY.md 7).

DBOS (3.4.0) records a workflow in `workflow_status` (workflow_uuid, status, name, created_at,
updated_at and completed_at in milliseconds since the epoch, recovery_attempts) and each step's
outcome in `operation_outputs` (workflow_uuid, function_id: the step's place in the workflow,
function_name, output, error, child_workflow_id, started_at_epoch_ms, completed_at_epoch_ms,
serialization); a failed workflow's error is in `workflow_output` (workflow_uuid, output, error).
Both tables are read with plain SQL on a read-only connection; no value is unpickled (an error
recorded by pickle is named from the pickle's opcodes, without running it).

A run is a workflow UUID, its one incarnation 0 (a row does not say which process or recovery
wrote it), in the order the workflows were created (created_at, then the UUID: DBOS fills
created_at with whole seconds, so workflows of one second tie). Each step's row is one attempt of a tool's
body: a `tool_run` `ok`, or `fail` when its `error` is set, with call `WORKFLOW:FUNCTION_ID`
(DBOS's own key of the step: a recovery replays it from this row instead of running it again),
tool `function_name` and the time it completed. DBOS writes the row only after the step
returned: a crash inside a step, or after it and before its row committed, leaves no row, so
that attempt is invisible here (and a step retried in one process leaves one row, its last
attempt's). Rows of DBOS's own operations (`DBOS.sleep`, `DBOS.send`, `DBOS.getResult`, ...)
and of a child workflow's start (`child_workflow_id` set; its steps are its own run) are no
tool's body and give no event.

The workflow's status gives its `run_status`: SUCCESS `ok` finished; ERROR `fail` failed;
CANCELLED `fail` cancelled; MAX_RECOVERY_ATTEMPTS_EXCEEDED `fail` failed (DBOS gave up
recovering it); PENDING, ENQUEUED, DELAYED none (the workflow has not ended). The database
holds no receiver's records, no conversation and no approvals: those facts are unseen.
"""

from __future__ import annotations

import base64
import binascii
import json
import pickletools
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

from crashsweep.importers.base import SQLITE, Kind, Unusable, connect, place, tables
from crashsweep.spec.history import CANCELLED, FAILED, FINISHED, Event, History

TABLES = frozenset({"workflow_status", "operation_outputs"})
ENDS = {
    "SUCCESS": ("ok", FINISHED),
    "ERROR": ("fail", FAILED),
    "CANCELLED": ("fail", CANCELLED),
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED": ("fail", FAILED),
}
"""The statuses that end a workflow: the run_status's type and status."""
GOING = ("PENDING", "ENQUEUED", "DELAYED")
"""The statuses of a workflow not ended: no run_status."""
FACTS = frozenset({"status"})
UNSEEN = {
    "effects": "DBOS records a step's output, not the receiver's records",
    "transcript": "DBOS keeps no conversation, only its steps' outputs",
    "approvals": "DBOS has no tool approvals",
}
WORKFLOWS = (
    ("workflow_uuid", "status"),
    ("created_at", "updated_at", "completed_at", "recovery_attempts", "error", "serialization"),
)
STEPS = (
    ("workflow_uuid", "function_id", "function_name", "error"),
    (
        "child_workflow_id",
        "started_at_epoch_ms",
        "completed_at_epoch_ms",
        "serialization",
    ),
)
"""The columns read of workflow_status and operation_outputs: those it must have, and those an older
DBOS may lack (read as NULL); a failed workflow's error is in workflow_output (3.x), or in its
workflow_status row (before)."""


def recognises(path: Path, head: bytes) -> bool:
    """An SQLite database with DBOS's workflow_status and operation_outputs tables."""
    return head.startswith(SQLITE) and tables(path) >= TABLES


def read(path: Path) -> tuple[History, ...]:
    """The file's workflows as Histories, in the order they were created."""
    workflows, steps, errors = records(path)
    runs: dict[str, list[Event]] = {str(row["workflow_uuid"]): [] for row in workflows}
    for row in steps:
        event = step(path, row)
        if event is not None:
            runs.setdefault(event.run, []).append(event)
    for row in workflows:
        event = ending(path, row, errors.get(row["workflow_uuid"], row["error"]))
        if event is not None:
            runs[event.run].append(event)
    return tuple(History(numbered(events), facts=FACTS, unseen=UNSEEN) for events in runs.values())


def records(
    path: Path, workflow_columns: tuple[str, ...] = (), step_columns: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[Any, Any]]:
    """The workflows in the order they were created, their steps by workflow and place, each failed one's error.

    Each row a dict of WORKFLOWS' or STEPS' columns, and of the columns named here (NULL where
    the table has none); the errors are workflow_output's (3.x), by workflow UUID.
    """
    try:
        with closing(connect(path)) as db:
            workflows = rows(db, path, "workflow_status", WORKFLOWS[0], (*WORKFLOWS[1], *workflow_columns))
            steps = rows(db, path, "operation_outputs", STEPS[0], (*STEPS[1], *step_columns))
            outputs = "workflow_output" in {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            errors = dict(db.execute("SELECT workflow_uuid, error FROM workflow_output").fetchall()) if outputs else {}
    except sqlite3.Error as error:
        raise Unusable(f"{path}: tables workflow_status and operation_outputs cannot be read ({error})") from None
    workflows.sort(key=lambda row: (number(row["created_at"], path, "workflow_status", row), str(row["workflow_uuid"])))
    steps.sort(key=lambda row: (str(row["workflow_uuid"]), number(row["function_id"], path, "operation_outputs", row)))
    return workflows, steps, errors


def own_operation(row: dict[str, Any]) -> bool:
    """Whether an operation_outputs row is DBOS's own (`DBOS.sleep`, `DBOS.send`, ...) or a child's start: no step."""
    return row["child_workflow_id"] is not None or str(row["function_name"]).startswith("DBOS.")


def rows(
    db: sqlite3.Connection, path: Path, table: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> list[dict[str, Any]]:
    """The table's rows as dicts of the columns named; Unusable when a required column is missing."""
    present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    missing = [name for name in required if name not in present]
    if missing:
        raise Unusable(f"{path}: table {table} has no column {missing[0]} (not DBOS's system database?)")
    names = (*required, *optional)
    selected = ", ".join(name if name in present else "NULL" for name in names)
    return [dict(zip(names, row, strict=True)) for row in db.execute(f"SELECT {selected} FROM {table}")]


def number(value: Any, path: Path, table: str, row: dict[str, Any]) -> float:
    """A column's number (0 for NULL); Unusable naming the row when it is something else."""
    if value is None:
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    key = row["workflow_uuid"] if table == "workflow_status" else f"{row['workflow_uuid']}:{row['function_id']}"
    raise Unusable(f"{path}: table {table} row {key}: {value!r} is not a number")


def step(path: Path, row: dict[str, Any]) -> Event | None:
    """The `tool_run` of one operation_outputs row; None for DBOS's own operations and a child's start."""
    workflow, function_id, name, error = row["workflow_uuid"], row["function_id"], row["function_name"], row["error"]
    if own_operation(row):
        return None
    where = f"operation_outputs row {workflow}:{function_id}"
    detail = "" if error is None else raised(error, row["serialization"], f"{path}: table {where}")
    done = row["completed_at_epoch_ms"] if row["completed_at_epoch_ms"] is not None else row["started_at_epoch_ms"]
    return Event(
        str(workflow),
        0,
        0,
        "ok" if error is None else "fail",
        "tool_run",
        call=f"{workflow}:{function_id}",
        tool=str(name),
        detail=detail,
        src=place(path, where),
        time=number(done, path, "operation_outputs", row) / 1000,
    )


def ending(path: Path, row: dict[str, Any], error: Any) -> Event | None:
    """The `run_status` of a workflow_status row; None while the workflow has not ended."""
    workflow, status = str(row["workflow_uuid"]), str(row["status"])
    where = f"workflow_status row {workflow}"
    if status in GOING:
        return None
    if status not in ENDS:
        raise Unusable(f"{path}: table {where}: status {status!r} is not one of DBOS's ({', '.join((*ENDS, *GOING))})")
    if status == "MAX_RECOVERY_ATTEMPTS_EXCEEDED":
        detail = f"DBOS gave up recovering it (recovery_attempts {row['recovery_attempts']})"
    elif status == "ERROR" and error is not None:
        detail = raised(error, row["serialization"], f"{path}: table workflow_output row {workflow}")
    else:
        detail = ""
    ended = row["completed_at"] if row["completed_at"] is not None else row["updated_at"]
    when = number(ended, path, "workflow_status", row) / 1000
    type_, said = ENDS[status]
    return Event(workflow, 0, 0, type_, "run_status", status=said, detail=detail, src=place(path, where), time=when)


def raised(error: str, serialization: str | None, where: str) -> str:
    """What a recorded error says: "ValueError: no such issue", read without running any of it.

    DBOS's portable JSON is parsed (Unusable when it is not JSON); its default, a base64 pickle,
    is read by its opcodes only (the exception's class name and first string argument), never
    loaded: loading a pickle runs whatever it names.
    """
    if serialization == "portable_json":
        try:
            data = json.loads(error)
        except ValueError as broken:
            raise Unusable(f"{where}: error is not JSON ({broken})") from None
        if isinstance(data, dict):
            return f"{data.get('name', 'Error')}: {data.get('message', '')}"
        return f"Error: {data}"
    try:
        named, said = opened(base64.b64decode(error, validate=True))
    except (ValueError, binascii.Error):
        return "the step raised (its recorded error is not a pickle this reader can name)"
    return f"{named}: {said}" if said else named or "the step raised"


def opened(data: bytes) -> tuple[str, str]:
    """A pickled exception's class name and first string argument, from its opcodes (nothing is loaded).

    Its class comes first (GLOBAL "module name", or STACK_GLOBAL after two strings), then its arguments.
    """
    named, strings = "", list[str]()
    for op, arg, _ in pickletools.genops(data):
        if not named and op.name == "STACK_GLOBAL" and strings:
            named, strings = strings[-1], []
        elif not named and op.name == "GLOBAL":
            named, strings = str(arg).rsplit(" ", 1)[-1], []
        elif isinstance(arg, str):
            strings.append(arg)
    return named, strings[0] if named and strings else ""


def numbered(events: list[Event]) -> tuple[Event, ...]:
    """The run's events numbered from 1, in order."""
    return tuple(replace(event, seq=seq) for seq, event in enumerate(events, 1))


KIND = Kind("dbos", "DBOS's system database (SQLite): workflows and their steps' outputs", recognises, read)
