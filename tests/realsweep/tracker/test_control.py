"""The tracker service's control channel (control.py): release, root, and the end of its input."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.realsweep.tracker import control
from crashsweep.realsweep.tracker.client import TrackerClient, TrackerError
from crashsweep.realsweep.tracker.server import TrackerServer
from crashsweep.realsweep.tracker.service import ServiceProcess, make_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TrackerServer]:
    """A keyed tracker server in this process, serving from a thread, its databases in tmp_path/first."""
    made = make_server(tmp_path / "first", "keyed")
    thread = threading.Thread(target=made.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield made
    made.shutdown()
    made.server_close()
    made.spaces.close()


def _titles(database: Path) -> list[str]:
    with sqlite3.connect(database) as connection:
        return [row[0] for row in connection.execute("SELECT title FROM records ORDER BY number")]


def test_root_moves_later_writes_to_the_new_folder(server: TrackerServer, tmp_path: Path) -> None:
    """Before `root`, a write lands in the first folder; after it, in the second (made for it); keys still honoured."""
    client = TrackerClient(f"{server.url}/spaces/s")
    client.create_issue("before", run="r1", call="a", key="k")
    assert control.answer(server, f"root {tmp_path / 'second'}\n") == control.ROOTED
    client.create_issue("after", run="r1", call="b", key="k2")
    client.create_issue("after", run="r1", call="b", key="k2")  # honoured: one record
    assert _titles(tmp_path / "first" / "s.sqlite3") == ["before"]
    assert _titles(tmp_path / "second" / "s.sqlite3") == ["after"]


def test_release_closes_the_databases_and_refuses_requests_until_the_next_root(
    server: TrackerServer, tmp_path: Path
) -> None:
    """After `release` a request is refused (503, as while the service stops); `root` serves again."""
    client = TrackerClient(f"{server.url}/spaces/s")
    client.create_issue("kept", run="r1", call="a")
    assert control.answer(server, "release") == control.RELEASED
    with pytest.raises(TrackerError, match="503"):
        client.create_issue("refused", run="r1", call="b")
    assert _titles(tmp_path / "first" / "s.sqlite3") == ["kept"]
    assert control.answer(server, f"root {tmp_path / 'third'}") == control.ROOTED
    assert client.create_issue("served", run="r1", call="c") == 1  # the new folder's first issue


def test_a_request_it_cannot_carry_out_is_one_error_line_and_changes_nothing(
    server: TrackerServer, tmp_path: Path
) -> None:
    """A folder that cannot be made (under a file), a word it does not know: `error ...`, the same folder after."""
    (tmp_path / "a-file").write_text("")
    said = control.answer(server, f"root {tmp_path / 'a-file' / 'under'}")
    assert said.startswith(f"{control.ERROR} cannot make ")
    assert control.answer(server, "reroot /x") == f"{control.ERROR} unknown request 'reroot /x'"
    TrackerClient(f"{server.url}/spaces/s").create_issue("still here", run="r1", call="a")
    assert _titles(tmp_path / "first" / "s.sqlite3") == ["still here"]


def test_listen_answers_each_line(server: TrackerServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request line gets its answer line; the end of the input sends SIGTERM to the service (here: noted)."""
    stopped: list[int] = []
    monkeypatch.setattr(os, "kill", lambda pid, signum: stopped.append(signum))
    answers = io.StringIO()
    control.listen(server, io.StringIO(f"root {tmp_path / 'second'}\nrelease\n"), answers).join(timeout=10)
    assert answers.getvalue() == "rooted\nreleased\n"
    assert stopped == [signal.SIGTERM]


def test_a_service_with_control_moves_releases_and_stops_when_its_input_ends(tmp_path: Path) -> None:
    """The service as a process: root_at and release over its stdin; closing its stdin stops it."""
    with ServiceProcess(tmp_path / "one", "keyed", control=True) as service:
        client = TrackerClient(service.space_url("s"))
        client.create_issue("one", run="r1", call="a")
        assert service.release()
        assert service.root_at(tmp_path / "two")
        assert service.root == tmp_path / "two"
        client.create_issue("two", run="r1", call="a")
        assert service.release()
        assert _titles(tmp_path / "one" / "s.sqlite3") == ["one"]
        assert _titles(tmp_path / "two" / "s.sqlite3") == ["two"]
        process = service._process
        assert process is not None
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=10) == 0
