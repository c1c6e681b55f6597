"""The service's side of the wire: reading an HTTP/1.x request's head (its request line and headers).

The tracker service (server.py) answers thousands of short processes a sweep starts, a
few small requests each. The standard library's http.server parses every request's headers
with the email package (over three requests and a space's first open, the service's CPU was
2.1 to 2.3 ms with it, 2.0 ms with this); here a head is read line by line from the
connection's buffered reader and checked strictly, which is all a tracker request needs (its body is read by its
Content-Length, server.py and request.py):

- the request line is exactly `METHOD TARGET HTTP/1.x`, one space apart: a method of upper-case
  letters, a target from "/" without controls; another HTTP version is 505, anything else 400;
- a header line is `name: value`, the name a token (no space before the colon); a folded
  line (leading space or tab), a line without a colon, more than MAX_HEADERS headers or a line
  over MAX_LINE bytes is refused (400, or 431 for the limits);
- a connection that ends before the head is whole raises ConnectionAbortedError (the client
  went away: nothing to answer); one that ends before the request line's first byte is None
  (the client closed a kept connection).

Every refusal is a request.HttpError, answered in JSON by the service, which then
closes the connection (what follows a refused head cannot be read as a request).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO

from crashsweep.realsweep.tracker.request import HttpError

MAX_LINE = 65536
"""The longest request or header line read (bytes), as the standard library's server."""
MAX_HEADERS = 100
"""The most header lines a request may have, as the standard library's."""
VERSIONS = ("HTTP/1.1", "HTTP/1.0")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""A header's name (RFC 9110's token)."""
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""A control character (a tab is allowed in a header's value)."""


@dataclass(frozen=True, slots=True)
class Head:
    """A request's method, target, version and headers (names in lower case, each with its values in order)."""

    method: str
    target: str
    version: str
    headers: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of header `name` (any case), or `default`."""
        values = self.headers.get(name.lower())
        return values[0] if values else default

    def get_all(self, name: str) -> list[str]:
        """Every value of header `name` (any case), in order."""
        return list(self.headers.get(name.lower(), ()))


def read_head(reader: BinaryIO) -> Head | None:
    """Read one request's head from `reader`; None if the connection ended before it began."""
    raw = reader.readline(MAX_LINE + 1)
    if not raw:
        return None
    method, target, version = request_line(_line(raw, 414, "the request line"))
    headers: dict[str, list[str]] = {}
    for _ in range(MAX_HEADERS + 1):
        raw = reader.readline(MAX_LINE + 1)
        if raw in (b"\r\n", b"\n"):
            return Head(method, target, version, headers)
        name, value = header_line(_line(raw, 431, "a header line"))
        headers.setdefault(name, []).append(value)
    raise HttpError(431, f"more than {MAX_HEADERS} header lines")


def request_line(text: str) -> tuple[str, str, str]:
    """(method, target, version) of a request line; else HttpError 400 or 505."""
    parts = text.split(" ")
    if len(parts) != 3 or not all(parts):
        raise HttpError(400, f"Bad request syntax ({_shorten(text)!r})")
    method, target, version = parts
    if version not in VERSIONS:
        if version.startswith("HTTP/") and version[5:6].isdigit():
            raise HttpError(505, f"HTTP version {_shorten(version)!r} is not supported: send HTTP/1.1")
        raise HttpError(400, f"Bad request version ({_shorten(version)!r})")
    if not method.isascii() or not method.isalpha() or not method.isupper():
        raise HttpError(400, f"Bad request method ({_shorten(method)!r})")
    if not target.startswith("/") or "\t" in target or _CONTROL.search(target):
        raise HttpError(400, f"Bad request target ({_shorten(target)!r})")
    return method, target, version


def header_line(text: str) -> tuple[str, str]:
    """(name in lower case, value without surrounding blanks) of a header line; else HttpError 400."""
    if text[:1] in (" ", "\t"):
        raise HttpError(400, "a folded header line (continued from the line before) is not accepted")
    name, colon, value = text.partition(":")
    if not colon or not _TOKEN.fullmatch(name):
        raise HttpError(400, f"not a header line: {_shorten(text)!r}")
    value = value.strip(" \t")
    if _CONTROL.search(value):
        raise HttpError(400, f"header {_shorten(name)!r}: a control character in its value")
    return name.lower(), value


def _line(raw: bytes, status: int, what: str) -> str:
    """A line of the head without its line end; refused when longer than MAX_LINE, cut off by the client's end."""
    if len(raw) > MAX_LINE:
        raise HttpError(status, f"{what} is longer than {MAX_LINE} bytes")
    if not raw.endswith(b"\n"):
        raise ConnectionAbortedError("the client closed the connection in the middle of a request's head")
    return raw[:-2].decode("latin-1") if raw.endswith(b"\r\n") else raw[:-1].decode("latin-1")


def _shorten(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters for an error message."""
    return text if len(text) <= limit else text[:limit] + "..."
