"""The tracker's HTTP side: a threading server whose handler reads a request whole, then runs it.

One thread per connection (the standard library's ThreadingHTTPServer: enough for a loopback
service of a few thousand small requests, and no dependency). A connection is closed after
its answer unless the client asked to keep it (`Connection: keep-alive`, as a swept process
of the reference loop does for its dozen requests: one connection and one thread per process
instead of one per request), and always after an error answer, whose request may have left
unread bytes behind; a kept connection that stays idle for the timeout is closed. A request is read and checked
whole (tracker_request.py) before its space's lock is taken, so a client that stalls holds
only its own thread, and only until the timeout: every read and write of a connection has
one, and the body must arrive within it in all (else 408). Every answer is JSON, the
standard library's own refusals included (a bad request line, an unknown method: 501). A
request cut off by the client's death is what it is: not applied if the body was not whole,
applied and committed if it was, with the reply lost; neither leaves a traceback. Anything
else that fails is one line on stderr and a 500.

A request that carries a fencing token (`Fencing-Token`) older than the newest lease its space
granted (`POST /lease`) is refused with 409 before it is run (spec/FAULTS.md 7.1).

A fault the sweep injects (spec/FAULTS.md section 2, `lost-reply`): a write that carries the
header `Crashsweep-Lose-Reply: true` is applied and committed as usual, and then its reply is
lost: the connection is closed without an answer, as when a network drops it. Only writes
that succeeded lose their reply; a refused request is answered as usual.
"""

from __future__ import annotations

import json
import queue
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crashsweep.realsweep import tracker_request
from crashsweep.realsweep.tracker_client import FENCED, FENCING_HEADER, LOSE_REPLY_HEADER
from crashsweep.realsweep.tracker_request import MAX_BODY, HttpError, Route
from crashsweep.realsweep.tracker_spaces import Spaces, SpacesClosed
from crashsweep.realsweep.tracker_store import Answer, Store

REQUEST_TIMEOUT = 10.0
"""Seconds a client has to send its request (headers: per read; body: in all) before it gets 408."""
DRAIN_SECONDS = 2.0
"""After an answer sent before the body was read: how long the rest is read and dropped."""


class TrackerServer(ThreadingHTTPServer):
    """The HTTP server; its handler reaches the spaces, the timeout and the body limit through it."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        spaces: Spaces,
        mode: str,
        *,
        quiet: bool = True,
        request_timeout: float = REQUEST_TIMEOUT,
        max_body: int = MAX_BODY,
    ) -> None:
        super().__init__(address, Handler)
        self.spaces, self.mode, self.quiet = spaces, mode, quiet
        self.request_timeout, self.max_body = request_timeout, max_body
        self._handed: queue.SimpleQueue[tuple[Any, Any]] = queue.SimpleQueue()
        self._idle = 0  # connection threads waiting for a connection (each takes one from `_handed`)
        self._idle_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the connection to a connection thread that is idle, or start one for it.

        The standard library starts a thread per connection and waits until it runs; a sweep
        opens a connection per process, thousands of them. A connection thread serves its
        connection to the end, then waits for another. Idle threads are daemons: a stopping
        service does not wait for them (nor for the clients of kept connections).
        """
        with self._idle_lock:
            if self._idle:
                self._idle -= 1
                self._handed.put((request, client_address))
                return
        threading.Thread(target=self._serve_connections, args=(request, client_address), daemon=True).start()

    def _serve_connections(self, request: Any, client_address: Any) -> None:
        """A connection thread: serve one connection to its end, then wait for the next one handed over."""
        while True:
            self.process_request_thread(request, client_address)
            with self._idle_lock:
                self._idle += 1
            request, client_address = self._handed.get()

    @property
    def url(self) -> str:
        """The base URL of the default space."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed outside a request: quiet if the client went away, else one line."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            _report(f"a connection from {client_address[0]} failed: {type(error).__name__}: {error}")


class Handler(BaseHTTPRequestHandler):
    """One request: read it whole, then run it on its space's store under its lock, then answer in JSON."""

    server: TrackerServer
    protocol_version = "HTTP/1.1"  # so that a connection can be kept; see parse_request
    wbufsize = -1  # an answer (head and body) leaves in one write, when `_send` flushes it

    def setup(self) -> None:
        """Give every read and write on the connection the server's timeout; send each write at once.

        An answer is one write (`wbufsize`); on a kept connection Nagle's algorithm could still
        hold a write until the client acknowledges the last one, which a client delays by up
        to 40 ms (delayed ACK): TCP_NODELAY sends it at once.
        """
        super().setup()
        self.connection.settimeout(self.server.request_timeout)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def parse_request(self) -> bool:
        """The standard library's parsing, then: keep the connection only when the client asked to."""
        parsed = super().parse_request()
        headers = getattr(self, "headers", None)  # unset when the request line itself was refused
        if headers is None or headers.get("Connection", "").lower() != "keep-alive":
            self.close_connection = True
        return parsed

    def do_GET(self) -> None:
        """Reads: search, lookup, records, health."""
        self._handle()

    def do_POST(self) -> None:
        """Writes: create an issue, comment."""
        self._handle()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (bad request line, unknown method...) as JSON too."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # a request line it could not read: answer in HTTP/1.0 all the same
            self.request_version = "HTTP/1.0"
        self._send(code, {"error": message or self.responses.get(code, ("error",))[0]})

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet unless the server was started verbose."""
        if not self.server.quiet:
            super().log_message(format, *args)

    def _handle(self) -> None:
        self._unread = self.command == "POST"
        headers: dict[str, str] = {}
        try:
            status, answer = self._answer()
        except HttpError as error:
            status, answer, headers = error.status, {"error": error.message}, error.headers
        except TimeoutError:
            self._unread = False  # a stalled client: answer, and close without waiting for it
            status, answer = 408, {"error": f"the request was not received within {self.server.request_timeout} s"}
        except ConnectionError:  # the client went away before its request was whole: nothing was applied
            self.close_connection = True
            return
        except SpacesClosed as error:
            status, answer = 503, {"error": str(error)}
        except Exception as error:
            _report(f"internal error on {self.command} {self.path[:80]!r}: {type(error).__name__}: {error}")
            status, answer = 500, {"error": "internal error: see the tracker's log"}
        if self.command == "POST" and status < 400 and self.headers.get(LOSE_REPLY_HEADER) == "true":
            self.close_connection = True  # applied and committed; the reply is lost on the way
            return
        self._send(status, answer, headers)
        if self._unread:
            self._drain()

    def _answer(self) -> Answer:
        """Route, read and check the request whole; only then take the space's lock and run it."""
        route = tracker_request.route(self.command, self.path)
        if route.name == "health":
            return 200, {"ok": True, "mode": self.server.mode}
        body = self._body() if route.method == "POST" else None
        args = tracker_request.arguments(route, body)
        key = self.headers.get("Idempotency-Key") if route.method == "POST" else None
        token = tracker_request.fencing_token(self.headers.get(FENCING_HEADER))
        with self.server.spaces.use(route.space, create=route.method == "POST") as store:
            if token is not None and store is not None and store.fenced(token):
                return FENCED, {"error": f"fencing token {token} is older than the newest lease"}
            return _run(store, route, args, key)

    def _body(self) -> dict[str, Any]:
        """The POST's body as a JSON object, read whole within the request timeout."""
        length = tracker_request.content_length(
            self.headers.get_all("Content-Length") or [], self.headers.get("Transfer-Encoding"), self.server.max_body
        )
        deadline = time.monotonic() + self.server.request_timeout
        chunks: list[bytes] = []
        missing = length
        while missing:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the body did not arrive in time")
            self.connection.settimeout(left)
            chunk = self.rfile.read1(min(missing, 1 << 16))
            if not chunk:
                raise ConnectionAbortedError("the client closed the connection in the middle of the body")
            chunks.append(chunk)
            missing -= len(chunk)
        self.connection.settimeout(self.server.request_timeout)  # the whole timeout again for the reply
        self._unread = False
        return tracker_request.json_object(b"".join(chunks))

    def _send(self, status: int, answer: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        """Send the answer; a client that went away meanwhile simply does not get it."""
        data = json.dumps(answer).encode("utf-8")
        try:
            if status >= 400:  # an error may leave a body unread: the connection cannot carry another request
                self.close_connection = True
            self.send_response(status)
            self.send_header("Connection", "close" if self.close_connection else "keep-alive")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if answer.get("replayed"):
                self.send_header("Idempotent-Replayed", "true")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()
        except (ConnectionError, TimeoutError):  # what was committed stays committed; the reply is lost
            self.close_connection = True

    def _drain(self) -> None:
        """After answering before the body was read, read and drop what the client still sends, briefly.

        Closing a socket that holds unread bytes resets the connection, and the reset can destroy
        the answer before the client has read it.
        """
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + DRAIN_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(1 << 16):
                    break
        except OSError:
            pass


def _run(store: Store | None, route: Route, args: dict[str, Any], key: str | None) -> Answer:
    """Run the checked request on `store` (None: a space with no database yet, read as empty)."""
    if route.name == "search":
        return 200, {"items": store.search(**args) if store else []}
    if route.name == "lookup":
        record = store.lookup(**args) if store else None
        return 200, {"found": record is not None, "record": record}
    if route.name == "records":
        return 200, {"records": store.records() if store else []}
    assert store is not None, "a write creates its space"
    if route.name == "lease":
        return store.grant_lease()
    if route.name == "issue":
        return store.create_issue(**args, key=key)
    return store.comment(**args, key=key)


def _report(line: str) -> None:
    """One line on stderr for what the service cannot answer by itself (never a traceback)."""
    print(f"tracker: {line}", file=sys.stderr, flush=True)
