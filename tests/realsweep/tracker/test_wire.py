"""The client's wire format, against a real socket whose other end sends exactly the bytes a test gives.

`peer` listens on a loopback port and, for each connection, reads each request whole (head,
then Content-Length bytes of body) and answers it with the next of the canned answers; the
requests it read are kept, byte for byte. So a test sees what the client put on the wire and
what it makes of an answer, well-formed or not, without a tracker service in between.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from crashsweep.realsweep.tracker.wire import MAX_HEADERS, Connection, Disconnected, WireError


@dataclass
class Peer:
    """The other end: the port, the requests it read (per connection), how many connections it accepted."""

    port: int
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0


def _read_request(conn: socket.socket) -> bytes | None:
    """One whole request (head and Content-Length body) from `conn`; None at the end of the connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"Content-Length")), 0)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


@contextmanager
def peer(*answers: bytes, close_after: bool = False) -> Iterator[Peer]:
    """A listener answering the requests of its connections with `answers` in turn (closing after each if asked)."""
    listener = socket.create_server(("127.0.0.1", 0))
    found = Peer(listener.getsockname()[1])
    queue = list(answers)

    def serve() -> None:
        while queue:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            found.connections += 1
            with conn:
                while queue and (request := _read_request(conn)) is not None:
                    found.requests.append(request)
                    conn.sendall(queue.pop(0))
                    if close_after:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        listener.close()
        thread.join(timeout=5)


OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'


def test_a_request_leaves_as_its_head_and_body_with_host_and_content_length() -> None:
    """Request line, Host, the caller's headers in order, Content-Length, the body: nothing else."""
    with peer(OK) as end:
        connection = Connection("127.0.0.1", end.port, timeout=5)
        status, headers, data = connection.exchange("POST", "/issues", b'{"a":1}', {"Idempotency-Key": "k"})
        connection.close()
    assert (status, headers["content-type"], data) == (200, "application/json", b'{"ok":true}')
    host = f"127.0.0.1:{end.port}".encode()
    expected = b"POST /issues HTTP/1.1\r\nHost: " + host + b'\r\nIdempotency-Key: k\r\nContent-Length: 7\r\n\r\n{"a":1}'
    assert end.requests == [expected]


def test_a_get_has_no_content_length() -> None:
    with peer(OK) as end:
        connection = Connection("127.0.0.1", end.port, timeout=5)
        connection.exchange("GET", "/health", None, {})
        connection.close()
    assert b"Content-Length" not in end.requests[0]


def test_answers_with_a_length_keep_the_connection_and_connection_close_ends_it() -> None:
    """Two exchanges on one connection; the answer that says `Connection: close` leaves it closed."""
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    with peer(OK, closing) as end:
        connection = Connection("127.0.0.1", end.port, timeout=5)
        connection.exchange("GET", "/health", None, {})
        assert connection.sock is not None
        assert connection.exchange("GET", "/health", None, {})[2] == b"{}"
        assert connection.sock is None
    assert end.connections == 1
    assert len(end.requests) == 2


def test_an_http_1_0_answer_without_keep_alive_ends_the_connection() -> None:
    with peer(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}") as end:
        connection = Connection("127.0.0.1", end.port, timeout=5)
        assert connection.exchange("GET", "/health", None, {}) == (200, {"content-length": "2"}, b"{}")
        assert connection.sock is None


def test_an_answer_without_a_length_is_read_to_the_end_of_the_connection() -> None:
    with peer(b"HTTP/1.1 501 Unsupported\r\nContent-Type: application/json\r\n\r\n{}", close_after=True) as end:
        connection = Connection("127.0.0.1", end.port, timeout=5)
        assert connection.exchange("DELETE", "/issues", None, {})[::2] == (501, b"{}")
        assert connection.sock is None


def test_a_connection_closed_without_an_answer_is_disconnected_a_connection_error() -> None:
    """The lost-reply fault's view from the client: the service closes the connection and sends nothing."""
    listener = socket.create_server(("127.0.0.1", 0))

    def drop() -> None:
        conn, _ = listener.accept()
        _read_request(conn)
        conn.close()

    thread = threading.Thread(target=drop, daemon=True)
    thread.start()
    connection = Connection("127.0.0.1", listener.getsockname()[1], timeout=5)
    with pytest.raises(Disconnected):
        connection.exchange("POST", "/issues", b"{}", {})
    assert issubclass(Disconnected, ConnectionError)
    assert connection.sock is None
    thread.join(timeout=5)
    listener.close()


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "not a header line"),
        (b"HTTP/1.1 200 OK\r\n Content-Length: 0\r\n\r\n", "not a header line"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "expected a Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "expected a whole number"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "after 2 of its 10 bytes"),
        (b"HTTP/1.1 200 OK\r\nContent-Len", "cut off"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_HEADERS + 1) + b"\r\n", f"more than {MAX_HEADERS}"),
    ],
)
def test_an_answer_that_is_not_http_1_as_read_here_is_a_wire_error_and_closes(answer: bytes, message: str) -> None:
    with peer(answer, close_after=True) as end:
        connection = Connection("127.0.0.1", end.port, timeout=5)
        with pytest.raises(WireError, match=message):
            connection.exchange("GET", "/health", None, {})
        assert connection.sock is None


@pytest.mark.parametrize(
    ("method", "target", "headers"),
    [
        ("get", "/health", {}),
        ("GET", "health", {}),
        ("GET", "/a b", {}),
        ("GET", "/a\r\nX: y", {}),
        ("GET", "/health", {"X": "a\r\nInjected: 1"}),
        ("GET", "/health", {"Bad Name": "x"}),
        ("GET", "/health", {"": "x"}),
    ],
)
def test_a_request_that_would_not_be_one_line_per_field_is_refused_before_any_connection(
    method: str, target: str, headers: dict[str, str]
) -> None:
    connection = Connection("127.0.0.1", 9, timeout=5)  # the discard port: never reached
    with pytest.raises(ValueError, match="expected"):
        connection.exchange(method, target, None, headers)
    assert connection.sock is None
