"""The service's own reading of a request's head: strict, and every malformed head a JSON refusal, never a hang.

The parser is checked on its own (from a byte stream) and through a real service process over
real sockets: each malformed head is answered (400, 414, 431 or 505, in JSON) and the
connection closed at once, without the client closing its end first.
"""

from __future__ import annotations

import io
import json

import pytest

from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.head import MAX_HEADERS, MAX_LINE, Head, header_line, read_head, request_line
from crashsweep.realsweep.tracker.request import HttpError
from tests.realsweep.tracker_process import Service, connect, read_reply


def test_a_head_is_its_request_line_and_headers_in_order() -> None:
    stream = io.BytesIO(b"POST /issues HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nX-A: 1\r\nx-a:  2 \r\n\r\nhello")
    head = read_head(stream)
    assert head == Head("POST", "/issues", "HTTP/1.1", {"host": ["t"], "content-length": ["5"], "x-a": ["1", "2"]})
    assert (head.get("X-A"), head.get_all("X-a"), head.get("missing", "none")) == ("1", ["1", "2"], "none")
    assert stream.read() == b"hello"  # the body is left for the handler


def test_bare_line_feeds_and_http_1_0_are_read_and_an_empty_stream_is_no_request() -> None:
    assert read_head(io.BytesIO(b"GET /health HTTP/1.0\nHost: t\n\n")) == Head(
        "GET", "/health", "HTTP/1.0", {"host": ["t"]}
    )
    assert read_head(io.BytesIO(b"")) is None


@pytest.mark.parametrize(
    ("line", "status", "message"),
    [
        ("GET /records HTTP/x.y", 400, "Bad request version ('HTTP/x.y')"),
        ("GET /records HTTP/2.0", 505, "HTTP version 'HTTP/2.0' is not supported"),
        ("GET /records", 400, "Bad request syntax"),
        ("GET  /records HTTP/1.1", 400, "Bad request syntax"),
        ("GET /a b HTTP/1.1", 400, "Bad request syntax"),
        ("", 400, "Bad request syntax"),
        ("get /records HTTP/1.1", 400, "Bad request method ('get')"),
        ("G3T /records HTTP/1.1", 400, "Bad request method"),
        ("GET records HTTP/1.1", 400, "Bad request target ('records')"),
        ("GET /rec\x01ords HTTP/1.1", 400, "Bad request target"),
    ],
)
def test_a_request_line_that_is_not_method_target_version_is_refused(line: str, status: int, message: str) -> None:
    with pytest.raises(HttpError) as refused:
        request_line(line)
    assert (refused.value.status, message in refused.value.message) == (status, True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (" folded", "a folded header line"),
        ("\tfolded", "a folded header line"),
        ("no colon", "not a header line"),
        (": no name", "not a header line"),
        ("Name : space before the colon", "not a header line"),
        ("Na(me: not a token", "not a header line"),
        ("Name: a\x00nul", "a control character"),
    ],
)
def test_a_header_line_that_is_not_a_token_and_a_value_is_refused(line: str, message: str) -> None:
    with pytest.raises(HttpError) as refused:
        header_line(line)
    assert (refused.value.status, message in refused.value.message) == (400, True)


def test_a_value_keeps_its_inner_blanks_and_tabs() -> None:
    assert header_line("Idempotency-Key: \t a\tb c \t") == ("idempotency-key", "a\tb c")


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET /" + b"x" * MAX_LINE + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET / HTTP/1.1\r\nX: " + b"x" * MAX_LINE + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"X: 1\r\n" * (MAX_HEADERS + 1) + b"\r\n", 431),
    ],
)
def test_the_limits_of_a_head_are_refused(data: bytes, status: int) -> None:
    with pytest.raises(HttpError) as refused:
        read_head(io.BytesIO(data))
    assert refused.value.status == status


@pytest.mark.parametrize("data", [b"GET / HTTP/1.1", b"GET / HTTP/1.1\r\nHost: t\r\n", b"GET / HTTP/1.1\r\nHo"])
def test_a_head_cut_off_by_the_clients_end_is_a_connection_that_went_away(data: bytes) -> None:
    with pytest.raises(ConnectionAbortedError):
        read_head(io.BytesIO(data))


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        (b"GET /records HTTP/x.y\r\n\r\n", 400, "Bad request version"),
        (b"GET /records HTTP/2.0\r\n\r\n", 505, "is not supported"),
        (b"GET /records\r\n\r\n", 400, "Bad request syntax"),
        (b"\r\n", 400, "Bad request syntax"),
        (b"get /records HTTP/1.1\r\n\r\n", 400, "Bad request method"),
        (b"GET /records HTTP/1.1\r\nHost: t\r\n folded\r\n\r\n", 400, "a folded header line"),
        (b"GET /records HTTP/1.1\r\nno colon\r\n\r\n", 400, "not a header line"),
        (b"GET /records HTTP/1.1\r\n" + b"X: 1\r\n" * (MAX_HEADERS + 1) + b"\r\n", 431, "header lines"),
        (b"GET /" + b"x" * MAX_LINE + b" HTTP/1.1\r\n\r\n", 414, "longer than"),
        (b"\x00\xff garbage \x80\r\n\r\n", 400, "Bad request"),
    ],
)
def test_a_malformed_head_over_a_real_socket_is_a_json_refusal_and_the_connection_closes(
    logged: Service, data: bytes, status: int, message: str
) -> None:
    """The service answers and closes by itself: `read_reply` reads until the service closes, the client never does."""
    with connect(logged, timeout=5) as sock:
        sock.sendall(data)
        answer = read_reply(sock)  # a hang would time out here (5 s)
    assert (answer[0], answer[1]["content-type"], answer[1]["connection"]) == (status, "application/json", "close")
    assert message in json.loads(answer[2])["error"]


def test_a_head_cut_off_over_a_real_socket_is_not_answered_and_the_service_goes_on(logged: Service) -> None:
    """The client closes in the middle of its head: no answer, no traceback, and the next client is served."""
    for data in (b"GET /records HTTP/1.1", b"POST /issues HTTP/1.1\r\nContent-Le"):
        with connect(logged, timeout=5) as sock:
            sock.sendall(data)
            sock.shutdown(1)  # the client's end: the service sees it before a whole head
            assert sock.recv(1 << 16) == b""
    assert TrackerClient(logged.url).health()["ok"] is True


def test_a_kept_connection_after_a_malformed_second_head_is_answered_then_closed(logged: Service) -> None:
    """A good request kept open, then a bad head on the same connection: 200 (kept), then 400 and closed."""
    with connect(logged, timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nConnection: keep-alive\r\n\r\nGET /health HTTP/x\r\n\r\n")
        data = b""
        while chunk := sock.recv(1 << 16):
            data += chunk
    first, _, second = data.partition(b"}")
    assert first.startswith(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n")
    assert second.startswith(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n")
