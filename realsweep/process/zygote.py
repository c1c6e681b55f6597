"""A fork server: processes of a Python entry point, forked from a warm process instead of started.

A sweep runs thousands of short processes; starting a Python interpreter and importing the
loop's modules (http.client, json, dataclasses, ...) costs more than the loop's own work. A
zygote pays it once: it imports the entry point's module and nothing else of the program,
then for each request forks a child that runs the entry point in a fresh work directory with
the request's environment. The child is a real process with its own memory, killed for real
at its crash point (SIGKILL); the next process of the scenario is another fresh fork of the
zygote, which never ran the program, so it knows only what it reads from disk and from the
tracker, exactly like a process started from scratch. Only what happens at import time is
shared, which is why the entry point's module should have no effects at import.

One zygote serves every worker thread of a sweep: the requests of several threads are in
flight at once, each child runs alongside the others, and each reply names its request, so
a sweep of N workers pays one interpreter start, not N.

The entry point's module may define `zygote_warm(argv)` (WARM): the zygote calls it with each
request's argv before it forks that request's child, so that work that depends on the command
line alone (parsing it, for the reference loop) is done once in the zygote, whose memory every
child starts from, instead of in each child. Whatever it raises (a command line it refuses) is
ignored: the child does the same work itself and meets the error there.

Protocol on the zygote's stdin and stdout, one JSON object per line:
request {"id": N, "argv": [...], "cwd": DIR, "env": {NAME: VALUE or null}, "output": FILE}
(`env`: how the process's environment differs from the one the zygote was started with: a
value to set, null to remove), with an optional "entry": "module:function" that the child
runs instead of the zygote's entry point (the sweep's check, forked_check.py: where the
program's modules are already imported), without the program's warm-ups, crash points or
hooks; replies
{"id": N, "pid": P} once forked, then {"id": N, "status": S} once reaped (the exit status,
-9 for a process killed by SIGKILL). A request {"id": N, "reuse": FILE or ""} asks whether the zygote
can serve another sweep (zygotes.py); the reply {"id": N, "why": ""} says it can, and its output
goes to FILE from then on, else "why" says why not.

This module is the parent's side (a `Zygote`, driven from the sweep's threads); the zygote
itself runs zygote_server.py, which imports neither this module nor threading.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crashsweep.realsweep.process.output import said
from crashsweep.realsweep.process.zygote_server import REUSE, WARM

__all__ = ["MOMENTARY", "WARM", "Zygote", "ZygoteError"]

MOMENTARY = frozenset({"PYTEST_CURRENT_TEST"})
"""Variables a zygote's key leaves out (pytest's name of the running test: set anew for every test)."""


class ZygoteError(RuntimeError):
    """The zygote could not start, or died."""


class Zygote:
    """A running zygote of entry point `entry` ("module:function"), driven from the parent's threads."""

    def __init__(
        self, entry: str, env: Mapping[str, str], log: Path, *, python: str = sys.executable, flags: Sequence[str] = ()
    ) -> None:
        """`flags`: the interpreter's options (as `-S`: no site-packages) the program's own command line gives it."""
        self.entry, self.log = entry, log
        self._env = dict(env)  # the zygote's own environment, which each request's is told against
        self.key = self.key_of(python, flags, entry, self._env)
        """What another sweep's zygote must match to be served by this one (zygotes.py)."""
        with open(log, "wb") as errors:
            self._process = subprocess.Popen(
                [python, *flags, "-m", "crashsweep.realsweep.process.zygote_server", entry],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=self._env,
            )
        self._ids = itertools.count(1)
        self._waiting: dict[int, queue.SimpleQueue[dict[str, Any] | None]] = {}
        self._lock = threading.Lock()  # one request written at a time; the table of waiting requests
        self._dead = False
        self._reader: threading.Thread | None = None
        self.first_fork: float | None = None
        """When the first child was forked (time.monotonic): the import and `zygote_warm` were paid by then."""
        try:
            ready = self._first_line(60.0)
            if ready.get("ready") is not True:
                raise ZygoteError(f"{entry}: the fork server did not start: {ready}")
        except (ZygoteError, TimeoutError):
            self.close()
            raise
        self._reader = threading.Thread(target=self._read, name=f"zygote-{self._process.pid}", daemon=True)
        self._reader.start()

    @staticmethod
    def key_of(python: str, flags: Sequence[str], entry: str, env: Mapping[str, str]) -> tuple[Any, ...]:
        """A zygote's key: interpreter, options, entry point, work directory (`-m`'s module path) and environment.

        Of the environment, the variables in MOMENTARY are left out: they name the moment, not
        the program (each child still gets its own value, as every variable in which its
        environment differs from the zygote's).
        """
        return python, tuple(flags), entry, os.getcwd(), frozenset(i for i in env.items() if i[0] not in MOMENTARY)

    def run(
        self, argv: list[str], cwd: Path, env: Mapping[str, str], output: Path, timeout: float, entry: str = ""
    ) -> int:
        """Fork one process with `argv` as its sys.argv[1:]; its exit status. TimeoutError after `timeout`.

        Any thread may call it; the processes of several calls run at the same time. `entry`
        ("module:function"): the child runs it instead of the zygote's entry point.
        """
        request: dict[str, Any] = {"argv": argv, "cwd": str(cwd), "env": self._changes(env), "output": str(output)}
        if entry:
            request["entry"] = entry
        number, replies = self._send(request)
        try:
            pid = int(self._reply(replies, 30.0)["pid"])
            if self.first_fork is None:  # a race between two threads moves it by a fork's time at most
                self.first_fork = time.monotonic()
            try:
                return int(self._reply(replies, timeout)["status"])
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._reply(replies, 30.0)
                raise
        finally:
            with self._lock:
                self._waiting.pop(number, None)

    def reuse(self, log: Path | None) -> str:
        """Ask whether the zygote can serve another sweep: "" if it can (its output then goes to `log`), else why not.

        `log` None only asks. A zygote that can is as if just started: its first fork is the
        next sweep's (the setup that sweep paid for is only this question).
        """
        if log is not None:
            log.write_bytes(b"")
        try:
            number, replies = self._send({REUSE: "" if log is None else str(log)})
        except ZygoteError as error:
            return str(error)
        try:
            why = str(self._reply(replies, 30.0)["why"])
        except (ZygoteError, TimeoutError) as error:
            return str(error)
        finally:
            with self._lock:
                self._waiting.pop(number, None)
        if not why and log is not None:
            self.log, self.first_fork = log, None
        return why

    def _send(self, request: dict[str, Any]) -> tuple[int, queue.SimpleQueue[dict[str, Any] | None]]:
        """Send `request` under a new ID; the ID and the queue its replies arrive on. ZygoteError if the zygote died."""
        replies: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        with self._lock:
            if self._dead:
                raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}")
            number = next(self._ids)
            self._waiting[number] = replies
            assert self._process.stdin is not None
            try:
                self._process.stdin.write((json.dumps({"id": number, **request}) + "\n").encode("utf-8"))
                self._process.stdin.flush()
            except (BrokenPipeError, ValueError):  # ValueError: its stdin closed here (halt)
                self._waiting.pop(number, None)
                raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}") from None
        return number, replies

    def _changes(self, env: Mapping[str, str]) -> dict[str, str | None]:
        """How `env` differs from the zygote's environment: the values to set, None for those to remove."""
        changes: dict[str, str | None] = {name: None for name in self._env if name not in env}
        changes.update((name, value) for name, value in env.items() if self._env.get(name) != value)
        return changes

    @property
    def pid(self) -> int:
        """The zygote's process ID."""
        return self._process.pid

    def halt(self) -> None:
        """Kill the processes running (the zygote kills them, and their descendants, when its stdin closes)."""
        with self._lock:
            if self._process.stdin is not None:
                self._process.stdin.close()

    def close(self) -> None:
        """Stop the zygote (it waits for the processes it forked)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._reader is not None:
            self._reader.join()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def _reply(self, replies: queue.SimpleQueue[dict[str, Any] | None], timeout: float) -> dict[str, Any]:
        try:
            reply = replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer from the fork server within {timeout:g} s") from None
        if reply is None:
            raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}")
        return reply

    def _first_line(self, timeout: float) -> dict[str, Any]:
        """The zygote's first line ({"ready": true}), read before the reader thread starts."""
        assert self._process.stdout is not None
        fd = self._process.stdout.fileno()
        if not select.select([fd], [], [], timeout)[0]:
            raise TimeoutError(f"no answer from the fork server within {timeout:g} s")
        line = self._process.stdout.readline()
        if not line:
            raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _read(self) -> None:
        """The reader thread: hand each reply to the request it names; at the end, fail every waiting one."""
        assert self._process.stdout is not None
        for line in self._process.stdout:
            reply = json.loads(line)
            with self._lock:
                waiting = self._waiting.get(reply["id"])
            if waiting is not None:
                waiting.put(reply)
        with self._lock:
            self._dead = True
            waiting_all = list(self._waiting.values())
        for replies in waiting_all:
            replies.put(None)

    def _last_error(self) -> str:
        """What the fork server said of its failure (its exception, output.said), else its exit status."""
        self._process.poll()
        told = said(self.log)
        return told if told != "(no output)" else f"exit status {self._process.returncode}"
