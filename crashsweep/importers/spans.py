"""crashsweep.otel's durable log of tool spans (spec/HISTORY.md 7, kind `spans`).

`CrashsweepSpanProcessor` (crashsweep/otel.py) writes a History JSONL (spec/HISTORY.md 2): its
header, then `tool_run` events whose `src` is "FILE:span ID" (16 hex digits), an `invoke`
written and fsynced before each tool's body ran and an `ok` or `fail` when it ended, and a
`run_status` when a run's outermost agent span ended; each process that appended to the file
is an incarnation. The file is read by the spec's own
reader, with one difference from the `history` kind: the file is appended to by processes that
may die mid-write, so a last line without its newline is a write a power cut tore, whose
writer never returned (its tool never began), and it is left out; any other bad line is
refused with its number. (The processor truncates such a line before it appends again.)

An `invoke` with no `ok`, `fail` or `info` after it in its (run, incarnation) is an attempt
of unknown outcome (spec/HISTORY.md 1: a crashed process's operation): the rules read it so,
and this importer adds no `info` event for it, so the file is audited as it was written.

This kind must be offered a file before `history`, which would read the same file but refuse
a torn last line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from crashsweep.importers.base import Kind, Unusable
from crashsweep.spec.history import History, HistoryError, parse

SRC = re.compile(r".+:span [0-9a-f]{16}")
"""The processor's `src`: the log's file name and the span's ID."""


def recognises(path: Path, head: bytes) -> bool:
    """A History JSONL header, then some events, each complete one a tool_run or run_status with a span's `src`."""
    lines = head.split(b"\n")[:-1]  # the last piece may be cut by HEAD, or torn
    if not lines or b"crashsweep_history" not in lines[0]:
        return False
    events = [line for line in lines[1:] if line.strip()]
    return bool(events) and all(_is_span_event(line) for line in events)


def _is_span_event(line: bytes) -> bool:
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and data.get("f") in ("tool_run", "run_status")
        and isinstance(data.get("src"), str)
        and SRC.fullmatch(data["src"]) is not None
    )


def read(path: Path) -> tuple[History, ...]:
    """The log's one History (the audit splits it by run), a torn last line left out."""
    try:
        data = path.read_bytes()
        text = data[: data.rfind(b"\n") + 1].decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise Unusable(f"{path}: cannot be read ({error})") from None
    try:
        return (parse(text),)
    except HistoryError as error:
        raise Unusable(f"{path}:{error}") from None


KIND = Kind("spans", "crashsweep.otel's log of tool spans (History JSONL, a start fsynced)", recognises, read)
