"""Helpers of the tracker tests: a service process whose stderr is kept, raw sockets, and readiness.

The readiness signals come from the kernel's table of TCP connections (/proc/net/tcp), never
from sleeps: `consumed` waits until the service has read every byte a socket sent (the client
side has them acknowledged and the service side has none left unread), so a test knows the
service is blocked waiting for more; `idle` waits until the service has closed every
connection, so a test knows each request has been handled to its end.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from crashsweep.realsweep.tracker.service import READY
from tests.realsweep.helpers import child_env

ESTABLISHED, CLOSE_WAIT = "01", "08"


@dataclass
class Service:
    """A tracker service process: its URL, and the file its stderr goes to."""

    process: subprocess.Popen[str]
    url: str
    stderr: Path

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.url.rsplit(":", 1)[1])

    def log(self) -> str:
        """What it wrote on stderr so far."""
        return self.stderr.read_text()


@contextmanager
def service(root: Path, *options: str) -> Iterator[Service]:
    """`python -m crashsweep.realsweep.tracker.service --root ROOT OPTIONS...`, stopped (SIGTERM, then SIGKILL) at the end."""  # noqa: E501
    stderr = root.parent / f"{root.name}.stderr"
    command = [sys.executable, "-m", "crashsweep.realsweep.tracker.service", "--root", str(root), *options]
    with stderr.open("w") as sink:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=sink, text=True, env=child_env())
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(READY), f"the service did not start: {line!r} {stderr.read_text()!r}"
        yield Service(process, line[len(READY) :].strip(), stderr)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()


def connect(service: Service, timeout: float = 10) -> socket.socket:
    """A raw TCP connection to the service."""
    return socket.create_connection(("127.0.0.1", service.port), timeout=timeout)


def request_head(method: str, path: str, *headers: str) -> bytes:
    """The request line and headers of a request, up to the blank line."""
    return "\r\n".join([f"{method} {path} HTTP/1.1", "Host: tracker", *headers, "", ""]).encode("latin-1")


def read_reply(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read a reply until the service closes the connection: its status, headers (names in lower case) and body."""
    data = b""
    while chunk := sock.recv(1 << 16):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    pairs = (line.split(": ", 1) for line in lines[1:] if ": " in line)
    headers = {name.lower(): value for name, value in pairs}
    return int(lines[0].split()[1]), headers, body


def _connections(port: int) -> list[tuple[int, int, str, int, int]]:
    """(local port, remote port, state, tx_queue, rx_queue) of the loopback TCP connections that involve `port`."""
    rows = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
        tx, rx = (int(part, 16) for part in fields[4].split(":"))
        if port in (local, remote):
            rows.append((local, remote, fields[3], tx, rx))
    return rows


def _wait(condition: str, ready: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting until {condition}"
        time.sleep(0.005)


def consumed(service: Service, sock: socket.socket, timeout: float = 10) -> None:
    """Wait until the service has read every byte sent on `sock` (acknowledged, and none left unread)."""
    mine = sock.getsockname()[1]

    def ready() -> bool:
        rows = _connections(service.port)
        sent = [tx for local, remote, _, tx, _ in rows if (local, remote) == (mine, service.port)]
        unread = [rx for local, remote, _, _, rx in rows if (local, remote) == (service.port, mine)]
        return sent == [0] and unread == [0]

    _wait(f"the service read what port {mine} sent", ready, timeout)


def idle(service: Service, timeout: float = 10) -> None:
    """Wait until the service has closed every connection it had accepted (each request handled to its end)."""

    def ready() -> bool:
        return not [
            row for row in _connections(service.port) if row[0] == service.port and row[2] in (ESTABLISHED, CLOSE_WAIT)
        ]

    _wait("the service closed every connection", ready, timeout)


def stall(tracker: Service, space: str) -> socket.socket:
    """A client that sends a POST's headers (Content-Length: 100) and 10 bytes of body, then nothing.

    It returns once the service has read both the headers and those 10 bytes: a read that only a
    body read can make, so the service is then waiting inside the body for the other 90.
    """
    sock = connect(tracker)
    sock.sendall(request_head("POST", f"/spaces/{space}/issues", "Content-Length: 100"))
    consumed(tracker, sock)
    sock.sendall(b'{"title": ')
    consumed(tracker, sock)
    return sock
