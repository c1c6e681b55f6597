"""The kinds of record audit reads, in the order a file is offered to them (spec/HISTORY.md 7).

A new kind is one module with a `KIND` and one line here; `audit --help`, the docs' table and
the tests read this tuple. crashsweep.otel's log comes first (it is a History JSONL whose
torn last line, a power cut's, is left out), then any other History JSONL (its header is
unmistakable), OTLP spans, the databases by their tables, the ledger last
(a CSV is told by its header row).
"""

from __future__ import annotations

from pathlib import Path

from crashsweep.importers import (
    dbos_db,
    history_jsonl,
    langgraph_db,
    ledger,
    openai_session,
    otlp,
    reference_checkpoint,
    spans,
    temporal_json,
)
from crashsweep.importers.base import HEAD, SQLITE, Kind, Unusable, tables

KINDS: tuple[Kind, ...] = (
    spans.KIND,
    history_jsonl.KIND,
    otlp.KIND,
    openai_session.KIND,
    langgraph_db.KIND,
    dbos_db.KIND,
    temporal_json.KIND,
    reference_checkpoint.KIND,
    ledger.KIND,
)


def names() -> tuple[str, ...]:
    """The kinds' names, in order."""
    return tuple(kind.name for kind in KINDS)


def head(path: Path) -> bytes:
    """The first bytes of the file (HEAD at most); Unusable when it cannot be read."""
    try:
        with path.open("rb") as file:
            return file.read(HEAD)
    except OSError as error:
        raise Unusable(f"{path}: cannot be read ({error.strerror or error})") from None


def kind_of(path: Path) -> Kind | None:
    """The first kind that recognises the file, or None."""
    first = head(path)
    return next((kind for kind in KINDS if kind.recognises(path, first)), None)


def unrecognised(path: Path) -> Unusable:
    """The error for a file no kind reads: what it looked like, and the kinds there are."""
    first = head(path)
    if first.startswith(SQLITE):
        found = ", ".join(sorted(tables(path))) or "none"
        return Unusable(f"{path}: an SQLite database of no kind audit reads (its tables: {found})")
    if not first:
        return Unusable(f"{path}: empty: no record to audit")
    return Unusable(f"{path}: not a record audit reads (the kinds: {', '.join(names())})")
