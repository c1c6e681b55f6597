"""Crash points at a Python program's effects, without marks (`--points auto`, spec/POINTS.md section 2).

Installed in the swept process just before the target runs (`install`, called by entry.py and
by the zygote's child) when CRASHSWEEP_POINTS asks for `auto`:

- an audit hook (sys.addaudithook) gives the *before* points of the effects Python announces:
  a file opened for writing (`open`), `os.rename`/`os.replace`, `os.remove`/`os.rmdir`,
  `os.mkdir`, `socket.connect`, `subprocess.Popen`;
- a thin interposition gives what no audit event announces: `os.fsync`/`os.fdatasync`
  (before and after), the *after* point of a rename, `socket.socket.send`/`sendall` (before)
  and the first data received after a send (`reply`, after: the peer has answered), and
  `sqlite3` commits (before and after, through a connection factory).

Each point goes through crashpoint.auto_point, so the protocol (log, kill, snapshot) is the
marked points'. A point is named `<before|after> <kind> <what> @ <site>` (modes.py filters by
kind, what and site). While a point is being passed, the probe's own file operations (its logs,
the snapshot pipes) raise audit events too: a per-thread flag ignores them, and the sweep's
files (the CRASHSWEEP_* paths) are never points. Audit hooks cannot be removed: the process
is the sweep's and ends with its run.
"""

from __future__ import annotations

import _thread
import importlib.abc
import importlib.machinery
import os
import socket
import sys
import sysconfig
import weakref
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, ClassVar

from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.probe.modes import Points

_local = _thread._local()
_PROBE = os.path.dirname(os.path.realpath(__file__))
_SKIPPED = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    if p
)


class _Setup:
    """What the hooks need to know, fixed at install: filters, the target's folder, the sweep's own files."""

    points = Points()
    root = ""
    workdir = ""
    ignored: frozenset[str] = frozenset()
    snapshot = ""
    sites: ClassVar[dict[str, str | None]] = {}
    """Per code file: its path relative to the target's folder when under it (a program frame), else
    "" for a frame to skip (standard library, installed packages, the probe) or None for any other."""


def install(target: Callable[..., object]) -> bool:
    """Install the hooks when the environment asks for auto points; whether it did. `target`: what runs."""
    points = Points.from_env()
    crashpoint.set_marked(points.marked)
    if not points.auto:
        return False
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    path = getattr(module, "__file__", None) or os.getcwd()
    _Setup.points, _Setup.root = points, os.path.dirname(os.path.realpath(path))
    _Setup.workdir = os.path.realpath(os.environ.get("CRASHSWEEP_WORKDIR") or os.getcwd())
    files = {v for k, v in os.environ.items() if k.startswith("CRASHSWEEP_") and k != "CRASHSWEEP_WORKDIR"}
    _Setup.ignored = frozenset(os.path.abspath(v) for v in files if os.path.isabs(v))
    _Setup.snapshot = os.environ.get(crashpoint.SNAPSHOT, "")
    _interpose()
    sys.addaudithook(_audit)
    return True


def _point(when: str, kind: str, what: str) -> None:
    """Pass the point of an effect (unless it is the probe's own, or filtered out)."""
    if getattr(_local, "busy", False):
        return
    _local.busy = True
    try:
        site = _site(sys._getframe(2))
        if _Setup.points.keeps(kind, what, site):
            crashpoint.auto_point(f"{when} {kind} {what} @ {site}", site)
    finally:
        _local.busy = False


def _site(frame: Any) -> str:
    """The program's own call site: the innermost frame under the target's folder, else outside the skipped."""
    fallback = None
    while frame is not None:
        name = frame.f_code.co_filename
        site = _Setup.sites.get(name, "?")
        if site == "?":
            site = _Setup.sites[name] = _classify(name)
        if site:
            return f"{site}:{frame.f_lineno}"
        if site is None and fallback is None:
            fallback = f"{os.path.relpath(os.path.realpath(name), _Setup.root)}:{frame.f_lineno}"
        frame = frame.f_back
    return fallback or "?"


def _classify(filename: str) -> str | None:
    """A code file's path under the target's folder; "" to skip it; None for another program file."""
    if filename.startswith("<"):
        return ""  # frozen modules and generated code
    real = os.path.realpath(filename)
    if real.startswith(_Setup.root + os.sep):
        return os.path.relpath(real, _Setup.root)
    if real.startswith(_SKIPPED) or os.path.dirname(real) == _PROBE:
        return ""
    return None


def _file(path: object) -> str | None:
    """A file the program names, as a point names it; None for the sweep's own files and the interpreter's."""
    if isinstance(path, int):
        return _fd_file(path)
    try:
        text = os.fsdecode(path)  # type: ignore[arg-type]
    except TypeError:
        return None
    full = os.path.abspath(text)
    if full in _Setup.ignored or "__pycache__" in full or (_Setup.snapshot and full.startswith(_Setup.snapshot)):
        return None
    real = os.path.realpath(full)  # a link's own path would differ from run to run only if the link did
    inside = real == _Setup.workdir or real.startswith(_Setup.workdir + os.sep)
    return os.path.relpath(real, _Setup.workdir) if inside else real


def _fd_file(fd: int) -> str | None:
    try:
        return _file(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return f"fd {fd}"


_WRITING = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: a before point for each effect event (every other event returns at once)."""
    if event not in _EVENTS or getattr(_local, "busy", False):
        return
    found = _EVENTS[event](args)
    if found is not None:
        _point("before", *found)


def _opened(args: tuple[Any, ...]) -> tuple[str, str] | None:
    path, _, flags = args
    if not (isinstance(flags, int) and flags & _WRITING):
        return None
    what = _file(path)
    return None if what is None else ("write", what)


def _renamed(args: tuple[Any, ...]) -> tuple[str, str] | None:
    source, target = _file(args[0]), _file(args[1])
    return None if source is None or target is None else ("rename", f"{source} -> {target}")


def _on_file(kind: str) -> Callable[[tuple[Any, ...]], tuple[str, str] | None]:
    def found(args: tuple[Any, ...]) -> tuple[str, str] | None:
        what = _file(args[0])
        return None if what is None else (kind, what)

    return found


def _peer(sock: socket.socket) -> str:
    """A socket's peer kind: stable from run to run (a port is not)."""
    if sock.family == getattr(socket, "AF_UNIX", None):
        return "unix"
    return "udp" if sock.type == socket.SOCK_DGRAM else "tcp"


def _spawned(args: tuple[Any, ...]) -> tuple[str, str]:
    executable, argv = args[0], args[1]
    first = executable if executable is not None else (argv if isinstance(argv, (str, bytes)) else argv[0])
    return "spawn", os.path.basename(os.fsdecode(first))


_EVENTS: dict[str, Callable[[tuple[Any, ...]], tuple[str, str] | None]] = {
    "open": _opened,
    "os.rename": _renamed,
    "os.remove": _on_file("remove"),
    "os.rmdir": _on_file("remove"),
    "os.mkdir": _on_file("mkdir"),
    "socket.connect": lambda args: ("connect", _peer(args[0])),
    "subprocess.Popen": _spawned,
}


def _interpose() -> None:
    """Wrap the calls no audit event announces (or announces only before): once per process."""
    if getattr(os.fsync, "__wrapped__", None) is not None:
        return
    os.fsync = _around("fsync", os.fsync, _synced, before=True)
    os.fdatasync = _around("fsync", os.fdatasync, _synced, before=True)
    os.rename = _around("rename", os.rename, _moved, before=False)  # the audit hook gives `before`
    os.replace = _around("rename", os.replace, _moved, before=False)
    _sockets()
    if "sqlite3" in sys.modules:
        _sqlite(sys.modules["sqlite3"])
    else:
        sys.meta_path.insert(0, _AfterImport("sqlite3", _sqlite))


def _around(kind: str, call: Callable[..., Any], what: Callable[[tuple[Any, ...]], str | None], *, before: bool) -> Any:
    """`call` with a point before it (when `before`) and after it returns, named by `what(its arguments)`."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        named = None if getattr(_local, "busy", False) else what(args)
        if named is not None and before:
            _point("before", kind, named)
        result = call(*args, **kwargs)
        if named is not None:
            _point("after", kind, named)
        return result

    wrapper.__wrapped__ = call  # type: ignore[attr-defined]
    return wrapper


def _synced(args: tuple[Any, ...]) -> str | None:
    """What an fsync names: the file behind its descriptor (or file object)."""
    fd = args[0].fileno() if hasattr(args[0], "fileno") else args[0]
    return _fd_file(fd) if isinstance(fd, int) else None


def _moved(args: tuple[Any, ...]) -> str | None:
    """What a rename names: both files, as its before point (the audit event) does."""
    found = _renamed(args) if len(args) >= 2 else None
    return None if found is None else found[1]


_awaiting: weakref.WeakSet[socket.socket] = weakref.WeakSet()
"""Sockets that sent data and have not yet received any since: the next data received is a reply."""


def _sockets() -> None:
    """Before each send on a socket; after the first data received once something was sent (the reply)."""
    cls = socket.socket
    for name in ("send", "sendall"):
        original = getattr(cls, name)

        def sending(self: socket.socket, *args: Any, _original: Any = original) -> Any:
            _point("before", "send", _peer(self))
            _awaiting.add(self)
            return _original(self, *args)

        setattr(cls, name, sending)
    for name in ("recv", "recv_into"):
        original = getattr(cls, name)

        def receiving(self: socket.socket, *args: Any, _original: Any = original) -> Any:
            got = _original(self, *args)
            if got and self in _awaiting:
                _awaiting.discard(self)
                _point("after", "reply", _peer(self))
            return got

        setattr(cls, name, receiving)


def _sqlite(module: ModuleType) -> None:
    """Commits of connections opened with sqlite3.connect (no factory of the program's own): before and after."""
    base = module.Connection
    connect = module.connect

    class Connection(base):  # type: ignore[misc,valid-type]
        def commit(self) -> None:
            what = _file(_database.get(id(self), "?")) or "?"
            _point("before", "commit", what)
            super().commit()
            _point("after", "commit", what)

        def __exit__(self, kind: object, *rest: object) -> Any:  # `with connection:` commits in C
            what = None if kind is not None else _file(_database.get(id(self), "?")) or "?"
            if what is not None:
                _point("before", "commit", what)
            result = super().__exit__(kind, *rest)
            if what is not None:
                _point("after", "commit", what)
            return result

    def connecting(database: Any, *args: Any, **kwargs: Any) -> Any:
        if "factory" not in kwargs and len(args) < 4:
            kwargs["factory"] = Connection
        made = connect(database, *args, **kwargs)
        _database[id(made)] = database
        return made

    module.connect = connecting  # type: ignore[attr-defined]


_database: dict[int, object] = {}
"""Each interposed connection's database (by id: sqlite3 connections take no new attributes)."""


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then(module)` once `name` is imported, for modules the program imports after the start."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader, then = spec.loader, self.then

        class Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                then(module)

        spec.loader = Loader()
        return spec
