"""`view --serve` over real HTTP: the page, states on demand, discoveries, refusals, and how it stops."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli.main import main
from crashsweep.cli.serve import Discoveries
from crashsweep.reports.walk import Setting, Walk
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 120.0
"""Seconds a server may take to start or to finish its discoveries before the test fails (not a timing check)."""


class Served:
    """A `crashsweep view --serve` process started by a test, and its address."""

    def __init__(self, *args: str, env: Mapping[str, str] | None = None) -> None:
        command = [sys.executable, "-m", "crashsweep", "view", "--serve", "--port", "0", "--no-open", *args]
        environment = {**os.environ, **(env or {})}
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
        )
        assert self.process.stdout is not None
        self.first = self.process.stdout.readline()
        assert self.first.startswith("serving "), self.first + self.process.stderr.read()  # type: ignore[union-attr]
        self.url = self.first.split(" at ", 1)[1].split(" ", 1)[0]

    def get(self, path: str) -> tuple[int, str, str]:
        """(status, content type, body) of GET `path`."""
        try:
            with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=DEADLINE) as answer:
                return answer.status, answer.headers["Content-Type"], answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers["Content-Type"], error.read().decode()

    def json(self, path: str) -> tuple[int, Any]:
        status, kind, body = self.get(path)
        assert kind == "application/json"
        return status, json.loads(body)

    def stop(self) -> tuple[int, str, str]:
        """SIGTERM, by the PID this test started; (exit status, the rest of stdout, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            out, err = self.process.communicate(timeout=DEADLINE)
        except subprocess.TimeoutExpired:  # it did not stop: killed, by its PID, so no server outlives the test
            self.process.kill()
            out, err = self.process.communicate()
        return self.process.returncode, out, err


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served("--variant", "save-after-reply", "--depth", "2")
    try:
        yield server
    finally:
        assert server.stop()[0] == 0


def test_it_says_where_it_listens_on_one_line_on_loopback(served: Served) -> None:
    assert served.first.startswith("serving save-after-reply at http://127.0.0.1:")
    assert served.first.rstrip().endswith("/ (Ctrl-C stops it)")


def test_the_page_is_one_html_document(served: Served) -> None:
    status, kind, body = served.get("/?path=10:7=1")
    assert (status, kind) == (200, "text/html; charset=utf-8")
    assert body.lstrip().lower().startswith("<!doctype html>")


def test_a_state_is_its_walk_s_view(served: Served) -> None:
    """The server answers what crashsweep.reports.walk computes for the code, as JSON."""
    walk = Walk(model("save-after-reply", TRIAGE, KEYED), Setting("save-after-reply", "triage", "keyed", 2))
    status, view = served.json("/api/state?path=10:7=1")
    assert status == 200
    expected = walk.view("10:7=1")
    assert {k: v for k, v in view.items() if k != "replay"} == json.loads(
        json.dumps({k: v for k, v in expected.items() if k != "replay"})
    )
    assert view["replay"].endswith("replay --variant save-after-reply --depth 2 --tracker keyed --path 10:7=1")


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("path=bad", "is not of the form LENGTH:POS=CHOICE"),
        ("path=999:", "the path is longer than the run"),
        ("path=1:1=5", "step 1 takes choice 5, but offers only choice 0 (start)"),
        ("path=1:&path=2:", "give one path code"),
    ],
)
def test_a_code_that_does_not_fit_is_a_400_with_one_line(served: Served, query: str, words: str) -> None:
    status, answer = served.json(f"/api/state?{query}")
    assert status == 400
    assert words in answer["error"]
    assert "\n" not in answer["error"]


def test_an_unknown_page_is_a_404_in_json(served: Served) -> None:
    status, answer = served.json("/etc/passwd")
    assert status == 404
    assert "no such page" in answer["error"]


def test_discoveries_are_the_shortest_counterexamples_once_the_search_is_done(served: Served) -> None:
    """save-after-reply at depth 2 on triage: no-duplicate, first at 10:7=1 (as explore prints it)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        status, found = served.json("/api/discoveries")
        assert status == 200
        if found["done"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert found["done"], found["line"]
    assert [(d["invariant"], d["code"]) for d in found["discoveries"]] == [("no-duplicate", "10:7=1")]
    assert found["verdicts"]["no-duplicate"] == "VIOLATED"
    assert found["verdicts"]["no-loss"] == "holds"
    row = json.loads(served_row("save-after-reply", 2))
    assert found["row"] == row
    assert found["line"].startswith("explored ")
    scenarios = sum(row["scenarios"].values())
    figures = f"with_dups {row['with_dups']}, dups {row['dups']}, missing {row['missing']}"
    assert found["line"].endswith(f": 1 invariant violated ({scenarios} scenarios; {figures})")


def served_row(variant: str, depth: int) -> str:
    """The row `explore --format json` prints for the design, in the fields the discoveries give."""
    command = ["explore", "--variant", variant, "--depth", str(depth), "--format", "json"]
    out = subprocess.run(
        [sys.executable, "-m", "crashsweep", *command],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    row = json.loads(out)
    fields = ("crash_points", "scenarios", "with_dups", "dups", "missing", "states", "edges")
    return json.dumps({name: row[name] for name in fields})


def test_sigterm_stops_it_with_status_0() -> None:
    server = Served("--variant", "agent-loop", "--depth", "1")
    status, out, err = server.stop()
    assert (status, out, err) == (0, "stopped serving\n", "")


def test_discoveries_say_when_the_search_stops_at_the_state_limit() -> None:
    """A --max-states the graph exceeds: the walk goes on; the discoveries' line says why they are none."""
    found = Discoveries()
    walk = Walk(model("save-after-reply", TRIAGE, KEYED), Setting("save-after-reply", "triage", "keyed", 2))
    found.search(walk, max_states=10)
    answer = found.as_json()
    assert answer["done"]
    assert answer["discoveries"] == []
    assert answer["line"].startswith("exploration stopped: ")
    assert "10" in answer["line"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--serve", "--host", "0.0.0.0"], "--host 0.0.0.0 is reachable from other machines"),
        (["--serve", "--out", "x"], "--out writes a page and --serve serves one: give one of them"),
        (["--port", "9000"], "--port is an option of --serve: add --serve, or leave --port out"),
        (["--public"], "--public is an option of --serve"),
        (["--serve", "--port", "70000"], "70000 is not in the range 0<=x<=65535"),
    ],
)
def test_bad_options_are_one_line_and_exit_2_before_anything_is_served(
    args: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", "--variant", "save-after-reply", "--no-open", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert line in captured.err
    assert captured.err.count("\n") == 1


def test_a_port_in_use_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert main(["view", "--variant", "save-after-reply", "--serve", "--port", port, "--no-open"]) == 2
    err = capsys.readouterr().err
    assert f"cannot serve on 127.0.0.1:{port}: Address already in use; give another --port" in err
    assert err.count("\n") == 1


def test_public_warns_that_the_page_has_no_authentication() -> None:
    """--public with a loopback --host (so nothing beyond this machine listens in the test): a warning, then serving."""
    server = Served("--variant", "agent-loop", "--depth", "1", "--public")
    status, _out, err = server.stop()
    assert status == 0
    assert err.startswith("crashsweep: --public: the page at 127.0.0.1:0 has no authentication")


def test_the_replay_command_of_a_design_file_and_a_job_file_works_as_shown() -> None:
    """A design and a job given as files: each discovery's replay command, run as the page shows it, reproduces it.

    save-after-reply-node on triage-approval: approved-exactly's shortest counterexample ends where
    no-duplicate is violated too, so its command names the invariant (`--invariant`).
    """
    server = Served("--design", "examples/save-after-reply-node.toml", "--job", "examples/triage-approval.toml")
    try:
        deadline = time.monotonic() + DEADLINE
        found = server.json("/api/discoveries")[1]
        while not found["done"] and time.monotonic() < deadline:
            time.sleep(0.1)
            found = server.json("/api/discoveries")[1]
        assert found["discoveries"], found["line"]
        assert {d["invariant"] for d in found["discoveries"]} == {"no-duplicate", "approved-exactly"}
        for discovery in found["discoveries"]:
            view = server.json(f"/api/state?path={discovery['code']}")[1]
            assert view["replay"] in discovery["replay"]  # the state's command, told the invariant when not its first
            words = shlex.split(discovery["replay"])
            assert "--design" in words
            assert "--job" in words
            done = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, check=False)
            assert done.returncode == 1, done.stderr
            assert f"counterexample to {discovery['invariant']} " in done.stdout
    finally:
        assert server.stop()[0] == 0


def test_a_bug_in_the_background_search_is_one_line_on_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search runs on a thread: an exception of crashsweep's becomes the discoveries' line, nothing else."""
    from crashsweep.cli import serve

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(serve, "explore", broken)
    found = Discoveries()
    walk = Walk(model("save-after-reply", TRIAGE, KEYED), Setting("save-after-reply", "triage", "keyed", 2))
    found.search(walk, max_states=10)
    assert found.as_json()["line"] == "exploration failed: internal error: RuntimeError: a bug"
    assert found.as_json()["done"]
