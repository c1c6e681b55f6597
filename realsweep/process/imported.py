"""The source files of the modules a process has imported, and which of them changed since.

A zygote that serves the sweeps of one process in turn (zygotes.py) holds the program as it
was imported for the first sweep. A later sweep must run the program as it is on disk then,
as a zygote started afresh would: a file edited in between (the program's own module, a
framework's) would otherwise go on running in its old version. `Imported` notes each module's
file (its modification time in nanoseconds and its size) once, when the module is first seen,
and `changed()` names the first file noted that is no longer what it was; the zygote then
declines the new sweep and a fresh zygote imports the program again.

A module is noted when the zygote next looks after importing it (after the entry point's
import, after each request's warm-ups and after loading another entry point): an edit made
between its import and that look goes unseen, as an edit made while a sweep runs does.
Modules without a file (built-in, frozen, namespace packages) have nothing to compare.
"""

from __future__ import annotations

import os
import sys

Signature = tuple[int, int]
"""A file's modification time (ns) and size."""


def signature(path: str | os.PathLike[str]) -> Signature | None:
    """The file's modification time (ns) and size; None if it cannot be read (gone, say)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


class Imported:
    """The files of the modules seen so far in `sys.modules`, each with its signature when first seen."""

    def __init__(self) -> None:
        self.files: dict[str, Signature | None] = {}
        self._seen = 0  # len(sys.modules) at the last look: a look with no new module is one comparison

    def note(self) -> None:
        """Note the files of the modules imported since the last look."""
        if len(sys.modules) == self._seen:
            return
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and path not in self.files:
                self.files[path] = signature(path)
        self._seen = len(sys.modules)

    def changed(self) -> str | None:
        """The first noted file that changed (or appeared, or went) since it was noted; None if none did."""
        self.note()
        for path, noted in self.files.items():
            if signature(path) != noted:
                return path
        return None
