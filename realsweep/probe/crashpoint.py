"""Crash points for real code: one call that does nothing in normal runs and, under a sweep, kills.

    from crashsweep.realsweep.probe.crashpoint import crashpoint, count
    crashpoint("tracker accepted create_a")   # a place where a crash may strike
    count("model_calls")                      # a counter the sweep sums over a scenario

It knows nothing about agent loops. The protocol is three environment variables, so a program
in any language can take part:

- CRASHSWEEP_POINTS_LOG=<file>: every crash point the process passes appends its name and a
  newline to the file, *before* the decision below. Unset: `crashpoint` returns at once.
- CRASHSWEEP_CRASH_AT=<n>: the process dies at the n-th crash point it passes (from 1).
  Unset, empty or 0: it passes every point (the run that lists them).
  CRASHSWEEP_CRASH_AT=<k>:<name>: the process dies the k-th time it passes the point `name`.
  This is how the sweep names a point: by name and occurrence, not by its place in the list,
  so that a program whose threads interleave differently from run to run (a background
  checkpoint writer, tools run in parallel) still dies at the same point of its work.
- CRASHSWEEP_WHERE_LOG=<file>: beside the points log, each point passed appends its name, a
  tab and where in the code it was passed (`file:line` of the innermost frame outside this
  package: the program's own call, or an adapter's). Set only by `sweep --list-points`.
- CRASHSWEEP_COUNTERS_LOG=<file>: `count(name)` appends the name once per unit.
- CRASHSWEEP_PAUSES_LOG=<file>: `pause(name)` marks a place where a fault may strike that is
  not a crash point (spec/FAULTS.md section 1: before a person answers); it appends "<points
  passed so far> <name>" and returns the pause's number in this process (from 1), by which
  the sweep's nemesis names the pause it strikes at.
- CRASHSWEEP_SNAPSHOT=<folder>: at every point it passes (after the log line), the process
  writes the point's index, its process ID and a newline to the FIFO <folder>/request and
  waits for one byte on the FIFO <folder>/answer: meanwhile the sweep stops it (SIGSTOP, so
  no other thread of it runs on) and copies its world, which is then the world a kill at that
  point would leave (a snapshot sweep; see process/snapshots.py). Unset: no pause.
- CRASHSWEEP_WORLD=<digest>: the digest of the world (files and tracker) the process started
  from, set by a deduplicating sweep. `fresh_id()` then derives its IDs from it and from how
  many it has given out, so that a run ID does not make every world unique; unset, it returns
  a random UUID.

In a program that has imported OpenTelemetry (the probe never imports it: it looks it up in
sys.modules), every point passed, under a sweep or not, is also recorded in the program's trace
(issue 46, for `crashsweep from-trace`): an event `crashsweep.point` of the current span when it
records, else a span `crashsweep.point` of its own, begun and ended at once, each with the
attributes `crashsweep.point.name` and `crashsweep.point.seq` (this process's count of points
recorded, from 1: their exact order when timestamps tie). A tracing failure is swallowed; without
OpenTelemetry the cost is one dict lookup.

Dying is SIGKILL sent to itself: no `finally` block, `atexit` handler or buffer flush runs,
exactly as when the machine's OOM killer or a `kill -9` strikes (os._exit(137) is the fallback
where SIGKILL does not exist).

Each line is one write(2) on an O_APPEND descriptor: no user-space buffer holds it, so it is
in the kernel before the process can die and no kill can lose it. A log's descriptor is opened
at its first line and kept for the process's life (one write per line, not an open, a write
and a close: a swept process passes a dozen to forty points), reopened when the variable names
another file, and closed by `reset`. It is not fsynced: fsync
guards against a power cut, which this sweep does not simulate, and would cost about a
millisecond per point on an ordinary disk, for thousands of processes. The checkpoint, which
is the program's own durable state, is fsynced (see checkpoint.py).
"""

from __future__ import annotations

import _thread  # not threading: see zygote_server.py (its fork handler runs in every forked child)
import hashlib
import os
import signal
import sys
import uuid
from typing import Any

POINTS_LOG = "CRASHSWEEP_POINTS_LOG"
CRASH_AT = "CRASHSWEEP_CRASH_AT"
WHERE_LOG = "CRASHSWEEP_WHERE_LOG"
COUNTERS_LOG = "CRASHSWEEP_COUNTERS_LOG"
PAUSES_LOG = "CRASHSWEEP_PAUSES_LOG"
WORLD = "CRASHSWEEP_WORLD"
SNAPSHOT = "CRASHSWEEP_SNAPSHOT"
KILLED_STATUS = 137  # 128 + SIGKILL: what a shell reports for a process killed by SIGKILL
STOPPED_STATUS = 75
"""The exit status of a process that stops because another live process drives its run
(spec/FAULTS.md section 7: refused by a lock or a fencing token, or its temp file renamed by
the other): a sweep with `pause` takes it as the process's end, any other sweep as a failure."""
STUCK_STATUS = 76
"""The exit status of a process that can never go on, however often it is restarted
(spec/CONVERSATIONS.md 4: a provider that refuses the saved conversation): the sweep takes it
as the scenario's end, a run that never finishes (the `can-finish` property), and restarts nothing.
The process's last line of output says why."""
REFUSED_STATUS = 78
"""The exit status of a program that refuses the sweep itself (`SweepRefused`): the world it was
started in cannot be its own (Temporal's history lives in its server, so a saved world cannot be
restored in another scenario). The sweep stops there with the process's last line, exit 2: this
is no finding about the program, and no restart that cannot recover."""


class SweepRefused(RuntimeError):
    """Raised by a swept program (or its adapter) that cannot be swept this way; its message says how to sweep it.

    The process exits with REFUSED_STATUS, its message as its last line (process/zygote_server.py,
    probe/entry.py), and the sweep stops with it.
    """


MALFORMED = "malformed_requests"
"""The counter a program counts for each model request whose conversation holds a tool call
without its result, or a result without its call (the real side of `well-formed-transcript`)."""

_passed = 0
_seen: dict[str, int] = {}
_fresh = 0
_paused = 0
_marked = True  # the program's marks are points (False: --points auto alone, auto.py)
_pipes: tuple[int, int] | None = None  # the snapshot FIFOs (request, answer), opened at the first point
_logs: dict[str, int] = {}  # each log's O_APPEND descriptor, by path, opened at its first line
_lock = _thread.allocate_lock()  # threads pass points one at a time: the log's order is the order of decisions
_logs_lock = _thread.allocate_lock()  # the table of open logs
_traced = 0  # the points recorded in the program's OpenTelemetry trace (their `crashsweep.point.seq`)
_traced_lock = _thread.allocate_lock()
_tracing = _thread._local()  # per thread: a point passed while one is being recorded (by the tracer) is not


def crashpoint(name: str, *, where: str | None = None) -> None:
    """Mark a crash point: under a sweep, log its name, and die if it is the chosen one.

    Any thread may call it; the kill ends the whole process, whichever thread sends it, and no
    other thread passes a point between the chosen point's log line and the kill. `where`:
    the call site to report (`call_site`) when a helper of the program passes the point for
    its caller; by default the caller's own.
    """
    if _marked:
        _pass(name, where)


def auto_point(name: str, where: str) -> None:
    """Pass a point found at an effect (auto.py), `where` its call site: as a mark, but never silenced."""
    _pass(name, where)


def set_marked(marked: bool) -> None:
    """Pass the program's marks (True, the default) or ignore them (`--points auto` alone)."""
    global _marked
    _marked = marked


def _pass(name: str, where: str | None) -> None:
    """Log the point, die if it is the chosen one, else hold for a snapshot when one is asked for."""
    global _passed
    otel = sys.modules.get("opentelemetry.trace")
    if otel is not None:
        _trace(otel, name)
    log = os.environ.get(POINTS_LOG)
    if not log:
        return
    _check_name(name)
    with _lock:
        _passed += 1
        _seen[name] = _seen.get(name, 0) + 1
        _append(log, name)
        where_log = os.environ.get(WHERE_LOG)
        if where_log:
            _append(where_log, f"{name}\t{call_site(2) if where is None else where}")
        if _chosen(_passed, name, _seen[name]):
            die()
        _snapshot(_passed)


def _trace(otel: Any, name: str) -> None:
    """Record the point in the program's OpenTelemetry trace (`otel`: its opentelemetry.trace module).

    An event of the current span when it records, else a span of its own begun and ended at
    once (by the global tracer provider). Whatever OpenTelemetry raises is swallowed: tracing
    never changes what the program does.
    """
    global _traced
    if getattr(_tracing, "busy", False):  # the tracer itself passed a point (an auto point's hook)
        return
    with _traced_lock:
        _traced += 1
        seq = _traced
    _tracing.busy = True
    try:
        attributes = {"crashsweep.point.name": name, "crashsweep.point.seq": seq}
        span = otel.get_current_span()
        if span.is_recording():
            span.add_event("crashsweep.point", attributes)
        else:
            otel.get_tracer("crashsweep").start_span("crashsweep.point", attributes=attributes).end()
    except Exception:  # a tracing failure must not change the program
        pass
    finally:
        _tracing.busy = False


_PROBE = os.path.dirname(os.path.abspath(__file__))


def call_site(depth: int = 0) -> str:
    """`file:line` of the innermost frame outside this package (the code that passed the point)."""
    frame = sys._getframe(1 + depth)
    while frame.f_back is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PROBE:
        frame = frame.f_back
    return f"{os.path.abspath(frame.f_code.co_filename)}:{frame.f_lineno}"


def read_where(text: str) -> tuple[tuple[str, str], ...]:
    """The lines of a CRASHSWEEP_WHERE_LOG, in order: (point name, `file:line`)."""
    return tuple((name, where) for name, _, where in (line.partition("\t") for line in text.splitlines()))


def count(name: str, n: int = 1) -> None:
    """Add `n` to the counter `name` (model calls, questions to a person, ...) under a sweep."""
    log = os.environ.get(COUNTERS_LOG)
    if not log or n <= 0:
        return
    _check_name(name)
    _append(log, "\n".join([name] * n))


def pause(name: str) -> int:
    """Mark a fault's chance that is no crash point; its number (from 1) among this process's pauses.

    Under a sweep it logs the points passed before it and its name, so that the sweep knows
    where in the process it came; nothing can kill the process here.
    """
    global _paused
    _check_name(name)
    with _lock:
        _paused += 1
        number = _paused
        log = os.environ.get(PAUSES_LOG)
        if log:
            _append(log, f"{_passed} {name}")
    return number


def read_pauses(text: str) -> tuple[tuple[int, str], ...]:
    """The pauses of a CRASHSWEEP_PAUSES_LOG, in order: (points passed before each, its name)."""
    found = []
    for line in text.splitlines():
        passed_, _, name = line.partition(" ")
        found.append((int(passed_), name))
    return tuple(found)


def fresh_id() -> str:
    """A new ID, 32 hex digits: random outside a sweep; under one, from the world's digest and the count.

    Two processes that start from the same world get the same IDs in the same order, as a
    deterministic program must; two different worlds get different ones.
    """
    global _fresh
    world = os.environ.get(WORLD)
    if not world:
        return uuid.uuid4().hex
    with _lock:
        _fresh += 1
        n = _fresh
    return hashlib.sha256(f"{world}:{n}".encode()).hexdigest()[:32]


def _chosen(index: int, name: str, occurrence: int) -> bool:
    """Is the point just passed (the `index`-th, the `occurrence`-th named `name`) the one to die at?

    CRASH_AT is read once per point (each read of os.environ encodes and decodes).
    """
    raw = os.environ.get(CRASH_AT, "").strip()
    point = _point(raw)
    if point is not None:
        return point == (occurrence, name)
    return index == _index(raw)


def crash_point() -> tuple[int, str] | None:
    """The (occurrence, name) this process dies at, when CRASH_AT names a point; None otherwise."""
    return _point(os.environ.get(CRASH_AT, "").strip())


def crash_at() -> int:
    """The index (from 1) of the crash point this process dies at; 0 for none (or when it names a point)."""
    raw = os.environ.get(CRASH_AT, "").strip()
    return 0 if _point(raw) is not None else _index(raw)


def _point(raw: str) -> tuple[int, str] | None:
    """The (occurrence, name) of a CRASH_AT value "N:NAME"; None for a value without a colon."""
    head, colon, name = raw.partition(":")
    if not colon:
        return None
    if not head.isdigit() or int(head) < 1 or not name:
        raise ValueError(f"{CRASH_AT}={raw!r}: expected N:NAME, the N-th (from 1) pass of the point NAME")
    return int(head), name


def _index(raw: str) -> int:
    """The index of a CRASH_AT value without a colon; 0 for an empty one."""
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{CRASH_AT}={raw!r}: expected a whole number") from None
    if value < 0:
        raise ValueError(f"{CRASH_AT}={raw!r}: expected 0 or more")
    return value


def passed() -> int:
    """How many crash points this process has passed under a sweep."""
    return _passed


def reset() -> None:
    """Forget the points passed (for tests that call crashpoint in one long-lived process)."""
    global _passed, _fresh, _paused, _traced
    with _lock:
        _passed = _fresh = _paused = _traced = 0
        _seen.clear()
        with _logs_lock:
            for fd in _logs.values():
                os.close(fd)
            _logs.clear()


def die() -> None:
    """End this process at once, as a crash would: nothing of Python's runs after this call."""
    if hasattr(signal, "SIGKILL"):
        os.kill(os.getpid(), signal.SIGKILL)
    os._exit(KILLED_STATUS)


def hold(index: int) -> None:
    """Under a snapshot sweep, wait at point `index` (passed by another's count: the syscall tracer's)."""
    _snapshot(index)


def _snapshot(index: int) -> None:
    """Under a snapshot sweep, wait at point `index` while the sweep copies the world."""
    global _pipes
    folder = os.environ.get(SNAPSHOT)
    if not folder:
        return
    if _pipes is None:
        request = os.open(os.path.join(folder, "request"), os.O_WRONLY)
        _pipes = request, os.open(os.path.join(folder, "answer"), os.O_RDONLY)
    os.write(_pipes[0], f"{index} {os.getpid()}\n".encode())
    if os.read(_pipes[1], 1) != b"k":
        raise RuntimeError("the sweep stopped answering snapshot requests")


def _check_name(name: str) -> None:
    if not name.strip() or "\n" in name or "\r" in name:
        raise ValueError(f"crash point and counter names are one non-empty line, got {name!r}")


def _append(path: str, text: str) -> None:
    """Append `text` and a newline to the log at `path` in one write (its descriptor kept open)."""
    with _logs_lock:  # count() comes here from any thread, without `_lock`
        fd = _logs.get(path)
        if fd is None:
            fd = _logs[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (text + "\n").encode("utf-8"))
