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
request {"id": N, "argv": [...], "cwd": DIR, "env": {...}, "output": FILE}; replies
{"id": N, "pid": P} once forked, then {"id": N, "status": S} once reaped (the exit status,
-9 for a process killed by SIGKILL).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

WARM = "zygote_warm"
"""The optional function of the entry point's module the zygote calls with each request's argv before forking."""


class ZygoteError(RuntimeError):
    """The zygote could not start, or died."""


class Zygote:
    """A running zygote of entry point `entry` ("module:function"), driven from the parent's threads."""

    def __init__(
        self, entry: str, env: Mapping[str, str], log: Path, *, python: str = sys.executable, flags: Sequence[str] = ()
    ) -> None:
        """`flags`: the interpreter's options (as `-S`: no site-packages) the program's own command line gives it."""
        self.entry, self.log = entry, log
        with open(log, "wb") as errors:
            self._process = subprocess.Popen(
                [python, *flags, "-m", "crashsweep.realsweep.zygote", entry],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=dict(env),
            )
        self._ids = itertools.count(1)
        self._waiting: dict[int, queue.SimpleQueue[dict[str, Any] | None]] = {}
        self._lock = threading.Lock()  # one request written at a time; the table of waiting requests
        self._dead = False
        self._reader: threading.Thread | None = None
        try:
            ready = self._first_line(60.0)
            if ready.get("ready") is not True:
                raise ZygoteError(f"{entry}: the fork server did not start: {ready}")
        except (ZygoteError, TimeoutError):
            self.close()
            raise
        self._reader = threading.Thread(target=self._read, name=f"zygote-{self._process.pid}", daemon=True)
        self._reader.start()

    def run(self, argv: list[str], cwd: Path, env: Mapping[str, str], output: Path, timeout: float) -> int:
        """Fork one process with `argv` as its sys.argv[1:]; its exit status. TimeoutError after `timeout`.

        Any thread may call it; the processes of several calls run at the same time.
        """
        replies: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        with self._lock:
            if self._dead:
                raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}")
            number = next(self._ids)
            self._waiting[number] = replies
            request = {"id": number, "argv": argv, "cwd": str(cwd), "env": dict(env), "output": str(output)}
            assert self._process.stdin is not None
            try:
                self._process.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
                self._process.stdin.flush()
            except BrokenPipeError:
                self._waiting.pop(number, None)
                raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}") from None
        try:
            pid = int(self._reply(replies, 30.0)["pid"])
            try:
                return int(self._reply(replies, timeout)["status"])
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._reply(replies, 30.0)
                raise
        finally:
            with self._lock:
                self._waiting.pop(number, None)

    @property
    def pid(self) -> int:
        """The zygote's process ID."""
        return self._process.pid

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
        self._process.poll()
        lines = [line for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"exit status {self._process.returncode}"


def _child(function: Any, request: dict[str, Any], inherited: Sequence[int]) -> None:
    """In the forked child: become the requested process, run the entry point, exit. Never returns."""
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in inherited:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        _become(request["env"])
        sys.argv = [function.__module__, *request["argv"]]
        from crashsweep.realsweep import crashpoint

        crashpoint.reset()
        result = function()
        status = result if isinstance(result, int) else 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _become(env: dict[str, str]) -> None:
    """Make the process's environment exactly `env`, changing only the variables that differ.

    The zygote's own environment is the sweep's, and a request's differs from it in a few
    variables (its work directory, its logs, its tracker space): each variable set or unset
    writes to memory the child shares with the zygote until then, which the kernel must copy
    page by page, so only those few are touched.
    """
    for name in [name for name in os.environ if name not in env]:
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


class _Server:
    """The zygote's side: fork on each request read from stdin, reap on each SIGCHLD, reply on stdout."""

    def __init__(self, function: Any, replies: int) -> None:
        self.function, self.replies = function, replies
        self.warm = getattr(sys.modules.get(function.__module__), WARM, None)
        self.running: dict[int, int] = {}  # pid -> request id
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a handler, so that the wakeup fd is written
        signal.set_wakeup_fd(self.wake_write)

    def reply(self, data: dict[str, Any]) -> None:
        os.write(self.replies, (json.dumps(data) + "\n").encode("utf-8"))

    def serve(self) -> None:
        """Until stdin closes and every child has been reaped."""
        stdin, buffer, open_ = sys.stdin.fileno(), b"", True
        while open_ or self.running:
            readable = select.select([stdin, self.wake_read] if open_ else [self.wake_read], [], [])[0]
            if self.wake_read in readable:
                while True:
                    try:
                        if not os.read(self.wake_read, 4096):
                            break
                    except BlockingIOError:
                        break
            self.reap()
            if stdin in readable:
                chunk = os.read(stdin, 1 << 16)
                open_ = bool(chunk)
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self.fork(json.loads(line))

    def fork(self, request: dict[str, Any]) -> None:
        if self.warm is not None:
            with contextlib.suppress(Exception, SystemExit):  # the child meets it again, and reports it
                self.warm(list(request["argv"]))
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(self.function, request, (self.replies, self.wake_read, self.wake_write))
        self.running[pid] = request["id"]
        self.reply({"id": request["id"], "pid": pid})

    def reap(self) -> None:
        """Reply the status of every child that has ended."""
        while self.running:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            number = self.running.pop(pid, None)
            if number is not None:
                self.reply({"id": number, "status": os.waitstatus_to_exitcode(wait_status)})


def main(argv: list[str] | None = None) -> int:
    """Serve fork requests for the entry point named by the one argument, until stdin closes."""
    from crashsweep.realsweep.entry import load

    args = sys.argv[1:] if argv is None else argv
    function = load(args[0])
    replies = os.dup(1)
    os.dup2(2, 1)  # a stray print of the zygote's must not break the protocol
    server = _Server(function, replies)
    gc.freeze()  # what the zygote holds is never collected in a child: its pages stay shared, not copied
    server.reply({"ready": True})
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
