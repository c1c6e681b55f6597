"""A receiver's ledger: crashsweep's tracker database, or a CSV of effects, as one `effect` `ok` a record.

What the receiver applied is the ground truth of no-duplicate and no-loss (spec/HISTORY.md 7):

- **the tracker's database** (SQLite, realsweep/tracker/store.py: tables `records` and
  `idempotency_keys`): each row of `records`, in number order, is an effect of its `run` and
  `call`, `effect_id` "#N" (its number), `tool` "create_issue" for an issue and "comment" for a
  comment (the tracker's operations, the built-in agents' tool names), `approval` the approval
  it was sent under as the tracker stored it. The tracker keeps no arguments' version: a record
  with an approval gives the one its body names in the reference loop's words "(arguments vN)"
  (realsweep/reference/parts.py), so that approved-exactly compares the approval with what was
  sent; any other record's `args_digest` is the digest of what it holds (`title` and `body` of
  an issue, `issue` and `body` of a comment), so that a history without call IDs still joins
  two records of one call (spec/HISTORY.md 7, rule 3). `src` is "records row N". Every record
  carries the approval header's value, empty where none was sent: a database where no record
  carries one is from a sender that does not say which approval a write was applied under, and
  its approvals are unseen;
- **a CSV** (a file named `*.csv`) whose header names columns among `key`, `effect_id`,
  `call`, `args_digest`, `time`, `run`, `tool`, `approval`: `effect_id` is required and one of
  `call` and `args_digest`; each further line is an effect, `time` ISO 8601 (UTC when it names
  no zone) or seconds since the epoch, empty for none; `src` is "line N" (where its row
  begins). A row with another number of fields than the header, an empty `effect_id`, neither
  `call` nor `args_digest`, or a bad time is refused naming its line, and so is text the strict
  CSV reader cannot parse. Approvals are seen when the header has an `approval` column. A
  `.csv` whose header names `effect_id`, or these columns only, is a ledger (refused when it
  lacks a required one); any other `.csv` is some program's data, not a record.

One History a run, in the order the runs first appear; a record with no run is one of run "",
which the audit gives to the run the other inputs hold (spec/joining.py). A ledger says
nothing of the conversation or of how a run ended: those facts are unseen.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from crashsweep.importers.base import SQLITE, Kind, Unusable, connect, place, tables
from crashsweep.spec.history import Event, History, args_digest

TABLES = frozenset({"records", "idempotency_keys"})
"""The tracker database's tables (realsweep/tracker/store.py SCHEMA)."""
TOOLS = {"issue": "create_issue", "comment": "comment"}
"""A record's kind, and the tool that writes it."""
COLUMNS = ("key", "effect_id", "call", "args_digest", "time", "run", "tool", "approval")
"""The CSV's columns, in the order the docs name them (any order, any subset with the required ones)."""
UNSEEN = {
    "transcript": "a receiver's ledger holds its records, not the conversation sent to the model",
    "status": "a receiver's ledger does not say how a run ended",
}
NO_APPROVALS = (
    "no record of {path} carries an approval: its sender does not say which approval a write was applied under"
)
NO_APPROVAL_COLUMN = "{path} has no approval column"
_VERSION = re.compile(r"\(arguments v(\d+)\)")


def recognises(path: Path, head: bytes) -> bool:
    """The tracker's database (its two tables), or a `.csv` whose header is a ledger's."""
    if head.startswith(SQLITE):
        return tables(path) >= TABLES
    if path.suffix.lower() != ".csv":
        return False
    try:
        first = next(csv.reader([head.decode("utf-8-sig", errors="replace").splitlines()[0]]), [])
    except (IndexError, csv.Error):
        return False
    names = {name.strip() for name in first}
    return "effect_id" in names or (bool(names) and names <= set(COLUMNS))


def histories(path: Path) -> tuple[History, ...]:
    """The ledger's histories, one a run; Unusable naming the file and the row or line that is wrong."""
    try:
        with path.open("rb") as file:
            database = file.read(len(SQLITE)) == SQLITE
    except OSError as error:
        raise Unusable(f"{path}: cannot be read ({error.strerror or error})") from None
    return _tracker(path) if database else _csv(path)


def _split(events: Iterable[Event], facts: set[str], unseen: dict[str, str]) -> tuple[History, ...]:
    """One History a run (in the order runs first appear), each numbered from 1.

    A ledger with no record is one History with no event: that the receiver applied nothing is
    a fact (a lost write's evidence), not the absence of one.
    """
    runs: dict[str, list[Event]] = {}
    for event in events:
        found = runs.setdefault(event.run, [])
        found.append(dataclasses.replace(event, seq=len(found) + 1))
    every = runs.values() if runs else [[]]
    return tuple(History(tuple(found), facts=frozenset(facts), unseen={**UNSEEN, **unseen}) for found in every)


def untouched(path: Path) -> tuple[History, ...]:
    """The ledger of a tracker space that has no database: no record (the empty History of `_split`).

    The tracker creates a space's database at its first write, so the space a sweep gave a
    process that never wrote, with no records to restore, holds none.
    """
    return _split([], {"effects"}, {"approvals": NO_APPROVALS.format(path=path.name)})


def _tracker(path: Path) -> tuple[History, ...]:
    """The tracker database's records, one effect each."""
    query = "SELECT number, kind, issue, title, body, run, call, approval FROM records ORDER BY number"
    try:
        with closing(connect(path)) as db:
            rows = db.execute(query).fetchall()
    except sqlite3.Error as error:
        raise Unusable(f"{path}: table records: {error}") from None
    events = [_record(path, row) for row in rows]
    approved = any(event.approval for event in events)
    unseen = {} if approved else {"approvals": NO_APPROVALS.format(path=path.name)}
    return _split(events, {"effects", "approvals"} if approved else {"effects"}, unseen)


def _record(path: Path, row: tuple[object, ...]) -> Event:
    """One record as an effect; Unusable for a row the tracker would never have written."""
    number, kind, issue, title, body, run, call, approval = row
    where = f"{path}: table records row {number}"
    if not isinstance(kind, str) or kind not in TOOLS:
        raise Unusable(f"{where}: kind {kind!r}: expected issue or comment")
    for name, value in (("run", run), ("call", call), ("body", body)):
        if not isinstance(value, str):
            raise Unusable(f"{where}: {name} {value!r}: expected text")
    if approval is not None and not isinstance(approval, str):
        raise Unusable(f"{where}: approval {approval!r}: expected text or null")
    version = _VERSION.findall(str(body))
    arguments = {"title": title, "body": body} if kind == "issue" else {"issue": issue, "body": body}
    digest = f"v{version[-1] if version else 1}" if approval else args_digest(arguments)
    return Event(
        str(run), 0, 0, "ok", "effect", call=str(call), tool=TOOLS[kind], args_digest=digest, effect_id=f"#{number}",
        approval=approval or "", src=place(path, f"records row {number}"),
    )  # fmt: skip


def _csv(path: Path) -> tuple[History, ...]:
    """The CSV's lines, one effect each."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise Unusable(f"{path}: cannot be read as UTF-8 text ({error})") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [name.strip() for name in next(reader, [])]
        columns = _columns(path, header)
        events: list[Event] = []
        line = reader.line_num
        for row in reader:
            start, line = line + 1, reader.line_num
            if row:
                events.append(_row(path, start, columns, row))
    except csv.Error as error:
        raise Unusable(f"{path}:{reader.line_num}: not CSV ({error})") from None
    unseen = {} if "approval" in columns else {"approvals": NO_APPROVAL_COLUMN.format(path=path.name)}
    return _split(events, {"effects", "approvals"} if "approval" in columns else {"effects"}, unseen)


def _columns(path: Path, header: list[str]) -> list[str]:
    """The header's column names; Unusable (line 1) for an unknown, repeated or missing one."""
    for name in header:
        if name not in COLUMNS:
            raise Unusable(f"{path}:1: unknown column {name!r} (the columns: {', '.join(COLUMNS)})")
        if header.count(name) > 1:
            raise Unusable(f"{path}:1: column {name!r} named twice")
    if "effect_id" not in header:
        raise Unusable(f"{path}:1: no effect_id column (the header names {', '.join(header) or 'nothing'})")
    if "call" not in header and "args_digest" not in header:
        raise Unusable(f"{path}:1: no call or args_digest column: an effect must name its call or its arguments")
    return header


def _row(path: Path, line: int, columns: list[str], row: list[str]) -> Event:
    """One line as an effect; Unusable naming the line for a wrong number of fields, an empty ID, a bad time."""
    if len(row) != len(columns):
        raise Unusable(f"{path}:{line}: {len(row)} fields, the header names {len(columns)}")
    values = {name: value.strip() for name, value in zip(columns, row, strict=True)}
    if not values["effect_id"]:
        raise Unusable(f"{path}:{line}: effect_id is empty")
    if not values.get("call") and not values.get("args_digest"):
        raise Unusable(f"{path}:{line}: neither call nor args_digest is given")
    given = {name: values.get(name, "") for name in ("call", "tool", "args_digest", "key", "effect_id", "approval")}
    when = _time(path, line, values.get("time", ""))
    return Event(values.get("run", ""), 0, 0, "ok", "effect", src=place(path, f"line {line}"), time=when, **given)


def _time(path: Path, line: int, text: str) -> float:
    """Seconds since the epoch of an ISO 8601 time or a number of seconds (0 for an empty field)."""
    if not text:
        return 0.0
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            raise Unusable(f"{path}:{line}: time {text!r}: expected ISO 8601 or seconds since the epoch") from None
        seconds = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    if not math.isfinite(seconds) or seconds < 0:
        raise Unusable(f"{path}:{line}: time {text!r}: expected ISO 8601 or seconds since the epoch, 0 or more")
    return seconds


KIND = Kind(
    "ledger",
    "a receiver's ledger: crashsweep's tracker database, or a CSV of effect_id,call,args_digest,key,time,run,...",
    recognises,
    histories,
)
