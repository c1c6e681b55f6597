"""`view --serve`: a local HTTP server whose page walks a design's state graph on demand.

Three routes (the contract of the page, crashsweep/reports/walk_page.py):

- `/` (with `?path=CODE` or without): the page; it reads the path from its own URL, so a link
  to a state is the path code `crashsweep replay --path` takes;
- `/api/state?path=CODE`: the view of that state (crashsweep.reports.walk), computed when asked
  from the model's step function, 400 with `{"error": ...}` for a code that does not fit;
- `/api/discoveries`: what a background exploration of the whole graph found so far: its
  progress, then the row's verdicts and each violated invariant's shortest counterexample.

It listens on loopback only unless `--public` (crashsweep.cli.tracker's `loopback` says what
counts); each request is answered whole or as one JSON error, never a traceback.
"""

from __future__ import annotations

import errno
import json
import shlex
import signal
import sys
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click

from crashsweep.cli.tracker import loopback
from crashsweep.explorer.search import ExplorationInterrupted, StateLimitExceeded, explore
from crashsweep.reports.counterexample import shortest
from crashsweep.reports.replay import replay_command
from crashsweep.reports.summary import summarize
from crashsweep.reports.walk import Walk

__all__ = ["Discoveries", "WalkServer", "bind", "check_host", "run"]

PORT = 8766
"""`view --serve`'s port unless --port: one past `tracker serve`'s, so the two run side by side."""
ROW = ("crash_points", "scenarios", "with_dups", "dups", "missing", "states", "edges")
"""The row's figures the discoveries give, by their names in the row's JSON (Summary.to_json)."""
PROGRESS_EVERY = 2_000
"""States between two progress figures of the background exploration."""


@dataclass
class Discoveries:
    """The background exploration's findings, read by request threads while its own thread writes them."""

    states: int = 0
    done: bool = False
    line: str = "exploring: starting"
    found: list[dict[str, Any]] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)
    row: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def as_json(self) -> dict[str, Any]:
        """What `/api/discoveries` answers."""
        with self.lock:
            return {
                "done": self.done,
                "line": self.line,
                "states": self.states,
                "verdicts": dict(self.verdicts),
                "row": dict(self.row),
                "discoveries": list(self.found),
            }

    def seen(self, states: int, queued: int, crashes: int) -> None:
        """The exploration's progress callback."""
        with self.lock:
            self.states = states
            self.line = f"exploring: {states:,} states so far, {queued:,} waiting, up to {crashes} moves deep"

    def search(self, walk: Walk, max_states: int) -> None:
        """Explore the whole graph and note each violated invariant's shortest counterexample.

        It runs on a thread of its own: a bug of crashsweep's ends it with one line on the page
        (as a request's would), not a traceback on the console.
        """
        try:
            self._search(walk, max_states)
        except Exception as error:
            with self.lock:
                self.done, self.line = True, f"exploration failed: internal error: {type(error).__name__}: {error}"

    def _search(self, walk: Walk, max_states: int) -> None:
        s = walk.setting
        try:
            exploration = explore(
                walk.model, s.depth, max_states=max_states, progress=self.seen, progress_every=PROGRESS_EVERY
            )
        except (
            ExplorationInterrupted,
            StateLimitExceeded,
            ValueError,
        ) as error:  # a state limit, a model that cannot be explored
            with self.lock:
                self.done, self.line = True, f"exploration stopped: {error}"
            return
        summary = summarize(exploration, variant=s.variant, job=s.job, tracker=s.tracker)
        found = shortest(exploration, **s.names())
        violated = [cx for cx in found if cx.violated]
        with self.lock:
            self.states = exploration.states
            self.verdicts = {name: ("holds" if v.holds else "VIOLATED") for name, v in exploration.verdicts.items()}
            row = summary.to_json()  # the row as `explore --format json` gives it, the figures the page shows
            self.row = {name: row[name] for name in ROW}
            self.found = [
                {
                    "invariant": cx.invariant,
                    "kind": cx.invariant_kind,
                    "code": cx.code,
                    "steps": len(cx.steps),
                    "violation": cx.violation,
                    "replay": replay_command(cx, program=s.program),
                }
                for cx in violated
            ]
            broken = len(self.found)
            self.line = (
                f"explored {exploration.states:,} states, {exploration.edges:,} edges: "
                + (f"{broken} invariant{'s' if broken != 1 else ''} violated" if broken else "every invariant holds")
                + f" ({sum(summary.scenarios.values()):,} scenarios; with_dups {summary.with_dups:,},"
                + f" dups {summary.dups:,}, missing {summary.missing:,})"
            )
            self.done = True


class WalkServer(ThreadingHTTPServer):
    """The HTTP server of one walk: its page, its states on demand, and its discoveries."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], walk: Walk, discoveries: Discoveries, page: Callable[[], str]) -> None:
        super().__init__(address, _Handler)
        self.walk, self.discoveries, self.page = walk, discoveries, page

    @property
    def url(self) -> str:
        """The page's address, as a browser opens it."""
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"


class _Handler(BaseHTTPRequestHandler):
    server: WalkServer

    def do_GET(self) -> None:
        """Answer one request: the page, a state, the discoveries, or a JSON error."""
        url = urlsplit(self.path)
        try:
            if url.path == "/":
                self._send(200, "text/html; charset=utf-8", self.server.page().encode())
            elif url.path == "/api/state":
                self._state(parse_qs(url.query).get("path", ["0:"]))
            elif url.path == "/api/discoveries":
                self._json(200, self.server.discoveries.as_json())
            else:
                self._json(404, {"error": f"no such page: {url.path} (the page is /, its data /api/state?path=CODE)"})
        except BrokenPipeError:
            pass  # the browser went away before the answer was written
        except Exception as error:  # a bug of crashsweep's: one line, not a traceback on the page
            self._json(500, {"error": f"internal error: {type(error).__name__}: {error}"})

    def _state(self, given: list[str]) -> None:
        if len(given) != 1:
            self._json(400, {"error": "give one path code: /api/state?path=CODE (e.g. 0: for the start)"})
            return
        try:
            view = self.server.walk.view(given[0])
        except ValueError as error:
            self._json(400, {"error": str(error)})
            return
        self._json(200, view)

    def _json(self, status: int, value: dict[str, Any]) -> None:
        self._send(status, "application/json", json.dumps(value).encode())

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request is not news (the command's one line says where the page is)."""


def bind(walk: Walk, host: str, port: int, *, max_states: int, page: Callable[[], str]) -> WalkServer:
    """A server for `walk` listening on `host`:`port` (0: any free port), its discoveries begun in the background.

    OSError when the address cannot be taken (in use, not this machine's).
    """
    discoveries = Discoveries()
    server = WalkServer((host, port), walk, discoveries, page)
    searching = threading.Thread(target=discoveries.search, args=(walk, max_states), name="discoveries", daemon=True)
    searching.start()
    return server


def say(line: str) -> None:
    """One line on stdout, at once (a test or a script waits for the address)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def check_host(host: str, public: bool, port: int) -> None:
    """Refuse an address beyond this machine without --public (click.UsageError); with --public, warn on stderr."""
    if public:
        why = "anyone who reaches it can read the design and the job"
        click.echo(f"crashsweep: --public: the page at {host}:{port} has no authentication: {why}", err=True)
    elif not loopback(host):
        raise click.UsageError(
            f"--host {shlex.quote(host)} is reachable from other machines and the page has no authentication: "
            "give --public to serve it anyway, or --host 127.0.0.1"
        )


def run(walk: Walk, host: str, port: int, *, max_states: int, open_browser: bool) -> int:
    """Serve `walk` until Ctrl-C or SIGTERM; exit status 0 (2, as a UsageError, when the address cannot be taken)."""
    try:
        server = bind(walk, host, port, max_states=max_states, page=_page)
    except OSError as error:
        hint = "; give another --port, or --port 0 for any free one" if error.errno == errno.EADDRINUSE else ""
        raise click.UsageError(f"cannot serve on {host}:{port}: {error.strerror or error}{hint}") from None
    previous = signal.signal(signal.SIGTERM, _interrupt)  # before the line: a caller may stop it once it reads it
    try:
        say(f"serving {walk.setting.variant} at {server.url} (Ctrl-C stops it)")
        if open_browser:  # on a thread: a console browser waits for its user, the page must not
            threading.Thread(target=webbrowser.open, args=(server.url,), name="browser", daemon=True).start()
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        say("stopped serving")
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops the server as Ctrl-C does."""
    raise KeyboardInterrupt


def _page() -> str:
    from crashsweep.reports.walk_page import PAGE

    return PAGE
