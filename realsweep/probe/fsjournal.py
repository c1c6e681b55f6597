"""The checkpoint's file operations on record, and the disk a power cut leaves (spec/FAULTS.md section 6).

As ALICE does for real applications, the program's durable file operations are recorded as
they happen, and the sweep builds from that record the disk a power cut would leave:

- in the program (`record`): with CRASHSWEEP_FS_JOURNAL=<file> set, every write of the temp
  file (with its content and the checkpoint's content at that moment), every fsync of it,
  the rename and the fsync of the directory append one JSON line to the file (one write(2)
  on an O_APPEND descriptor, in the kernel before the process can die); unset, nothing;
- in the sweep (`cut`): after the process was killed at the cut's point, the work directory
  holds what a crash leaves; `cut` undoes in it what the rules say a power cut loses, from
  the journal alone: the save in flight (from its last `write`) is undone unless made durable
  by its fsyncs, and a file renamed into place unsynced is left empty (unreadable).

Older saves are on disk for good (rule 6.2.1): only the save in flight is looked at.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

JOURNAL = "CRASHSWEEP_FS_JOURNAL"
TMP_SUFFIX = ".tmp"


def record(op: str, path: Path, data: bytes | None = None) -> None:
    """Append one operation on `path` to the journal (`data`: what a `write` wrote to the temp file)."""
    journal = os.environ.get(JOURNAL)
    if not journal:
        return
    entry: dict[str, Any] = {"op": op, "file": path.name}
    if op == "write":
        assert data is not None
        entry["data"] = data.decode("utf-8")
        entry["before"] = path.read_text(encoding="utf-8") if path.exists() else None
    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (json.dumps(entry) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def after_cut(entries: list[dict[str, Any]]) -> tuple[str | None, str | None, bool] | None:
    """(checkpoint, temp file, unreadable) as a cut leaves them; None when the cut loses nothing."""
    starts = [i for i, entry in enumerate(entries) if entry["op"] == "write"]
    if not starts:
        return None
    flight = entries[starts[-1] :]
    ops = [entry["op"] for entry in flight]
    written, before = flight[0]["data"], flight[0]["before"]
    if "rename" not in ops:
        return (before, written, False) if "fsync" in ops else (before, None, False)
    renamed = ops.index("rename")
    if "fsync" not in ops[:renamed]:
        return None, None, True  # renamed into place before its content reached the disk
    if "fsync-dir" in ops[renamed:]:
        return None
    return before, written, False  # the rename is undone; the synced temp file is back


def cut(workdir: Path, journal: Path) -> bool:
    """Leave in `workdir` what a power cut leaves of every file the journal names; whether it changed anything."""
    lines = journal.read_text(encoding="utf-8").splitlines() if journal.exists() else []
    entries = [json.loads(line) for line in lines]
    changed = False
    for name in dict.fromkeys(entry["file"] for entry in entries):
        left = after_cut([entry for entry in entries if entry["file"] == name])
        if left is not None:
            _leave(workdir / name, *left)
            changed = True
    return changed


def _leave(path: Path, committed: str | None, tmp: str | None, unreadable: bool) -> None:
    temp = path.with_name(path.name + TMP_SUFFIX)
    if unreadable:
        path.write_bytes(b"")  # empty: what the directory entry points at holds none of the data
    elif committed is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(committed, encoding="utf-8")
    if tmp is None:
        temp.unlink(missing_ok=True)
    else:
        temp.write_text(tmp, encoding="utf-8")


def at_risk(points: Sequence[str]) -> list[bool]:
    """For each point of a process, whether a cut there would lose something (read off the points' names).

    A checkpoint save's `tmp written` and `renamed` put something at risk; its `tmp synced` and
    `dir synced` make it durable; the lock file's saves are left out (a cut keeps the lock file).
    """
    risky, found = False, []
    for point in points:
        save = not point.startswith("lock: ")
        if save and (point.endswith(": tmp written") or point.endswith(": renamed")):
            risky = True
        elif save and (point.endswith(": tmp synced") or point.endswith(": dir synced")):
            risky = False
        found.append(risky)
    return found
