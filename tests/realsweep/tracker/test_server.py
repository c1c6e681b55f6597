"""The tracker's HTTP side against hostile and dying clients, over real sockets to a real service process.

Each test waits on what the kernel says the service has done (tracker_process.consumed, idle),
never on a sleep, so that it cannot pass by luck: a stalled body is known to be inside the
service's read before the concurrent reader asks.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.server import TrackerServer
from crashsweep.realsweep.tracker.service import make_server
from tests.realsweep.helpers import child_env
from tests.realsweep.tracker_process import Service, connect, idle, read_reply, request_head, service, stall

ISSUE = {"title": "disk full", "run": "r1", "call": "create_a"}


def test_a_stalled_body_holds_no_lock_and_a_concurrent_reader_is_answered_at_once(tmp_path: Path) -> None:
    """While one client stalls in the middle of its body, GET /records and a write on that space are answered.

    The service waits 10 s for the stalled body; the client's 4 s timeout would fail these
    requests were the space's lock held meanwhile (the bound is the client's, not a clock read here).
    """
    with service(tmp_path / "db") as tracker:
        client = TrackerClient(f"{tracker.url}/spaces/s", timeout=4)
        client.create_issue(**ISSUE)
        with stall(tracker, "s"):
            assert [r["call"] for r in client.records()] == ["create_a"]
            client.create_issue("fan noise", run="r1", call="create_b")
            assert len(client.records()) == 2


def test_a_stalled_client_gets_408_once_its_time_is_up(tmp_path: Path) -> None:
    """With --timeout 1, a body that never arrives is answered 408 (JSON) and the connection closed."""
    with service(tmp_path / "db", "--timeout", "1") as tracker:
        with stall(tracker, "s") as stalled:
            status, headers, body = read_reply(stalled)
        assert (status, headers["content-type"]) == (408, "application/json")
        assert "within 1.0 s" in json.loads(body)["error"]  # the --timeout given, not another one
        assert TrackerClient(f"{tracker.url}/spaces/s").records() == []


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    """Send `data`, or as much of it as the service reads before it closes the connection."""
    with contextlib.suppress(OSError):
        sock.sendall(data)


def test_a_50_mb_body_gets_413_and_is_not_stored(tmp_path: Path) -> None:
    """A 50 MB issue is refused from its Content-Length, while the client is still sending; nothing is written."""
    body = json.dumps({**ISSUE, "body": "x" * (50 << 20)}).encode()
    with service(tmp_path / "db") as tracker:
        sock = connect(tracker)
        sock.sendall(request_head("POST", "/spaces/big/issues", f"Content-Length: {len(body)}"))
        sender = threading.Thread(target=lambda: _send_quietly(sock, body))
        sender.start()
        with sock:
            status, _, answer = read_reply(sock)
            sender.join()
        assert status == 413
        assert "larger than the limit of 1048576 bytes" in json.loads(answer)["error"]
        assert TrackerClient(f"{tracker.url}/spaces/big").records() == []
        assert sum(path.stat().st_size for path in (tmp_path / "db").iterdir()) == 0


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        (["Content-Length: -1"], 400, "Content-Length '-1': expected a number of bytes"),
        (["Content-Length: abc"], 400, "Content-Length 'abc': expected a number of bytes"),
        (["Content-Length: 1e3"], 400, "Content-Length '1e3'"),
        ([], 400, "a POST needs a Content-Length header"),
        (["Content-Length: 5", "Content-Length: 6"], 400, "conflicting Content-Length headers"),
        (["Transfer-Encoding: chunked"], 400, "Transfer-Encoding is not supported"),
        (["Content-Length: 2000000"], 413, "larger than the limit"),
        (["Content-Length: 123456789012345678901234567890"], 413, "larger than the limit"),
    ],
)
def test_a_bad_content_length_is_answered_at_once(
    logged: Service, headers: list[str], status: int, message: str
) -> None:
    """Missing, negative, not a number, conflicting or too large: a JSON error at once, without waiting for a body."""
    with connect(logged, timeout=5) as sock:
        sock.sendall(request_head("POST", "/issues", *headers))
        answer = read_reply(sock)
    assert (answer[0], answer[1]["content-type"]) == (status, "application/json")
    assert message in json.loads(answer[2])["error"]


def _ask(tracker: Service, method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, str], object]:
    """One request over a raw socket; its status, headers and JSON answer (which must be JSON)."""
    length = [] if body is None else [f"Content-Length: {len(body)}"]
    with connect(tracker, timeout=5) as sock:
        sock.sendall(request_head(method, path, *length) + (body or b""))
        status, headers, data = read_reply(sock)
    assert headers["content-type"] == "application/json"
    return status, headers, json.loads(data)


@pytest.mark.parametrize(
    ("method", "path", "status", "message"),
    [
        ("GET", "/nowhere", 404, "no route GET /nowhere"),
        ("POST", "/spaces/s/nowhere", 404, "no route POST /spaces/s/nowhere"),
        ("GET", "/issues", 405, "/issues answers POST, not GET"),
        ("POST", "/records", 405, "/records answers GET, not POST"),
        ("GET", "/issues/1/comments", 405, "answers POST, not GET"),
        ("DELETE", "/issues", 501, "Unsupported method ('DELETE')"),
        ("PUT", "/records", 501, "Unsupported method ('PUT')"),
        ("POST", "/issues/7/comments", 404, "no issue #7"),
    ],
)
def test_every_refusal_is_a_json_error(logged: Service, method: str, path: str, status: int, message: str) -> None:
    """404, 405 (with Allow), 501 and the store's own 404: JSON {"error": ...}, never the standard library's HTML."""
    body = json.dumps(ISSUE).encode() if method in ("POST", "PUT") else None
    answer = _ask(logged, method, path, body)
    assert answer[0] == status
    assert isinstance(answer[2], dict)
    assert message in answer[2]["error"]
    if status == 405:
        assert answer[1]["allow"] == ("GET" if method == "POST" else "POST")


def test_a_request_line_the_service_cannot_parse_is_a_json_400(logged: Service) -> None:
    """The standard library's own parser refuses it; the refusal is JSON too."""
    with connect(logged, timeout=5) as sock:
        sock.sendall(b"GET /records HTTP/x.y\r\n\r\n")
        status, headers, data = read_reply(sock)
    assert (status, headers["content-type"]) == (400, "application/json")
    assert "Bad request version" in json.loads(data)["error"]


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/issues", b'{"title": "\\ud800", "run": "r", "call": "c"}', "field 'title' holds a lone surrogate"),
        ("/issues", b'{"title": "t", "run": "r\\udfff", "call": "c"}', "field 'run' holds a lone surrogate"),
        ("/issues/1/comments", b'{"body": "\\udc80", "run": "r", "call": "c"}', "field 'body' holds a lone surrogate"),
        ("/issues/123456789012345678901234567890/comments", b'{"run": "r", "call": "c"}', "issue number 1234"),
        ("/issues/9223372036854775808/comments", b'{"run": "r", "call": "c"}', "at most 9223372036854775807"),
        ("/issues", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        ("/issues", b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
        ("/issues", b'{"title": "\xff", "run": "r", "call": "c"}', "the body is not JSON"),
        ("/issues", b"[1, 2]", "must be a JSON object"),
        ("/issues", b'{"title": 7, "run": "r", "call": "c"}', "field 'title' must be a non-empty string"),
    ],
)
def test_an_unreadable_body_is_a_json_400_and_no_traceback(
    logged: Service, path: str, body: bytes, message: str
) -> None:
    """Lone surrogates, a 30-digit issue number, JSON 100,000 deep, bytes that are not UTF-8: 400, nothing stored."""
    client = TrackerClient(logged.url)
    if "comments" in path:
        client.create_issue(**ISSUE)
    status, _, answer = _ask(logged, "POST", path, body)
    assert status == 400
    assert isinstance(answer, dict)
    assert message in answer["error"]
    assert len(client.records()) == (1 if "comments" in path else 0)


def test_a_read_of_a_space_with_no_database_answers_empty_and_creates_nothing(tmp_path: Path) -> None:
    """GETs of an unknown space answer from an empty view; only a write creates its database."""
    root = tmp_path / "db"
    with service(root) as tracker:
        ghost = TrackerClient(f"{tracker.url}/spaces/ghost")
        assert ghost.records() == []
        assert ghost.search("disk") == []
        assert ghost.lookup("r1", "create_a") is None
        assert _ask(tracker, "GET", "/spaces/ghost/nowhere")[0] == 404
        assert _ask(tracker, "POST", "/spaces/ghost/records", b"{}")[0] == 405
        assert _ask(tracker, "POST", "/spaces/ghost/issues", b"{not json")[0] == 400
        assert list(root.iterdir()) == []
        ghost.create_issue(**ISSUE)
        assert (root / "ghost.sqlite3").exists()
        assert [r["call"] for r in ghost.records()] == ["create_a"]


CUT_OFF = """
import os, signal, socket, sys
port, sent, body = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
sock = socket.create_connection(("127.0.0.1", port))
head = f"POST /spaces/cut/issues HTTP/1.1\\r\\nHost: t\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n".encode()
sock.sendall(head + body[:sent])
os.kill(os.getpid(), signal.SIGKILL)
"""
"""A client process that sends a POST (the first `sent` bytes of its body) and is killed before the reply."""


def test_a_request_cut_off_by_the_clients_death_is_what_it_is_and_leaves_no_traceback(logged: Service) -> None:
    """Killed after the whole request: applied, reply lost; killed mid-body: not applied. Never a traceback."""
    body = json.dumps(ISSUE)
    for sent in (len(body), len(body) // 2, 0) * 4:
        command = [sys.executable, "-c", CUT_OFF, str(logged.port), str(sent), body]
        assert subprocess.run(command, env=child_env(), check=False).returncode == -9
    for _ in range(4):  # a reset instead of a close: the reply may meet a connection already gone
        with connect(logged) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(request_head("POST", "/spaces/reset/issues", f"Content-Length: {len(body)}") + body.encode())
    idle(logged)
    assert len(TrackerClient(f"{logged.url}/spaces/cut").records()) == 4
    assert TrackerClient(logged.url).health()["ok"] is True


def test_what_the_service_cannot_handle_is_a_json_500_and_one_line_in_its_log(tmp_path: Path) -> None:
    """A space whose file is not a database: 500 in JSON, one line on stderr, and the other spaces still answer."""
    root = tmp_path / "db"
    root.mkdir()
    (root / "bad.sqlite3").write_bytes(b"this is not a database, it is text of more than one hundred bytes " * 4)
    with service(root) as tracker:
        status, _, answer = _ask(tracker, "GET", "/spaces/bad/records")
        assert status == 500
        assert answer == {"error": "internal error: see the tracker's log"}
        assert TrackerClient(f"{tracker.url}/spaces/good").records() == []
        idle(tracker)
        assert tracker.log() == (
            "tracker: internal error on GET '/spaces/bad/records': DatabaseError: file is not a database\n"
        )


def _read_one(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one reply (its head, then Content-Length bytes) without waiting for the connection to close."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(1 << 16)
        assert chunk, "the service closed the connection before its answer"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, value in (line.split(": ", 1) for line in lines[1:])}
    while len(body) < int(headers["content-length"]):
        chunk = sock.recv(1 << 16)
        assert chunk, "the service closed the connection in the middle of its answer"
        body += chunk
    return int(lines[0].split()[1]), headers, body


def test_a_connection_that_asks_to_be_kept_carries_several_requests(logged: Service) -> None:
    """`Connection: keep-alive`: a write and two reads answered on one connection, each saying it stays open."""
    issue = json.dumps(ISSUE).encode()
    keep = "Connection: keep-alive"
    with connect(logged, timeout=5) as sock:
        sock.sendall(request_head("POST", "/spaces/k/issues", keep, f"Content-Length: {len(issue)}") + issue)
        status, headers, body = _read_one(sock)
        assert (status, headers["connection"], json.loads(body)["number"]) == (201, "keep-alive", 1)
        for _ in range(2):
            sock.sendall(request_head("GET", "/spaces/k/records", keep))
            status, headers, body = _read_one(sock)
            assert (status, headers["connection"]) == (200, "keep-alive")
            assert [r["call"] for r in json.loads(body)["records"]] == ["create_a"]
        sock.sendall(request_head("GET", "/spaces/k/records"))  # no longer asks: answered, then closed
        status, headers, _ = read_reply(sock)
        assert (status, headers["connection"]) == (200, "close")


def test_an_error_answer_closes_even_a_kept_connection(logged: Service) -> None:
    """A refusal (here: the comment's fields are missing) is answered `Connection: close` and closed.

    A refused request may leave bytes unread, which must not be read as the next request.
    """
    with connect(logged, timeout=5) as sock:
        sock.sendall(request_head("POST", "/spaces/k/issues/7/comments", "Connection: keep-alive", "Content-Length: 2"))
        sock.sendall(b"{}")
        status, headers, _ = read_reply(sock)  # returns only once the service has closed the connection
    assert (status, headers["connection"]) == (400, "close")


def test_a_kept_connection_left_idle_is_closed_after_the_timeout(tmp_path: Path) -> None:
    """With --timeout 1, an idle kept connection is closed by the service (its thread ends); nothing is logged."""
    with service(tmp_path / "db", "--timeout", "1") as tracker, connect(tracker, timeout=5) as sock:
        sock.sendall(request_head("GET", "/health", "Connection: keep-alive"))
        assert _read_one(sock)[0] == 200
        assert sock.recv(1) == b""  # the service's end of the connection, within the socket's 5 s
        idle(tracker)
        assert tracker.log() == ""


def _connection_threads() -> list[threading.Thread]:
    """This process's live connection threads of a tracker server (named after their target)."""
    return [t for t in threading.enumerate() if "_serve_connections" in t.name]


def _all_idle(server: TrackerServer) -> None:
    """Wait (up to 5 s) until every connection thread has finished its connection and waits for another."""
    deadline = time.monotonic() + 5
    while server._idle != len(_connection_threads()):  # the pool's own count of idle threads
        assert time.monotonic() < deadline, "a connection thread never became idle"
        time.sleep(0.001)


def test_connection_threads_are_reused_one_per_live_connection(tmp_path: Path) -> None:
    """Ten connections one after the other are served by one thread; three open at once by three, then reused."""
    server = make_server(tmp_path / "db", "keyed")
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    try:
        host, port = server.server_address[:2]
        for _ in range(10):
            assert TrackerClient(server.url).health()["ok"]
            _all_idle(server)
        assert len(_connection_threads()) == 1
        kept = [socket.create_connection((str(host), port), timeout=5) for _ in range(3)]
        for sock in kept:  # each is answered while the others stay open: a thread each
            sock.sendall(request_head("GET", "/health", "Connection: keep-alive"))
            assert _read_one(sock)[0] == 200
        assert len(_connection_threads()) == 3
        for sock in kept:
            sock.close()
        _all_idle(server)
        assert TrackerClient(server.url).health()["ok"]
        _all_idle(server)
        assert len(_connection_threads()) == 3
    finally:
        server.shutdown()
        server.server_close()
        server.spaces.close()


def _left(before: set[threading.Thread], count: int) -> None:
    """Wait (up to 5 s) until `count` connection threads are left besides those of `before` (other servers')."""
    deadline = time.monotonic() + 5
    while len(set(_connection_threads()) - before) != count:
        assert time.monotonic() < deadline, f"not {count} connection threads left after server_close"
        time.sleep(0.001)


def test_server_close_ends_the_connection_threads_even_one_still_serving(tmp_path: Path) -> None:
    """Closed with two idle connection threads and one serving a kept connection: all three end (none leak)."""
    before = set(_connection_threads())  # another server's in this process, if any
    server = make_server(tmp_path / "db", "keyed")
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    host, port = server.server_address[:2]
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.create_connection((str(host), port), timeout=5)) for _ in range(3)]
        for sock in socks:
            sock.sendall(request_head("GET", "/health", "Connection: keep-alive"))
            assert _read_one(sock)[0] == 200
        for sock in socks[:2]:
            sock.close()
        deadline = time.monotonic() + 5
        while server._idle != 2:
            assert time.monotonic() < deadline, "two connection threads never became idle"
            time.sleep(0.001)
        _closed_with_one_serving(server, socks[2], before)


def _closed_with_one_serving(server: TrackerServer, serving: socket.socket, before: set[threading.Thread]) -> None:
    """Close `server` while `serving` is its one connection; its idle threads end, then the serving one."""
    server.shutdown()
    server.server_close()
    _left(before, 1)  # the two idle ones end; the one serving a connection goes on serving it
    serving.close()  # that connection ends: its thread too
    _left(before, 0)
    server.spaces.close()


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        (("Fencing-Token: 1", "Fencing-Token: 9"), "Fencing-Token is given 2 times: send it once"),
        (("Idempotency-Key: a", "Idempotency-Key: b"), "Idempotency-Key is given 2 times: send it once"),
        (("Idempotency-Key: k", "Idempotency-Key: k"), "Idempotency-Key is given 2 times: send it once"),
        (("Approval: w@1#1", "Approval: w@1#2"), "Approval is given 2 times: send it once"),
        (("Idempotency-Key: ",), "Idempotency-Key is empty: send a key, or no header"),
        (("Idempotency-Key:    ",), "Idempotency-Key is empty: send a key, or no header"),
    ],
)
def test_a_repeated_singleton_header_or_a_blank_key_is_a_json_400_and_nothing_is_written(
    tmp_path: Path, headers: tuple[str, ...], message: str
) -> None:
    with service(tmp_path / "db") as tracker:
        body = json.dumps(ISSUE).encode("utf-8")
        with connect(tracker) as sock:
            head = request_head("POST", "/spaces/s/issues", f"Content-Length: {len(body)}", *headers)
            sock.sendall(head + body)
            status, got, answer = read_reply(sock)
        assert (status, got["content-type"]) == (400, "application/json")
        assert json.loads(answer) == {"error": message}
        assert TrackerClient(f"{tracker.url}/spaces/s").records() == []


def test_a_head_that_arrives_slowly_gets_408_once_its_time_is_up(tmp_path: Path) -> None:
    """With --timeout 1, a head trickled one header line at a time (each read in time) is answered 408 (JSON)."""
    with service(tmp_path / "db", "--timeout", "1") as tracker, connect(tracker) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        answered = threading.Event()

        def trickle() -> None:
            for number in range(200):  # 60 s at most: the service must answer long before
                if answered.wait(0.3):
                    return
                _send_quietly(sock, f"X-Slow-{number}: 1\r\n".encode("latin-1"))

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        try:
            status, headers, body = read_reply(sock)
        finally:
            answered.set()
            sender.join()
        assert (status, headers["content-type"]) == (408, "application/json")
        assert "within 1.0 s" in json.loads(body)["error"]


def test_connections_beyond_the_bound_are_refused_with_503_at_once(tmp_path: Path) -> None:
    """With max_connections=2, two idle connections are held and a third is answered 503 (JSON) and closed."""
    server = make_server(tmp_path / "db", "keyed", max_connections=2)
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    host, port = server.server_address[:2]
    held = [socket.create_connection((str(host), port), timeout=10) for _ in range(2)]
    try:
        with socket.create_connection((str(host), port), timeout=10) as third:
            status, headers, body = read_reply(third)
        assert (status, headers["content-type"]) == (503, "application/json")
        assert "2 connections are open" in json.loads(body)["error"]
        for sock in held:
            sock.close()
        _wait_for(lambda: server.open_connections == 0)
        assert TrackerClient(server.url, timeout=10).health()["ok"] is True
    finally:
        for sock in held:
            sock.close()
        server.shutdown()
        server.server_close()
        server.spaces.close()


def _wait_for(condition: Callable[[], bool], timeout: float = 10) -> None:
    """Wait (polling) until `condition()` holds; AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.01)
