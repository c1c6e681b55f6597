"""A client of the tracker service: one real HTTP request per call, over a TCP connection.

Each call sends one HTTP/1.1 request and reads the whole answer (wire.py: the request
in one write, the answer read by its Content-Length; this module is run by each of the
thousands of processes a sweep starts, and the standard library's http.client parses every
answer's headers with the email package). By default each call opens a connection, sends one
request, reads the whole answer and closes. A client made with `keep_alive=True` (the
reference loop's: one process, a dozen requests) keeps one connection per thread open between
calls (`Connection: keep-alive`; the service keeps only connections that ask, server.py)
and `close()` ends them; before it reuses one it checks that the service has not closed it
meanwhile (an idle connection is closed after the service's timeout), so a request is never
sent on a dead connection and never sent twice. Any failure of a request closes its
connection; the next opens another. Writes carry an `Idempotency-Key` header when given a
key; once a lease is taken (`lease`), every request carries its fencing token
(`Fencing-Token`), and an older one than the newest granted is refused (409, spec/FAULTS.md
7.1). An error status raises `TrackerError` with the service's message. With
`lose_next_reply` set, the next write asks the service to apply it and lose its reply (a
fault the sweep injects, server.py): the call then raises the transport's
ConnectionError, as for any reply a network drops.
"""

from __future__ import annotations

import _thread  # not threading: see zygote_server.py (its fork handler runs in every forked child)
import codecs
import json
import select
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from crashsweep.realsweep.tracker.wire import (
    APPROVAL_HEADER,
    FAIL_FIRST_HEADER,
    FENCED,
    FENCING_HEADER,
    LOSE_REPLY_HEADER,
    Connection,
)

__all__ = ["FENCED", "FENCING_HEADER", "LOSE_REPLY_HEADER", "TrackerClient", "TrackerError"]

codecs.lookup("idna")  # every connection's getaddrinfo encodes its host with it: found once, at import
# (a sweep's processes are forked from a process that imported this module, and share the lookup)


class TrackerError(RuntimeError):
    """The tracker answered with an error status (e.g. 422 for a key reused with other parameters)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"tracker answered {status}: {message}")
        self.status = status


class TrackerClient:
    """The tracker at `base_url` (e.g. http://127.0.0.1:8765/spaces/s-3)."""

    def __init__(self, base_url: str, *, timeout: float = 30.0, keep_alive: bool = False) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"tracker URL {base_url!r}: expected http://HOST:PORT[/spaces/NAME]")
        self.base_url = base_url
        """The URL it was made from: a check forked elsewhere makes its own client of it (forked_check.py)."""
        self.host = parts.hostname
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.lose_next_reply = False
        """Set: the next write is applied and its reply lost (the flag is then cleared)."""
        self.fail_first = False
        """Set: the next write fails after it is applied if it is the first of its call (then cleared)."""
        self.token: int | None = None
        """A lease's fencing token, sent with every request once set (`lease`)."""
        self.keep_alive = keep_alive
        self._local = _thread._local()  # this thread's open connection (keep_alive only)
        self._open: list[Connection] = []
        self._lock = _thread.allocate_lock()

    def close(self) -> None:
        """Close the connections kept open (keep_alive); a later call opens a new one."""
        with self._lock:
            connections, self._open = self._open, []
        for connection in connections:
            connection.close()

    def __enter__(self) -> TrackerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_issue(
        self, title: str, *, run: str, call: str, body: str = "", key: str | None = None, approval: str | None = None
    ) -> int:
        """File an issue; its number. `approval`: the approval a gated write is sent under (kept on its record)."""
        payload = {"title": title, "body": body, "run": run, "call": call}
        return int(self._request("POST", "/issues", payload, key, approval=approval)["number"])

    def comment(
        self,
        issue: int,
        *,
        run: str,
        call: str,
        body: str = "",
        key: str | None = None,
        approval: str | None = None,
    ) -> int:
        """Comment on issue `issue`; the comment's number."""
        payload = {"body": body, "run": run, "call": call}
        return int(self._request("POST", f"/issues/{issue}/comments", payload, key, approval=approval)["number"])

    def search(self, text: str = "") -> list[dict[str, Any]]:
        """The issues whose title or body contains `text`."""
        query = urlencode({"q": text}, quote_via=quote)
        items: list[dict[str, Any]] = self._request("GET", "/search?" + query)["items"]
        return items

    def lookup(self, run: str, call: str, *, fenced: bool = True) -> dict[str, Any] | None:
        """The first record call `call` of run `run` left, or None: did it happen?

        `fenced=False`: without the lease's fencing token (a person's look is no request of the
        process, spec/FAULTS.md 7.1).
        """
        query = "/lookup?" + urlencode({"run": run, "call": call}, quote_via=quote)
        answer = self._request("GET", query, fenced=fenced)
        return answer["record"] if answer["found"] else None

    def lease(self) -> int:
        """Take a lease on this space: a fencing token one higher than any granted before, sent from now on.

        The request is not fenced (spec/FAULTS.md 7.1): a process whose token is stale may take
        a new lease too (a whole-run retry begins its run with one), and the other's is then older.
        """
        self.token = int(self._request("POST", "/lease", {}, fenced=False)["token"])
        return self.token

    def records(self) -> list[dict[str, Any]]:
        """Every record of this space, in the order applied."""
        records: list[dict[str, Any]] = self._request("GET", "/records")["records"]
        return records

    def health(self) -> dict[str, Any]:
        """The service's health answer: {"ok": true, "mode": ...}."""
        answer: dict[str, Any] = self._request("GET", "/health")
        return answer

    def raw(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """Send one request as given (`path` already quoted); its status, headers and body."""
        if not self.keep_alive:
            connection = Connection(self.host, self.port, timeout=self.timeout)
            try:
                return connection.exchange(method, self.prefix + path, body, {**(headers or {}), **CLOSE})
            finally:
                connection.close()
        connection = self._connection()
        try:
            answer = connection.exchange(method, self.prefix + path, body, {**(headers or {}), **KEEP})
        except BaseException:
            connection.close()  # a half-done exchange leaves the connection unusable
            self._forget()
            raise
        if connection.sock is None:  # the service closed it after its answer (the exchange saw so)
            self._forget()
        return answer

    def _connection(self) -> Connection:
        """This thread's kept connection, if it is still open at the service's end; else a new one."""
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is not None and (connection.sock is None or _dropped(connection.sock)):
            connection.close()
            self._forget()
            connection = None
        if connection is None:
            connection = Connection(self.host, self.port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._open.append(connection)
        return connection

    def _forget(self) -> None:
        """Drop this thread's kept connection (closed already)."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        with self._lock:
            if connection in self._open:
                self._open.remove(connection)

    def _request(
        self,
        method: str,
        path: str,
        payload: dict[str, Any] | None = None,
        key: str | None = None,
        *,
        fenced: bool = True,
        approval: str | None = None,
    ) -> Any:
        headers = {"Accept": "application/json"}
        body = None
        if payload is not None:
            body = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if key is not None:
            headers["Idempotency-Key"] = key
        if approval is not None:
            headers[APPROVAL_HEADER] = approval
        if fenced and self.token is not None:
            headers[FENCING_HEADER] = str(self.token)
        if method == "POST" and self.lose_next_reply:
            headers[LOSE_REPLY_HEADER] = "true"
            self.lose_next_reply = False
        if method == "POST" and self.fail_first:
            headers[FAIL_FIRST_HEADER] = "true"
            self.fail_first = False
        status, _, data = self.raw(method, path, body, headers)
        try:
            answer = json.loads(data) if data else {}
        except ValueError:
            answer = {"error": data[:200].decode("utf-8", "replace")}
        if status >= 400:
            raise TrackerError(status, str(answer.get("error", answer)))
        return answer


KEEP = {"Connection": "keep-alive"}
"""The header that asks the service to keep the connection open after its answer."""
CLOSE = {"Connection": "close"}
"""The header that tells the service the connection ends with this answer (one request per connection)."""


def _dropped(sock: Any) -> bool:
    """Whether an idle kept connection was closed by the service: readable means its end came (or stray bytes)."""
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)
