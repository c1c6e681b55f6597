"""The tracker's routes: one table that both reading a request and running it read.

Each `Endpoint` is one route of the service: its operation's name, its method, its path within
a space (`/issues/{issue}/comments`: `{issue}` is a number of ASCII digits, parsed into the
route's `issue`), the fields its handler reads (from the query, the body or the path, checked
in the order listed) and the handler, which runs the checked request on the space's store.
request.py reads a request against this table (404 for a path no entry has, 405 with `Allow`
for a path asked with another method, 400 for a field it cannot read) and server.py runs the
entry's handler, so a new route is one entry here and nothing else. An entry that is not
`in_space` (the health check) is answered without touching any space: no lock, no database,
no fencing check.

This module does no I/O of its own and imports only the store (for the handlers' types).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from crashsweep.realsweep.tracker.store import Answer, Store


@dataclass(frozen=True, slots=True)
class Field:
    """One argument of a handler: its name, where it is read from and its default (None: required).

    A query parameter that is required must be non-empty; a body field must be a string
    (non-empty when required, request.text); a path field is the route's number (`issue`).
    `key` is the parameter's name in the query or body when it differs from `name`.
    """

    name: str
    source: Literal["query", "body", "path"]
    default: str | None = None
    key: str = ""

    @property
    def param(self) -> str:
        """The name the client sends the field under."""
        return self.key or self.name


@dataclass(frozen=True, slots=True)
class Call:
    """What a handler gets: the space's store, the checked arguments, the key and the service's mode.

    The store is None for a space with no database yet (read as empty) and for a route that is
    not `in_space`; the key is the request's Idempotency-Key (writes only).
    """

    store: Store | None
    args: dict[str, Any]
    key: str | None
    mode: str
    fail_first: bool = False
    """The write fails after it is applied if no record of its call was there before (FAIL_FIRST_HEADER)."""
    approval: str | None = None
    """The approval a gated write is sent under (APPROVAL_HEADER), kept on its record; no parameter."""


Handler = Callable[[Call], Answer]
"""Run one checked request: its status and JSON answer."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route: `method path` answered by `run` with the `fields` it reads."""

    name: str
    method: Literal["GET", "POST"]
    path: str
    fields: tuple[Field, ...]
    run: Handler
    in_space: bool = True
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", _compile(self.path))


def _compile(path: str) -> re.Pattern[str]:
    """The pattern of a route's path: literal text, and `{issue}` as ASCII digits."""
    parts = re.split(r"(\{issue\})", path)
    return re.compile("".join("(?P<issue>[0-9]+)" if part == "{issue}" else re.escape(part) for part in parts))


def _health(call: Call) -> Answer:
    return 200, {"ok": True, "mode": call.mode}


def _search(call: Call) -> Answer:
    return 200, {"items": call.store.search(**call.args) if call.store else []}


def _lookup(call: Call) -> Answer:
    record = call.store.lookup(**call.args) if call.store else None
    return 200, {"found": record is not None, "record": record}


def _records(call: Call) -> Answer:
    return 200, {"records": call.store.records() if call.store else []}


def _written(call: Call) -> Store:
    """The store of a write (a write creates its space)."""
    assert call.store is not None, "a write creates its space"
    return call.store


def _lease(call: Call) -> Answer:
    return _written(call).grant_lease()


LOSE = "lose reply"
"""Set in a write's answer that the service applies and then drops unanswered (a failing first call)."""


def _failing_first(call: Call, write: Callable[[], Answer]) -> Answer:
    """Run `write`; its answer marked LOSE when it is the first of its call and the call fails the first time.

    The fault belongs to the tracker's state, not to a process: the first request the tracker
    receives for the call fails after it is applied, whoever sends it (spec/SITUATIONS.md 2).
    """
    first = call.fail_first and not _written(call).has_call(call.args["call"])
    status, answer = write()
    return (status, {**answer, LOSE: True}) if first and status < 400 else (status, answer)


def _issue(call: Call) -> Answer:
    return _failing_first(call, lambda: _written(call).create_issue(**call.args, key=call.key, approval=call.approval))


def _comment(call: Call) -> Answer:
    return _failing_first(call, lambda: _written(call).comment(**call.args, key=call.key, approval=call.approval))


_WRITTEN = (Field("body", "body", default=""), Field("run", "body"), Field("call", "body"))
"""The fields every record carries (checked first: a write's own fields follow)."""

ROUTES: tuple[Endpoint, ...] = (
    Endpoint("health", "GET", "/health", (), _health, in_space=False),
    Endpoint("search", "GET", "/search", (Field("text", "query", default="", key="q"),), _search),
    Endpoint("lookup", "GET", "/lookup", (Field("run", "query"), Field("call", "query")), _lookup),
    Endpoint("records", "GET", "/records", (), _records),
    Endpoint("issue", "POST", "/issues", (*_WRITTEN, Field("title", "body")), _issue),
    Endpoint("lease", "POST", "/lease", (), _lease),
    Endpoint("comment", "POST", "/issues/{issue}/comments", (Field("issue", "path"), *_WRITTEN), _comment),
)
"""Every route of the service (one per operation name)."""

ENDPOINTS: dict[str, Endpoint] = {endpoint.name: endpoint for endpoint in ROUTES}
"""The routes by operation name."""
