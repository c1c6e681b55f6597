"""The tracker's HTTP side: a threading server whose handler reads a request whole, then runs it.

One thread per connection (the standard library's socketserver: enough for a loopback service
of a few thousand small requests, and no dependency), reused from one connection to the next.
The HTTP/1.1 exchange is this package's own: a request's head is read and checked strictly by
head.py (the standard library's http.server parsed every head with the email package,
a large part of the service's time per request), its body by its Content-Length, and each
answer leaves in one write. A connection is closed after its answer unless the client asked to
keep it (`Connection: keep-alive`, as a swept process of the reference loop does for its few
requests: one connection and one thread per process instead of one per request), and always
after an error answer, whose request may have left unread bytes behind; a kept connection that
stays idle for the timeout is closed without an answer. A request is read and checked whole
(request.py) before its space's lock is taken, so a client that stalls holds only its
own thread, and only until the timeout: every write of a connection has one, and the head and
then the body must each arrive within it in all, however slowly they trickle (else 408). At
most `max_connections` are served at once: one more is answered 503 at once and closed.
Every answer is JSON, refusals included (a head
it cannot read: 400, 414, 431 or 505; a method other than GET and POST: 501). A request cut off
by the client's death is what it is: not applied if the body was not whole, applied and
committed if it was, with the reply lost; neither leaves a traceback. Anything else that fails
is one line on stderr and a 500; a verbose service (`quiet=False`) logs one line per answer.

A request that carries a fencing token (`Fencing-Token`) older than the newest lease its space
granted (`POST /lease`) is refused with 409 before it is run (spec/FAULTS.md 7.1). A `Fencing-Token`
or `Idempotency-Key` header given twice, or an empty key, is refused with 400 (request.py).

A fault the sweep injects (spec/FAULTS.md section 2, `lost-reply`): a write that carries the
header `Crashsweep-Lose-Reply: true` is applied and committed as usual, and then its reply is
lost: the connection is closed without an answer, as when a network drops it. Only writes
that succeeded lose their reply; a refused request is answered as usual.
"""

from __future__ import annotations

import io
import json
import queue
import socket
import socketserver
import sys
import threading
import time
from http import HTTPStatus
from typing import Any

from crashsweep.realsweep.tracker import request as tracker_request
from crashsweep.realsweep.tracker.head import read_head
from crashsweep.realsweep.tracker.request import MAX_BODY, HttpError
from crashsweep.realsweep.tracker.routes import LOSE, Call
from crashsweep.realsweep.tracker.spaces import Spaces, SpacesClosed
from crashsweep.realsweep.tracker.store import Answer
from crashsweep.realsweep.tracker.wire import (
    APPROVAL_HEADER,
    FAIL_FIRST_HEADER,
    FENCED,
    FENCING_HEADER,
    LOSE_REPLY_HEADER,
)

REQUEST_TIMEOUT = 10.0
"""Seconds a client has to send its request (headers: per read; body: in all) before it gets 408."""
DRAIN_SECONDS = 2.0
"""After an answer sent before the body was read: how long the rest is read and dropped."""
MAX_CONNECTIONS = 512
"""The most connections served at once (a thread each); one more is answered 503 and closed at once."""


class TrackerServer(socketserver.ThreadingTCPServer):
    """The HTTP server; its handler reaches the spaces, the timeout and the body limit through it."""

    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        spaces: Spaces,
        mode: str,
        *,
        quiet: bool = True,
        request_timeout: float = REQUEST_TIMEOUT,
        max_body: int = MAX_BODY,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        # Before the socket is bound: a bind that fails calls server_close, which reads them.
        self.open_connections = 0  # connections being served (each by a connection thread)
        self._handed: queue.SimpleQueue[tuple[Any, Any] | None] = queue.SimpleQueue()  # None: end
        self._idle = 0  # connection threads waiting for a connection (each takes one from `_handed`)
        self._closed = False  # server_close was called: a connection thread ends after its connection
        self._idle_lock = threading.Lock()
        super().__init__(address, Handler)
        self.spaces, self.mode, self.quiet = spaces, mode, quiet
        self.request_timeout, self.max_body, self.max_connections = request_timeout, max_body, max_connections

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the connection to a connection thread that is idle, or start one for it.

        The standard library starts a thread per connection and waits until it runs; a sweep
        opens a connection per process, thousands of them. A connection thread serves its
        connection to the end, then waits for another. Idle threads are daemons: a stopping
        service does not wait for them (nor for the clients of kept connections). Beyond
        `max_connections` open at once, a connection is answered 503 and closed at once.
        """
        with self._idle_lock:
            if self.open_connections >= self.max_connections:
                _refuse(request, f"{self.open_connections} connections are open (the most): try again shortly")
                return
            self.open_connections += 1
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
                self.open_connections -= 1
                if self._closed:
                    return
                self._idle += 1
            handed = self._handed.get()
            if handed is None:  # server_close: no more connections
                return
            request, client_address = handed

    def server_close(self) -> None:
        """Close the listening socket, and end the connection threads that wait for a connection.

        A server made in a process that goes on (a test, `crashsweep tracker serve`) leaves no
        thread behind; one still serving a connection ends once that connection does.
        """
        super().server_close()
        with self._idle_lock:
            self._closed = True
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._handed.put(None)

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


class Handler(socketserver.BaseRequestHandler):
    """One connection: each request's head read (head.py), then the request whole, run, answered in JSON."""

    server: TrackerServer
    request: socket.socket

    def handle(self) -> None:
        """Serve the connection's requests until one is not to be kept, the client leaves or stays idle too long.

        Every read and write has the server's timeout; TCP_NODELAY sends each answer (one
        write) at once: on a kept connection Nagle's algorithm could hold it until the client
        acknowledges the last one, which a client delays by up to 40 ms (delayed ACK).
        """
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timed = _TimedReader(self.request)
        self.rfile = io.BufferedReader(self.timed)
        try:
            while self._one():
                pass
        finally:
            self.rfile.close()

    def _one(self) -> bool:
        """Read and answer one request; whether the connection carries another."""
        self.command, self.path = "", ""
        self.timed.start(self.server.request_timeout)  # the whole head within the timeout, however it trickles
        try:
            head = read_head(self.rfile)
        except HttpError as error:  # a head it cannot read: answer, and close (what follows is not a request)
            self._send(error.status, {"error": error.message}, error.headers, keep=False)
            return False
        except TimeoutError:  # idle too long: nothing to answer; a head begun and not ended: 408
            if self.timed.received:
                self._send(
                    408,
                    {"error": f"the request's head was not received within {self.server.request_timeout} s"},
                    keep=False,
                )
            return False
        except ConnectionError:  # gone: nothing to answer
            return False
        if head is None:
            return False
        self.timed.start(None)
        self.request.settimeout(self.server.request_timeout)
        self.head, self.command, self.path = head, head.method, head.target
        keep = (head.get("Connection") or "").lower() == "keep-alive"
        if head.method not in ("GET", "POST"):
            self._send(501, {"error": f"Unsupported method ({head.method!r})"}, keep=False)
            return False
        return self._handle(keep)

    def _handle(self, keep: bool) -> bool:
        """Answer the request whose head was read; whether the connection carries another."""
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
            return False
        except SpacesClosed as error:
            status, answer = 503, {"error": str(error)}
        except Exception as error:
            _report(f"internal error on {self.command} {self.path[:80]!r}: {type(error).__name__}: {error}")
            status, answer = 500, {"error": "internal error: see the tracker's log"}
        lost = self.head.get(LOSE_REPLY_HEADER) == "true" or answer.pop(LOSE, False)
        if self.command == "POST" and status < 400 and lost:
            return False  # applied and committed; the reply is lost on the way
        keep = keep and status < 400  # an error may leave a body unread: the connection cannot carry another
        sent = self._send(status, answer, headers, keep=keep)
        if self._unread:
            self._drain()
            return False
        return keep and sent

    def _answer(self) -> Answer:
        """Route, read and check the request whole; only then take the space's lock and run its handler.

        The route's table entry (routes.py) names the fields read and the handler run; one that
        is not `in_space` (the health check) is answered at once, without touching a space.
        """
        route = tracker_request.route(self.command, self.path)
        endpoint = route.endpoint
        if not endpoint.in_space:
            return endpoint.run(Call(None, {}, None, self.server.mode))
        body = self._body() if route.method == "POST" else None
        args = tracker_request.arguments(route, body)
        key = tracker_request.idempotency_key(self.head.get_all("Idempotency-Key")) if route.method == "POST" else None
        token = tracker_request.fencing_token(
            tracker_request.single_header(self.head.get_all(FENCING_HEADER), FENCING_HEADER)
        )
        with self.server.spaces.use(route.space, create=route.method == "POST") as store:
            if token is not None and store is not None and store.fenced(token):
                return FENCED, {"error": f"fencing token {token} is older than the newest lease"}
            fail_first = self.head.get(FAIL_FIRST_HEADER) == "true"
            approval = tracker_request.single_header(self.head.get_all(APPROVAL_HEADER), APPROVAL_HEADER)
            return endpoint.run(Call(store, args, key, self.server.mode, fail_first, approval))

    def _body(self) -> dict[str, Any]:
        """The POST's body as a JSON object, read whole within the request timeout."""
        length = tracker_request.content_length(
            self.head.get_all("Content-Length"), self.head.get("Transfer-Encoding"), self.server.max_body
        )
        self.timed.start(self.server.request_timeout)  # the whole body within the timeout
        chunks: list[bytes] = []
        missing = length
        while missing:
            chunk = self.rfile.read1(min(missing, 1 << 16))
            if not chunk:
                raise ConnectionAbortedError("the client closed the connection in the middle of the body")
            chunks.append(chunk)
            missing -= len(chunk)
        self.timed.start(None)
        self.request.settimeout(self.server.request_timeout)  # the whole timeout again for the reply
        self._unread = False
        return tracker_request.json_object(b"".join(chunks))

    def _send(self, status: int, answer: dict[str, Any], headers: dict[str, str] | None = None, *, keep: bool) -> bool:
        """Send the answer in one write; whether it went (a client that went away meanwhile does not get it)."""
        data = json.dumps(answer).encode("utf-8")
        lines = [f"HTTP/1.1 {status} {_phrase(status)}", f"Connection: {'keep-alive' if keep else 'close'}"]
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if answer.get("replayed"):
            lines.append("Idempotent-Replayed: true")
        if not self.server.quiet:
            _report(f"{self.client_address[0]} {self.command or '-'} {self.path[:80] or '-'} {status}")
        try:
            self.request.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
        except (ConnectionError, TimeoutError):  # what was committed stays committed; the reply is lost
            return False
        return True

    def _drain(self) -> None:
        """After answering before the body was read, read and drop what the client still sends, briefly.

        Closing a socket that holds unread bytes resets the connection, and the reset can destroy
        the answer before the client has read it.
        """
        try:
            self.request.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + DRAIN_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                self.request.settimeout(left)
                if not self.request.recv(1 << 16):
                    break
        except OSError:
            pass


class _TimedReader(io.RawIOBase):
    """A connection's reading side with a deadline for a whole head or body, not only for each read.

    A socket's timeout bounds each read: a client that sends a byte every few seconds would
    hold its connection (and its thread) for ever. Every read here waits only for what is
    left until the deadline, then raises TimeoutError; `received` tells whether anything came.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline: float | None = None
        self.received = 0

    def start(self, seconds: float | None) -> None:
        """Start a deadline `seconds` from now (None: each read waits the socket's own timeout)."""
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.received = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the deadline passed")
            self.sock.settimeout(left)
        count = self.sock.recv_into(buffer)
        self.received += count
        return count


def _refuse(sock: socket.socket, message: str) -> None:
    """Answer a connection 503 (JSON) without reading it, and close it; never blocks."""
    data = json.dumps({"error": message}).encode("utf-8")
    lines = ["HTTP/1.1 503 Service Unavailable", "Connection: close", "Content-Type: application/json"]
    head = "\r\n".join([*lines, f"Content-Length: {len(data)}", "", ""])
    try:
        sock.setblocking(False)
        sock.send(head.encode("latin-1") + data)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        sock.close()


def _phrase(status: int) -> str:
    """The reason phrase of `status` ("OK", "Not Found", ...)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _report(line: str) -> None:
    """One line on stderr for what the service cannot answer by itself (never a traceback)."""
    print(f"tracker: {line}", file=sys.stderr, flush=True)
