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

Protocol on the zygote's stdin and stdout, one JSON object per line:
request {"argv": [...], "cwd": DIR, "env": {...}, "output": FILE}; replies {"pid": N}, then
{"status": S} (the exit status, -9 for a process killed by SIGKILL).
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class ZygoteError(RuntimeError):
    """The zygote could not start, or died."""


class Zygote:
    """A running zygote of entry point `entry` ("module:function"), driven from the parent."""

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
        self._buffer = b""
        try:
            ready = self._reply(60.0)
            if ready.get("ready") is not True:
                raise ZygoteError(f"{entry}: the fork server did not start: {ready}")
        except (ZygoteError, TimeoutError):
            self.close()
            raise

    def run(self, argv: list[str], cwd: Path, env: Mapping[str, str], output: Path, timeout: float) -> int:
        """Fork one process with `argv` as its sys.argv[1:]; its exit status. TimeoutError after `timeout`."""
        request = {"argv": argv, "cwd": str(cwd), "env": dict(env), "output": str(output)}
        assert self._process.stdin is not None
        try:
            self._process.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
            self._process.stdin.flush()
        except BrokenPipeError:
            raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}") from None
        pid = int(self._reply(30.0)["pid"])
        try:
            return int(self._reply(timeout)["status"])
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            self._reply(30.0)
            raise

    def close(self) -> None:
        """Stop the zygote."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def _reply(self, timeout: float) -> dict[str, Any]:
        assert self._process.stdout is not None
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no answer from the fork server within {timeout:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise ZygoteError(f"{self.entry}: the fork server died: {self._last_error()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _last_error(self) -> str:
        self._process.poll()
        lines = [line for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"exit status {self._process.returncode}"


def _child(function: Any, request: dict[str, Any], replies: int) -> None:
    """In the forked child: become the requested process, run the entry point, exit. Never returns."""
    status = 1
    try:
        os.close(replies)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
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


def main(argv: list[str] | None = None) -> int:
    """Serve fork requests for the entry point named by the one argument, until stdin closes."""
    from crashsweep.realsweep.entry import load

    args = sys.argv[1:] if argv is None else argv
    function = load(args[0])
    replies = os.dup(1)
    os.dup2(2, 1)  # a stray print of the zygote's must not break the protocol

    def reply(data: dict[str, Any]) -> None:
        os.write(replies, (json.dumps(data) + "\n").encode("utf-8"))

    gc.freeze()  # what the zygote holds is never collected in a child: its pages stay shared, not copied
    reply({"ready": True})
    for line in sys.stdin.buffer:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(function, request, replies)
        reply({"pid": pid})
        _, wait_status = os.waitpid(pid, 0)
        reply({"status": os.waitstatus_to_exitcode(wait_status)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
