"""One HTTP/1.1 exchange with the tracker service over a TCP connection: the client's wire format.

The tracker client (client.py) is run by each of the thousands of processes a sweep
starts, for a few small requests each. The standard library's http.client parses every
answer's headers with the email package and sends a request's head and body in two writes;
here a request leaves in one write (head and body together, so Nagle's algorithm has nothing
to hold back) and an answer is read by its status line, its header lines and its
Content-Length, which is all the tracker service sends (every answer of it is JSON with a
Content-Length). An answer without one is read to the end of the connection (HTTP/1.0
style); a chunked answer, a status line that is not HTTP/1.x, a header line without a colon
or more than MAX_HEADERS headers are refused as `WireError`. A connection that ends before
the status line raises `Disconnected`: the service dropped it without an answer (a lost
reply; server.py). Both are ConnectionErrors, as a transport failure is to a caller.

A `Connection` is kept open between exchanges unless the answer says `Connection: close` or
is HTTP/1.0 without `Connection: keep-alive`; then it is closed (`sock` is None) and the next
exchange opens a new one. Any failure in the middle of an exchange closes it too.
"""

from __future__ import annotations

import socket
from typing import BinaryIO

MAX_LINE = 65536
"""The longest status or header line read (bytes)."""
MAX_HEADERS = 100
"""The most header lines an answer may have."""
NO_BODY = frozenset({204, 304})

LOSE_REPLY_HEADER = "Crashsweep-Lose-Reply"
"""The header that asks the service to apply a write and lose its reply (server.py reads it here)."""
FAIL_FIRST_HEADER = "Crashsweep-Fail-First"
"""The header of a write whose tool fails after the tracker applied it, the first time the tracker
sees its call (a job's `fails_after_accept`, spec/SITUATIONS.md 2): its reply is then lost."""
FENCING_HEADER = "Fencing-Token"
"""The header that carries a lease's fencing token; the service refuses one older than the newest granted."""
APPROVAL_HEADER = "Approval"
"""The header of a gated write: the approval it is sent under (spec/CONVERSATIONS.md 2, "C@v#n"). An
audit field, not a parameter: the record keeps it when the write is applied, and it is no part of
the fingerprint an idempotency key is checked against (the same write under a later approval)."""
FENCED = 409
"""The status of a request refused for its fencing token (a newer lease was granted: spec/FAULTS.md 7.1)."""


class Disconnected(ConnectionResetError):
    """The service closed the connection before it sent an answer's status line."""


class WireError(ConnectionError):
    """The service's answer is not HTTP/1.x as this client reads it (the message says what)."""


class Connection:
    """A TCP connection to host:port, opened at the first exchange, with TCP_NODELAY."""

    def __init__(self, host: str, port: int, *, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.sock: socket.socket | None = None
        self._reader: BinaryIO | None = None

    def exchange(
        self, method: str, target: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """Send one request and read its whole answer: (status, headers with lower-case names, body)."""
        request = _request(method, target, f"{self.host}:{self.port}", body, headers)
        try:
            if self.sock is None:
                self._open()
            sock, reader = self.sock, self._reader
            assert sock is not None
            assert reader is not None
            sock.sendall(request)
            status, answer, close = _head(reader)
            data = b"" if method == "HEAD" or status in NO_BODY else _body(reader, answer)
        except BaseException:
            self.close()
            raise
        if close or "content-length" not in answer:
            self.close()
        return status, answer, data

    def close(self) -> None:
        """Close the connection (the next exchange opens another)."""
        reader, sock, self._reader, self.sock = self._reader, self.sock, None, None
        if reader is not None:
            reader.close()
        if sock is not None:
            sock.close()

    def _open(self) -> None:
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock, self._reader = sock, sock.makefile("rb")


def _request(method: str, target: str, host: str, body: bytes | None, headers: dict[str, str]) -> bytes:
    """The request's bytes: request line, Host, the headers, Content-Length when there is a body, the body."""
    if not method.isalpha() or not method.isupper():
        raise ValueError(f"HTTP method {method!r}: expected upper-case letters")
    if not target.startswith("/") or any(c <= " " or c == "\x7f" for c in target):
        raise ValueError(f"request target {target!r}: expected a path from '/' without spaces or control characters")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    for name, value in headers.items():
        if not name or any(c in name for c in ":\r\n ") or "\r" in value or "\n" in value:
            raise ValueError(f"header {name!r}: {value!r}: expected a name and a one-line value")
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if body else head


def _head(reader: BinaryIO) -> tuple[int, dict[str, str], bool]:
    """The answer's status, its headers, and whether the connection ends after it.

    Header names are in lower case; a repeated header keeps its last value.
    """
    line = reader.readline(MAX_LINE + 1)
    if not line:
        raise Disconnected("the tracker closed the connection without an answer")
    version, _, rest = _line(line).partition(" ")
    code = rest[:3]
    if version not in ("HTTP/1.1", "HTTP/1.0") or len(code) != 3 or not code.isdigit() or rest[3:4] not in ("", " "):
        raise WireError(f"not an HTTP/1.x status line: {line[:80]!r}")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            break
        if not line:
            raise WireError("the tracker closed the connection in the middle of an answer's headers")
        name, colon, value = _line(line).partition(":")
        if not colon or not name or name != name.strip():
            raise WireError(f"not a header line: {line[:80]!r}")
        headers[name.lower()] = value.strip()
    else:
        raise WireError(f"more than {MAX_HEADERS} header lines in an answer")
    if "transfer-encoding" in headers:
        raise WireError(f"Transfer-Encoding {headers['transfer-encoding']!r}: expected a Content-Length")
    connection = headers.get("connection", "").lower()
    close = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
    return int(code), headers, close


def _body(reader: BinaryIO, headers: dict[str, str]) -> bytes:
    """The answer's body: Content-Length bytes, or (without one) what comes until the connection ends."""
    length = headers.get("content-length")
    if length is None:
        return reader.read()
    if not length.isdigit():
        raise WireError(f"Content-Length {length!r}: expected a whole number")
    data = reader.read(int(length))
    if len(data) < int(length):
        raise WireError(f"the answer ended after {len(data)} of its {length} bytes")
    return data


def _line(raw: bytes) -> str:
    """A status or header line without its line end; refused when over MAX_LINE or not ended."""
    if len(raw) > MAX_LINE or not raw.endswith(b"\n"):
        raise WireError(f"a line of the answer is cut off or longer than {MAX_LINE} bytes")
    return raw.rstrip(b"\r\n").decode("latin-1")
