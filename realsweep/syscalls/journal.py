"""The traced program's calls on its work folder, on record: what durable.py needs to play a power cut.

Each call on a file or folder under the work folder that returned without an error appends one
JSON line to the journal (one write(2) on an O_APPEND descriptor), in the order the calls
returned, paths relative to the work folder:

    {"op": "create", "file": "state.json.tmp"}            open/openat/creat made a new file
    {"op": "truncate", "file": "f", "length": 0}          O_TRUNC, truncate, ftruncate
    {"op": "write", "file": "f", "offset": 0, "data": "7b22..."}   the bytes the call wrote, in hex
    {"op": "fsync", "file": "f"}                          fsync or fdatasync of a file or folder, and
                                                          after a write through an O_SYNC or O_DSYNC descriptor
    {"op": "rename", "file": "old", "to": "new"}          rename, renameat, renameat2 ("exchange": swapped)
    {"op": "unlink" | "mkdir" | "rmdir", "file": "d"}

A call is put on record at its exit, with what it did (a short write: the bytes it wrote), so
the call a kill skipped is never on record. A rename across the work folder's edge is left out
(the cut rewrites the work folder alone).
"""

from __future__ import annotations

import json
import os
from typing import Any

from crashsweep.realsweep.syscalls.calls import O_DSYNC, O_TRUNC, Effect
from crashsweep.realsweep.syscalls.names import Namer
from crashsweep.realsweep.syscalls.ptrace import read_memory

START = ".start"
"""The suffix of the folder beside the journal that holds the work folder as the process found it."""


class Journal:
    """The journal at `path` of a program whose work folder `namer` knows."""

    def __init__(self, path: str, namer: Namer) -> None:
        self.path, self.namer = path, namer
        self.start = path + START
        self.pending: dict[int, tuple[Effect, bool]] = {}
        self.entries: list[dict[str, Any]] = []
        """Every line so far, kept in memory too (a persistence model counts a cut's states from them)."""
        self._fd = -1

    def enter(self, pid: int, effect: Effect) -> None:
        """Thread `pid` makes the call `effect`: remember it (and whether its file existed) until it returns."""
        if effect.op in ("connect", "send") or not effect.paths:
            return
        if not all(self.namer.inside(path) for path in effect.paths):
            return
        if effect.op == "write" and effect.sort != "file":
            return
        self.pending[pid] = (effect, os.path.lexists(effect.paths[0]))

    def leave(self, pid: int, rval: int) -> None:
        """Thread `pid`'s call returned `rval`: on record when it succeeded."""
        effect, existed = self.pending.pop(pid, (None, False))
        if effect is None or rval < 0:
            return
        files = [self.namer.relative(path) for path in effect.paths]
        for entry in _entries(pid, effect, files, existed, rval):
            self._append(entry)

    def _append(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)
        if not self.path:  # kept in memory only (a persistence model's count, no cut in this process)
            return
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, (json.dumps(entry) + "\n").encode("utf-8"))


def _entries(pid: int, effect: Effect, files: list[str], existed: bool, rval: int) -> list[dict[str, Any]]:
    """The journal's lines for one call that returned `rval`."""
    file = files[0]
    if effect.op == "open":
        found: list[dict[str, Any]] = [] if existed else [{"op": "create", "file": file}]
        if effect.flags & O_TRUNC:
            found.append({"op": "truncate", "file": file, "length": 0})
        return found
    if effect.op == "write":
        if effect.offset < 0:
            return []
        data = _written(pid, effect.chunks, rval).hex()
        written = [{"op": "write", "file": file, "offset": effect.offset, "data": data}]
        if effect.flags & O_DSYNC:  # a synchronous descriptor: the data is durable when the call returns
            written.append({"op": "fsync", "file": file})
        return written
    if effect.op == "truncate":
        return [{"op": "truncate", "file": file, "length": effect.flags}]
    if effect.op in ("rename", "exchange"):
        return [{"op": effect.op, "file": file, "to": files[1]}]
    return [{"op": effect.op, "file": file}]


def _written(pid: int, chunks: tuple[tuple[int, int], ...], count: int) -> bytes:
    """The first `count` bytes of the data `chunks` point at in thread `pid`'s memory."""
    parts, left = [], count
    for address, length in chunks:
        if left <= 0:
            break
        part = read_memory(pid, address, min(length, left))
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
