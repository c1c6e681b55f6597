"""The tracker service: a small HTTP/JSON issue tracker on SQLite, in a process of its own.

It is the outside world a swept loop writes to, so it must outlive every crash of the loop:
it runs as its own process (`python -m realsweep.tracker_service`, or `crashsweep tracker
serve`), and its databases are SQLite files in WAL mode whose writes are committed before the
reply is sent (tracker_store.py). The standard library's ThreadingHTTPServer is enough for a
loopback service that answers a few thousand small requests, and adds no dependency to the
package; sqlite3 is likewise built in.

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
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from realsweep.tracker_store import Answer, Store

MODES = ("keyed", "keyless")
DEFAULT_SPACE = "default"
READY = "tracker ready at "
_SPACE = re.compile(r"^/spaces/([A-Za-z0-9][A-Za-z0-9_.-]{0,99})(/.*)$")
_COMMENTS = re.compile(r"^/issues/(\d+)/comments$")


class Spaces:
    """The open databases, one per space, at most `limit` open at once (least recently used closed)."""

    def __init__(self, root: Path, *, honours_keys: bool, limit: int = 32) -> None:
        self.root = root
        self.honours_keys = honours_keys
        self.limit = limit
        self._open: OrderedDict[str, Store] = OrderedDict()
        self._lock = threading.Lock()

    @contextmanager
    def use(self, name: str) -> Iterator[Store]:
        """The store of space `name`, held for the caller alone."""
        while True:
            victims: list[Store] = []
            with self._lock:
                store = self._open.get(name)
                if store is None:
                    store = Store(self.root / f"{name}.sqlite3", honours_keys=self.honours_keys)
                    self._open[name] = store
                    while len(self._open) > self.limit:
                        victims.append(self._open.popitem(last=False)[1])
                self._open.move_to_end(name)
            for victim in victims:
                with victim.lock:
                    victim.close()
            with store.lock:
                if store.closed:  # closed by an eviction between our lookup and our lock: open it again
                    continue
                yield store
                return

    def close(self) -> None:
        """Close every open database."""
        with self._lock:
            stores, self._open = list(self._open.values()), OrderedDict()
        for store in stores:
            with store.lock:
                store.close()


class TrackerServer(ThreadingHTTPServer):
    """The HTTP server; its handler reaches the spaces through it."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], spaces: Spaces, mode: str, *, quiet: bool = True) -> None:
        super().__init__(address, Handler)
        self.spaces = spaces
        self.mode = mode
        self.quiet = quiet

    @property
    def url(self) -> str:
        """The base URL of the default space."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class Handler(BaseHTTPRequestHandler):
    """One request: route it, run it on its space's store, send the JSON answer."""

    server: TrackerServer

    def do_GET(self) -> None:
        """Reads: search, lookup, records, health."""
        self._handle("GET")

    def do_POST(self) -> None:
        """Writes: create an issue, comment."""
        self._handle("POST")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet unless the server was started verbose."""
        if not self.server.quiet:
            super().log_message(format, *args)

    def _handle(self, method: str) -> None:
        try:
            status, answer = self._route(method)
        except _BadRequest as error:
            status, answer = 400, {"error": str(error)}
        self._send(status, answer)

    def _route(self, method: str) -> Answer:
        parts = urlsplit(self.path)
        path, space = parts.path, DEFAULT_SPACE
        match = _SPACE.match(path)
        if match:
            space, path = match.group(1), match.group(2)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        if method == "GET" and path == "/health":
            return 200, {"ok": True, "mode": self.server.mode}
        with self.server.spaces.use(space) as store:
            if method == "GET" and path == "/search":
                return 200, {"items": store.search(query.get("q", ""))}
            if method == "GET" and path == "/lookup":
                record = store.lookup(_required(query, "run"), _required(query, "call"))
                return 200, {"found": record is not None, "record": record}
            if method == "GET" and path == "/records":
                return 200, {"records": store.records()}
            key = self.headers.get("Idempotency-Key") if method == "POST" else None
            if method == "POST" and path == "/issues":
                body = self._json()
                return store.create_issue(
                    _text(body, "title"), _text(body, "body", ""), _text(body, "run"), _text(body, "call"), key
                )
            comments = _COMMENTS.match(path)
            if method == "POST" and comments:
                body = self._json()
                issue = int(comments.group(1))
                return store.comment(issue, _text(body, "body", ""), _text(body, "run"), _text(body, "call"), key)
        return 404, {"error": f"no route {method} {parts.path}"}

    def _json(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            raise _BadRequest("the body is not JSON") from None
        if not isinstance(body, dict):
            raise _BadRequest("the body must be a JSON object")
        return body

    def _send(self, status: int, answer: dict[str, Any]) -> None:
        data = json.dumps(answer).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if answer.get("replayed"):
            self.send_header("Idempotent-Replayed", "true")
        self.end_headers()
        self.wfile.write(data)


class _BadRequest(ValueError):
    """A request the tracker cannot read (400)."""


def _required(query: dict[str, str], name: str) -> str:
    value = query.get(name)
    if not value:
        raise _BadRequest(f"query parameter {name!r} is required")
    return value


def _text(body: dict[str, Any], name: str, default: str | None = None) -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or (default is None and not value):
        raise _BadRequest(f"field {name!r} must be a non-empty string" if default is None else f"{name!r}: a string")
    return value


def make_server(root: Path, mode: str, host: str = "127.0.0.1", port: int = 0, *, quiet: bool = True) -> TrackerServer:
    """A tracker server bound to (host, port) (port 0: any free port), not yet serving."""
    if mode not in MODES:
        raise ValueError(f"tracker mode {mode!r}: expected one of {', '.join(MODES)}")
    root.mkdir(parents=True, exist_ok=True)
    return TrackerServer((host, port), Spaces(root, honours_keys=mode == "keyed"), mode, quiet=quiet)


def serve(server: TrackerServer) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM), then close every database."""
    import signal

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
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
    """The tracker service started as a child process; a context manager that stops it."""

    def __init__(self, root: Path, mode: str, *, python: str = sys.executable) -> None:
        self.root, self.mode, self.python = root, mode, python
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ServiceProcess:
        env = {**os.environ, "PYTHONPATH": package_pythonpath()}
        command = [self.python, "-m", "realsweep.tracker_service", "--root", str(self.root), "--mode", self.mode]
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.startswith(READY):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the tracker service did not start (it printed {line!r})")
        self.url = line[len(READY) :].strip()
        return self

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    @property
    def pid(self) -> int:
        """The service's process ID."""
        assert self._process is not None, "the service is not running"
        return self._process.pid

    def space_url(self, name: str) -> str:
        """The base URL of space `name`."""
        return f"{self.url}/spaces/{name}"


def main(argv: list[str] | None = None) -> int:
    """`python -m realsweep.tracker_service --root DIR [--mode keyed] [--port 0]`; prints its URL when ready."""
    parser = argparse.ArgumentParser(prog="python -m realsweep.tracker_service", description=main.__doc__)
    parser.add_argument("--root", type=Path, required=True, help="folder of the databases, one per space")
    parser.add_argument("--mode", choices=MODES, default="keyed")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    args = parser.parse_args(argv)
    server = make_server(args.root, args.mode, args.host, args.port, quiet=not args.verbose)
    print(READY + server.url, flush=True)
    serve(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
