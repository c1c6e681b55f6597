"""A system call's point name, the calls that are no point (noise), and the risk of a power cut read off names.

A point is named `<call> <what>` (spec/POINTS.md section 3): `<what>` is the file relative to
the work folder ("." for the folder itself; its full path when outside it), `<old> -> <new>`
for a rename, or the socket's peer in angle brackets: "<tracker>" for the sweep's tracker (its
port changes from sweep to sweep, the name does not), else "<host:port>", "<unix>", "<tcp>"
(the brackets tell a peer from a file: "write <tracker>" is a send, "write tracker" a file). Names depend only on the
call and its file or peer, so two runs of the same program from the same world name the same
points in the same order.

Not points (noise): writes to what is no regular file (pipes, ttys, /dev/null), files under
/dev, /proc and /sys outside the work folder, bytecode caches (`__pycache__`), the sweep's own files (every path an
environment variable CRASHSWEEP_* names, and what lies under it), and the file the program's
standard output or error goes to unless it lies in the work folder (the runner sends both to
a log beside the work folder).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from crashsweep.realsweep.syscalls.calls import POINT_CALLS, Effect

TRACKER_URL = "CRASHSWEEP_TRACKER_URL"
SYSTEM = ("/dev/", "/proc/", "/sys/")
ARROW = " -> "


class Namer:
    """Names the effects of one traced program whose work folder is `workdir`."""

    def __init__(self, workdir: str, env: Mapping[str, str]) -> None:
        self.workdir = os.path.realpath(workdir)
        self.tracker = _tracker(env.get(TRACKER_URL, ""))
        self.own = tuple(
            os.path.realpath(value)
            for key, value in env.items()
            if key.startswith("CRASHSWEEP_") and key != "CRASHSWEEP_WORKDIR" and value.startswith("/")
        )
        self.outputs = {identity for fd in (1, 2) if (identity := _identity(f"/proc/self/fd/{fd}")) is not None}

    def relative(self, path: str) -> str:
        """`path` relative to the work folder ("." for the folder), or as is when outside it."""
        if path == self.workdir:
            return "."
        if path.startswith(self.workdir + os.sep):
            return path[len(self.workdir) + 1 :]
        return path

    def inside(self, path: str) -> bool:
        """Is `path` the work folder or under it?"""
        return path == self.workdir or path.startswith(self.workdir + os.sep)

    def name(self, effect: Effect) -> str | None:
        """The point's name of `effect`; None when it is no point (not an effect, or noise)."""
        if not effect.point:
            return None
        if effect.op in ("connect", "send"):
            return f"{effect.call} {self.peer(effect.peer)}"
        if any(self.noise(path, effect.op) for path in effect.paths):
            return None
        return f"{effect.call} {ARROW.join(self.relative(path) for path in effect.paths)}"

    def peer(self, peer: str) -> str:
        """A socket's peer as named: "<tracker>" for the sweep's tracker, else "<host:port>"."""
        return "<tracker>" if self.tracker and peer == self.tracker else f"<{peer or 'tcp'}>"

    def noise(self, path: str, op: str) -> bool:
        """Is a call on `path` the system's, the interpreter's or the sweep's own doing, not the program's effect?"""
        if not path or "__pycache__" in path.split(os.sep):
            return True
        if any(path == own or path.startswith(own + os.sep) for own in self.own):
            return True
        if self.inside(path):  # the work folder may itself lie under /dev/shm (the sweep's scratch space)
            return False
        return path.startswith(SYSTEM) or (op == "write" and _identity(path) in self.outputs)

    def where(self, effect: Effect) -> str:
        """Where the call went, for --list-points, strace-like: `write(3<state.json.tmp>)`, `connect(4<ip:port>)`.

        Paths relative to the work folder (a scenario's folder is gone once the sweep ends).
        """
        if effect.op in ("connect", "send"):
            return f"{effect.call}({effect.fd}<{effect.peer or 'tcp'}>)"
        what = [self.relative(path) for path in effect.paths]
        return f"{effect.call}({effect.fd}<{what[0]}>)" if effect.fd >= 0 else f"{effect.call}({', '.join(what)})"


def _tracker(url: str) -> str:
    """The tracker's "host:port" as a socket's peer reads (a name resolved to its address); "" without one."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    with contextlib.suppress(OSError):
        import socket

        host = socket.gethostbyname(host)
    return f"{host}:{parts.port or 80}"


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the regular file at `path`; None for anything else."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if os.path.isfile(path) else None


def parse(name: str) -> tuple[str, tuple[str, ...]] | None:
    """(call, files or peer) of a system call's point name; None for a name that is not one."""
    call, space, rest = name.partition(" ")
    if call not in POINT_CALLS or not space or not rest:
        return None
    return call, tuple(rest.split(ARROW)) if call.startswith("rename") else (rest,)


FILE_CALLS = ("write", "pwrite64", "writev", "pwritev", "pwritev2")
EXCLUDED = "excluded "
"""The prefix of the pause the shim logs for a call the filters dropped that touches the work folder."""


STATES = "crash states "
"""The prefix of the pause the shim logs at each point (and at exit) under a persistence model other
than strict: the model, and how many crash states a cut there has ("crash states ordered 5")."""


def crash_states(pauses: Sequence[tuple[int, str]]) -> dict[int, tuple[str, int]]:
    """The crash states of each cut the pauses count: points passed before the cut -> (the model, its states)."""
    found = {}
    for passed, name in pauses:
        if name.startswith(STATES):
            model, _, count = name[len(STATES) :].rpartition(" ")
            found[passed] = (model, int(count))
    return found


def excluded_pause(name: str) -> str | None:
    """The point's name of an `excluded_pause` ("excluded write wal" -> "write wal"); None for another pause."""
    return name[len(EXCLUDED) :] if name.startswith(EXCLUDED) else None


def at_risk(points: Sequence[str], pauses: Sequence[tuple[int, str]] = ()) -> list[bool]:
    """For each syscall point, whether a cut there (before its call) would lose something of the work folder.

    Read off the names alone: a write leaves its file's data unsynced (and its directory
    entry, since the file may be new) until an fsync of the file (data) or of its folder
    (entries); a rename, unlink, rmdir or mkdir leaves its folders' entries unsynced. Files
    outside the work folder (absolute names) are not the cut's, and sockets are remote.

    `pauses` ((points passed before, name), as the process logged them) carry the calls that
    --points-include / --points-exclude dropped (`excluded_pause`): no crash is tried at them,
    but what they leave unsynced is lost by a cut all the same, so they count here in their place.
    """
    return _risks(points, pauses)[0]


def at_risk_at_exit(points: Sequence[str], pauses: Sequence[tuple[int, str]] = ()) -> bool:
    """Whether a cut once the process has exited would lose something: its calls left something unsynced.

    As `at_risk`, past the last point: the calls a filter dropped after it count too.
    """
    return _risks(points, pauses)[1]


def _risks(points: Sequence[str], pauses: Sequence[tuple[int, str]]) -> tuple[list[bool], bool]:
    """`at_risk` of each point, and whether anything is still unsynced after the last call."""
    dropped: dict[int, list[str]] = {}
    for passed, name in pauses:
        call = excluded_pause(name)
        if call is not None:
            dropped.setdefault(passed, []).append(call)
    unsynced = _Unsynced()
    found = []
    for i, point in enumerate(points):
        for call in dropped.get(i, ()):
            unsynced.apply(call)
        found.append(unsynced.any)
        unsynced.apply(point)
    for call in dropped.get(len(points), ()):
        unsynced.apply(call)
    return found, unsynced.any


class _Unsynced:
    """What the calls so far left unsynced: files' data (`dirty`) and folders' entries (`pending`)."""

    def __init__(self) -> None:
        self.dirty: set[str] = set()
        self.pending: set[str] = set()

    @property
    def any(self) -> bool:
        return bool(self.dirty or self.pending)

    def apply(self, point: str) -> None:
        """One more call, by its point's name (none that is no syscall point's name)."""
        parsed = parse(point)
        if parsed is None:
            return
        call, files = parsed
        inside = [file for file in files if not file.startswith(("/", "<"))]
        if call in FILE_CALLS and inside:
            self.dirty.add(inside[0])
            self.pending.add(_folder(inside[0]))
        elif call in ("fsync", "fdatasync") and inside:
            self.dirty.discard(inside[0])
            self.pending.discard(inside[0])
        elif call.startswith(("rename", "unlink", "rmdir", "mkdir")) and inside:
            self.pending.update(_folder(file) for file in inside)
            if len(inside) == 2 and inside[0] in self.dirty:
                self.dirty.discard(inside[0])
                self.dirty.add(inside[1])


def _folder(file: str) -> str:
    """The folder a relative file lies in ("." for the work folder)."""
    return os.path.dirname(file) or "."
