"""Reading a tracker request: its route, its Content-Length, its JSON body and its fields.

Everything a client sends is checked here, before any database is touched, and every way it
can be wrong is an `HttpError` with the status and one line to send back as JSON: 400 for a
header, body or field the tracker cannot read (a Content-Length that is missing on a POST, not
a number or negative; a body that is not a JSON object, is nested too deeply or holds a lone
surrogate; an issue number out of range), 413 for a body larger than the limit, 404 for an
unknown route and 405 for a known route asked with another method. The routes, and the fields
each reads, are the table in routes.py. These functions do no I/O, so that the service
(server.py) reads the whole body first and only then takes a space's lock.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from crashsweep.realsweep.tracker.routes import ENDPOINTS, ROUTES, Endpoint, Field

MAX_BODY = 1 << 20
"""The largest body accepted (1 MiB): a tracker record is a title, a body and two names."""

MAX_ISSUE = (1 << 63) - 1
"""The largest issue number SQLite can hold (a signed 64-bit integer)."""

_SPACE = re.compile(r"^/spaces/([A-Za-z0-9][A-Za-z0-9_.-]{0,99})(/.*)$")
_DIGITS = re.compile(r"^[0-9]+$")
DEFAULT_SPACE = "default"


class HttpError(Exception):
    """A request the tracker refuses: its status, its one-line message and any extra headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass(frozen=True, slots=True)
class Route:
    """What a request asks for: the operation (`name`), its space, its method and its query."""

    name: str
    space: str
    method: str
    query: dict[str, str] = field(default_factory=dict, hash=False)
    issue: int | None = None

    @property
    def endpoint(self) -> Endpoint:
        """The route's entry in the table (routes.py)."""
        return ENDPOINTS[self.name]


def route(method: str, target: str) -> Route:
    """The route of `method target`, or HttpError 400 (unreadable target), 404 or 405."""
    try:
        parts = urlsplit(target)
    except ValueError:
        raise HttpError(400, "the request target is not a URL") from None
    path, space = parts.path, DEFAULT_SPACE
    match = _SPACE.match(path)
    if match:
        space, path = match.group(1), match.group(2)
    found = [(endpoint, m) for endpoint in ROUTES if (m := endpoint.pattern.fullmatch(path))]
    if not found:
        raise HttpError(404, f"no route {method} {_shorten(parts.path)}")
    chosen = [(endpoint, m) for endpoint, m in found if endpoint.method == method]
    if not chosen:
        allowed = ", ".join(endpoint.method for endpoint, _ in found)
        raise HttpError(405, f"{_shorten(parts.path)} answers {allowed}, not {method}", {"Allow": allowed})
    endpoint, matched = chosen[0]
    query = {name: values[0] for name, values in parse_qs(parts.query).items()}
    digits = matched.groupdict().get("issue")
    issue = issue_number(digits) if digits is not None else None
    return Route(endpoint.name, space, method, query, issue)


def issue_number(digits: str) -> int:
    """An issue number of the path, which SQLite can hold; else HttpError 400."""
    if len(digits) > 19 or int(digits) > MAX_ISSUE:
        raise HttpError(400, f"issue number {_shorten(digits)}: at most {MAX_ISSUE}")
    return int(digits)


def content_length(values: list[str], transfer_encoding: str | None, limit: int = MAX_BODY) -> int:
    """The length of a POST's body, from its Content-Length header(s); else HttpError 400 or 413."""
    if transfer_encoding is not None:
        raise HttpError(400, "Transfer-Encoding is not supported: send the body with a Content-Length")
    if not values:
        raise HttpError(400, "a POST needs a Content-Length header")
    texts = {value.strip() for value in values}
    if len(texts) > 1:
        raise HttpError(400, "conflicting Content-Length headers")
    text = texts.pop()
    if not _DIGITS.match(text):
        raise HttpError(400, f"Content-Length {_shorten(text)!r}: expected a number of bytes (0 or more)")
    if len(text) > 19 or int(text) > limit:
        raise HttpError(413, f"the body is larger than the limit of {limit} bytes")
    return int(text)


def json_object(data: bytes) -> dict[str, Any]:
    """The JSON object a body holds (an empty body is {}); else HttpError 400."""
    try:
        body = json.loads(data) if data else {}
    except RecursionError:
        raise HttpError(400, "the body is nested too deeply") from None
    except ValueError:
        raise HttpError(400, "the body is not JSON (in UTF-8)") from None
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    return body


def arguments(route: Route, body: dict[str, Any] | None) -> dict[str, Any]:
    """The checked arguments of `route`'s handler: its table entry's fields, in their order."""
    fields = body if body is not None else {}
    return {spec.name: _field(spec, route, fields) for spec in route.endpoint.fields}


def _field(spec: Field, route: Route, body: dict[str, Any]) -> Any:
    """One field of a request, read from where the route's table entry says; else HttpError 400."""
    if spec.source == "path":
        return route.issue
    if spec.source == "body":
        return text(body, spec.param, spec.default)
    if spec.default is not None:
        return route.query.get(spec.param, spec.default)
    return _required(route.query, spec.param)


def single_header(values: list[str], name: str) -> str | None:
    """The one value of header `name` (None: absent); HttpError 400 when it is given more than once.

    Which of two Fencing-Token or Idempotency-Key headers counts is a guess a service must not
    make (a proxy may have added one): a write fenced, or keyed, by the wrong one is worse than
    a refusal.
    """
    if len(values) > 1:
        raise HttpError(400, f"{name} is given {len(values)} times: send it once")
    return values[0] if values else None


def idempotency_key(values: list[str]) -> str | None:
    """The request's Idempotency-Key (None: none); HttpError 400 for two of them or an empty (or all-space) one."""
    key = single_header(values, "Idempotency-Key")
    if key is not None and not key.strip():
        raise HttpError(400, "Idempotency-Key is empty: send a key, or no header")
    return key


def fencing_token(value: str | None) -> int | None:
    """The fencing token a request carries (None: none); else HttpError 400."""
    if value is None:
        return None
    if not _DIGITS.match(value.strip()) or len(value.strip()) > 19:
        raise HttpError(400, f"Fencing-Token {_shorten(value)!r}: expected a whole number")
    return int(value)


def text(body: dict[str, Any], name: str, default: str | None = None) -> str:
    """Field `name`: a string (non-empty when it has no default) that UTF-8 can encode; else HttpError 400."""
    value = body.get(name, default)
    if not isinstance(value, str) or (default is None and not value):
        message = f"field {name!r} must be a non-empty string" if default is None else f"{name!r}: a string"
        raise HttpError(400, message)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise HttpError(400, f"field {name!r} holds a lone surrogate, which is not text") from None
    return value


def _required(query: dict[str, str], name: str) -> str:
    value = query.get(name)
    if not value:
        raise HttpError(400, f"query parameter {name!r} is required")
    return value


def _shorten(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters for an error message."""
    return text if len(text) <= limit else text[:limit] + "..."
