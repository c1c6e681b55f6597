"""The History JSONL itself (spec/HISTORY.md 2): what a user, another tool or `sweep --keep` wrote.

A file is of this kind when its first line is a JSON object with `crashsweep_history`; it is
read by the spec's own reader (spec/history.py), whose refusals name the line. One file is one
History, whatever runs it holds: the audit splits it by run (spec/joining.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from crashsweep.importers.base import Kind, Unusable
from crashsweep.spec.history import History, HistoryError, read


def recognises(path: Path, head: bytes) -> bool:
    """The first line is a JSON object with the key `crashsweep_history` (of any version)."""
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{") or b"crashsweep_history" not in first:
        return False
    try:
        data = json.loads(first)
    except ValueError:
        return b"{" in first  # a header line cut by HEAD, or a broken one: the reader says which
    return isinstance(data, dict) and "crashsweep_history" in data


def histories(path: Path) -> tuple[History, ...]:
    """The file's one History; Unusable naming the file and the first bad line."""
    try:
        return (read(path),)
    except HistoryError as error:
        raise Unusable(str(error)) from None


KIND = Kind("history", "History JSONL (spec/HISTORY.md 2), as sweep --keep writes it", recognises, histories)
