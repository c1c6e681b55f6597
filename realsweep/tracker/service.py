"""The tracker service: a small HTTP/JSON issue tracker on SQLite, in a process of its own.

It is the outside world a swept loop writes to, so it must outlive every crash of the loop:
it runs as its own process (`python -m crashsweep.realsweep.tracker.service`, or `crashsweep tracker
serve`), and its databases are SQLite files in WAL mode whose writes are committed before the
reply is sent (store.py). Its HTTP side (server.py) reads each request whole,
within a timeout, before it locks a space (spaces.py), and answers every request in
JSON, refusals included (request.py). On SIGTERM or Ctrl-C it stops at once: no client
holds a lock, so the only wait is for a write in progress to commit.

Routes (JSON bodies; POSTs may carry an `Idempotency-Key` header):

    POST /issues                  {title, body?, run, call}   -> 201 {number, ...}
    POST /issues/<n>/comments     {body?, run, call}          -> 201 {number, issue, ...}
    GET  /search?q=TEXT           -> {items: [...]}
    GET  /lookup?run=R&call=C     -> {found, record}     "did call C of run R happen?"
    GET  /records                 -> {records: [...]}
    GET  /health                  -> {ok, mode}

Every route may be prefixed by `/spaces/<name>`: each space is a database of its own
(`<root>/<name>.sqlite3`), so that the scenarios of a sweep share one server and never see
each other's records. Without the prefix the space is `default`.

With `--control` it also takes requests on stdin (control.py): the sweeps of one process can
then share one service, its databases moved from one sweep's folder to the next.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from crashsweep.realsweep.tracker import control
from crashsweep.realsweep.tracker.request import MAX_BODY
from crashsweep.realsweep.tracker.server import MAX_CONNECTIONS, REQUEST_TIMEOUT, TrackerServer
from crashsweep.realsweep.tracker.spaces import Spaces

if TYPE_CHECKING:
    import subprocess

MODES = ("keyed", "keyless")
READY = "tracker ready at "
WATCH_EVERY = 0.2
"""Seconds between two looks at the parent's process ID (--parent)."""


def make_server(
    root: Path,
    mode: str,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    quiet: bool = True,
    request_timeout: float = REQUEST_TIMEOUT,
    max_body: int = MAX_BODY,
    max_connections: int = MAX_CONNECTIONS,
) -> TrackerServer:
    """A tracker server bound to (host, port) (port 0: any free port), not yet serving.

    The port is bound before `root` is made: on a port that is taken, nothing is left on disk.
    An OSError about the root carries its `filename`; one about the address does not.
    """
    if mode not in MODES:
        raise ValueError(f"tracker mode {mode!r}: expected one of {', '.join(MODES)}")
    spaces = Spaces(root, honours_keys=mode == "keyed")
    server = TrackerServer(
        (host, port),
        spaces,
        mode,
        quiet=quiet,
        request_timeout=request_timeout,
        max_body=max_body,
        max_connections=max_connections,
    )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        server.server_close()
        raise
    return server


def serve(server: TrackerServer) -> None:
    """Serve until Ctrl-C or SIGTERM, then close every database once the requests using it are done."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already: a second signal must not cut the close
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        server.server_close()
        server.spaces.close()


def package_pythonpath(env: dict[str, str] | None = None) -> str:
    """PYTHONPATH for a child process that must import this package (and spec/) without site.

    That is the folder that holds this module's top-level package, as it was imported: not
    resolved, as in a checkout the installed names are links (crashsweep/realsweep -> ../realsweep).
    """
    depth = len((__package__ or "").split("."))
    source = str(Path(__file__).absolute().parents[depth])
    existing = (env if env is not None else os.environ).get("PYTHONPATH")
    return source + os.pathsep + existing if existing else source


class ServiceProcess:
    """The tracker service started as a child process; a context manager that stops it.

    With `control`, the service takes requests on its stdin (control.py): `release` closes its
    databases and `root_at` moves them to another folder, so that one service can serve the
    sweeps of a process in turn (crashsweep.realsweep.process.trackers); `key` says which
    services are alike.
    """

    def __init__(self, root: Path, mode: str, *, python: str = sys.executable, control: bool = False) -> None:
        self.root, self.mode, self.python, self.control = root, mode, python, control
        self.key = self.key_of(python, mode)
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    @staticmethod
    def key_of(python: str, mode: str) -> tuple[str, str, str]:
        """What services alike share: the interpreter and the mode (the folder moves: `root_at`)."""
        return ("tracker service", python, mode)

    def __enter__(self) -> ServiceProcess:
        import subprocess  # the parent's side only: the service itself, which imports this module, never needs it

        env = {**os.environ, "PYTHONPATH": package_pythonpath()}
        command = [
            self.python,
            "-S",  # no site-packages: the service imports only the standard library and this package
            "-m",
            "crashsweep.realsweep.tracker.service",
            "--root",
            str(self.root),
            "--mode",
            self.mode,
            "--parent",  # the service stops when this process dies, even by SIGKILL (watch_parent)
            str(os.getpid()),
        ]
        if self.control:
            command.append("--control")
        stdin = subprocess.PIPE if self.control else None
        self._process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, text=True, env=env)
        assert self._process.stdout is not None
        try:
            line = self._process.stdout.readline()
        except BaseException:  # Ctrl-C while it starts: stop it, or it outlives the sweep (holding its stderr)
            self.__exit__(None, None, None)
            raise
        if not line.startswith(READY):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the tracker service did not start (it printed {line!r})")
        self.url = line[len(READY) :].strip()
        return self

    def __exit__(self, *exc: object) -> None:
        import subprocess

        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # a request the service died before reading: its pipe is broken
                    pipe.close()

    def close(self) -> None:
        """Stop the service (as leaving its `with` block does)."""
        self.__exit__(None, None, None)

    def release(self) -> bool:
        """Close the service's databases (control); False if it did not answer so (it is then of no more use)."""
        return self._request(control.RELEASE) == control.RELEASED

    def root_at(self, root: Path) -> bool:
        """Keep the databases in `root` from now on (control); False if the service could not."""
        if self._request(f"{control.ROOT} {root}") != control.ROOTED:
            return False
        self.root = root
        return True

    def _request(self, line: str) -> str:
        """Send one request of the control channel; its answer ("" if the service is gone)."""
        process = self._process
        if process is None or process.stdin is None or process.stdout is None or "\n" in line:
            return ""
        try:
            process.stdin.write(line + "\n")
            process.stdin.flush()
            return process.stdout.readline().strip()
        except OSError:  # a broken pipe: the service is gone
            return ""

    @property
    def pid(self) -> int:
        """The service's process ID."""
        assert self._process is not None, "the service is not running"
        return self._process.pid

    def space_url(self, name: str) -> str:
        """The base URL of space `name`."""
        return f"{self.url}/spaces/{name}"


def watch_parent(parent: int, every: float = WATCH_EVERY) -> threading.Thread:
    """A daemon thread that stops the service (SIGTERM to itself: `serve` closes every database) once `parent` is gone.

    A sweep killed by SIGKILL cannot stop its service, which would serve on, holding the
    caller's pipes. PR_SET_PDEATHSIG would fire when the thread that started the service
    ends, and a sweep may start it from a thread that ends first; the parent's process ID
    changes only when the process is gone.
    """

    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(every)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=watch, name="parent-watch", daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> int:
    """`python -m crashsweep.realsweep.tracker.service --root DIR [--mode keyed] [--port 0]`; prints its URL when ready."""  # noqa: E501
    parser = argparse.ArgumentParser(prog="python -m crashsweep.realsweep.tracker.service", description=main.__doc__)
    parser.add_argument("--root", type=Path, required=True, help="folder of the databases, one per space")
    parser.add_argument("--mode", choices=MODES, default="keyed")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=REQUEST_TIMEOUT, help="seconds a client has to send")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    parser.add_argument("--parent", type=int, help="stop when the process of this ID is gone")
    parser.add_argument("--control", action="store_true", help="take requests on stdin (control.py)")
    args = parser.parse_args(argv)
    try:
        server = _start(parser, args)
    except KeyboardInterrupt:  # Ctrl-C while it starts reaches it too: its parent stops it and says so
        return 130
    except BrokenPipeError:  # no one reads its URL (the parent gone, or stopped by Ctrl-C): nothing to say
        _quiet_stdout()
        return 1
    if isinstance(server, int):
        return server
    if args.control:
        control.listen(server)
    serve(server)
    return 0


def _start(parser: argparse.ArgumentParser, args: argparse.Namespace) -> TrackerServer | int:
    """The server bound, its URL printed on stdout (READY); else the exit status (1: no parent, 2: said on stderr)."""
    if args.parent is not None:
        if os.getppid() != args.parent:
            return 1  # the parent died while this process started
        watch_parent(args.parent)
    if not args.timeout > 0:
        parser.error(f"--timeout {args.timeout}: expected a number of seconds above 0")
    try:
        server = make_server(
            args.root, args.mode, args.host, args.port, quiet=not args.verbose, request_timeout=args.timeout
        )
    except OSError as error:
        print(f"tracker: cannot serve {args.root} on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2
    try:
        print(READY + server.url, flush=True)
    except BaseException:
        server.server_close()
        server.spaces.close()
        raise
    return server


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: a flush at exit into a pipe no one reads would print its own BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
