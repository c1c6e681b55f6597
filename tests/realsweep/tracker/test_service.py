"""The tracker service over a real socket: keys, 422, lookups, spaces, and survival of the loop's crashes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.helpers import child_env
from tests.realsweep.tracker_process import service, stall


def _post(client: TrackerClient, path: str, body: dict[str, str], key: str) -> tuple[int, dict[str, str], object]:
    status, headers, data = client.raw(
        "POST", path, json.dumps(body).encode(), {"Content-Type": "application/json", "Idempotency-Key": key}
    )
    return status, headers, json.loads(data)


def test_a_repeated_key_over_http_replays_the_first_answer(keyed_service: ServiceProcess) -> None:
    """The second request with the key gets 201, the same number, and Idempotent-Replayed: true."""
    client = TrackerClient(keyed_service.space_url("s"))
    body = {"title": "disk full", "run": "r1", "call": "create_a"}
    first = _post(client, "/issues", body, "key-1")
    second = _post(client, "/issues", body, "key-1")
    assert first[0] == second[0] == 201
    assert "idempotent-replayed" not in first[1]
    assert second[1]["idempotent-replayed"] == "true"
    assert len(client.records()) == 1


def test_a_reused_key_with_other_parameters_is_refused_with_422(keyed_service: ServiceProcess) -> None:
    """Same Idempotency-Key, another title: 422 and no new record."""
    client = TrackerClient(keyed_service.space_url("s"))
    _post(client, "/issues", {"title": "disk full", "run": "r1", "call": "create_a"}, "key-1")
    status, _, answer = _post(client, "/issues", {"title": "fan noise", "run": "r1", "call": "create_a"}, "key-1")
    assert status == 422
    assert isinstance(answer, dict)
    assert "other parameters" in answer["error"]
    assert len(client.records()) == 1


def test_a_keyless_service_ignores_keys(keyless_service: ServiceProcess) -> None:
    """Keyless: the same key twice makes two issues."""
    client = TrackerClient(keyless_service.space_url("s"))
    client.create_issue("disk full", run="r1", call="create_a", key="key-1")
    client.create_issue("disk full", run="r1", call="create_a", key="key-1")
    assert len(client.records()) == 2
    assert client.health() == {"ok": True, "mode": "keyless"}


def test_lookup_answers_whether_a_call_of_a_run_happened(keyed_service: ServiceProcess) -> None:
    """GET /lookup: the first record of call C in run R, or not found."""
    client = TrackerClient(keyed_service.space_url("s"))
    number = client.create_issue("disk full", run="r1", call="create_a")
    client.comment(number, run="r1", call="comment_a", body="seen")
    found = client.lookup("r1", "comment_a")
    assert found is not None
    assert found["issue"] == number
    assert client.lookup("r2", "comment_a") is None
    assert client.lookup("r1", "create_b") is None


def test_spaces_do_not_see_each_other(keyed_service: ServiceProcess) -> None:
    """Two spaces are two databases: records and keys stay apart; no prefix is the default space."""
    one, two = TrackerClient(keyed_service.space_url("one")), TrackerClient(keyed_service.space_url("two"))
    one.create_issue("a", run="r", call="c", key="k")
    two.create_issue("a", run="r", call="c", key="k")
    assert len(one.records()) == len(two.records()) == 1
    assert TrackerClient(keyed_service.url).records() == []


def test_bad_requests_get_400_and_unknown_routes_404(keyed_service: ServiceProcess) -> None:
    """A body that is not JSON is 400, a missing field is 400, an unknown route is 404."""
    client = TrackerClient(keyed_service.url)
    assert client.raw("POST", "/issues", b"{not json")[0] == 400
    assert client.raw("POST", "/issues", json.dumps({"title": "x"}).encode())[0] == 400
    assert client.raw("GET", "/lookup?run=r")[0] == 400
    assert client.raw("GET", "/nowhere")[0] == 404
    assert client.raw("DELETE", "/issues")[0] == 501


def test_the_service_survives_a_killed_loop_and_keeps_its_writes(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """A loop killed right after the tracker accepted a write: the service answers and holds the write."""
    env = child_env(
        CRASHSWEEP_TRACKER_URL=keyed_service.space_url("loop"),
        CRASHSWEEP_POINTS_LOG=str(tmp_path / "points.log"),
        CRASHSWEEP_CRASH_AT="9",  # start (2), reply 1 arrived, reply 1 (2), marker create_a (3), accepted
    )
    command = [sys.executable, "-m", "crashsweep.realsweep.reference.loop", "--variant", "keys-and-markers"]
    crashed = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, check=False)
    assert crashed.returncode in (-9, 137)
    assert (tmp_path / "points.log").read_text().splitlines()[-1] == "tracker accepted create_a"
    client = TrackerClient(keyed_service.space_url("loop"))
    assert client.health()["ok"] is True
    assert [r["call"] for r in client.records()] == ["create_a"]
    env.pop("CRASHSWEEP_CRASH_AT")
    restarted = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, check=False)
    assert restarted.returncode == 0
    assert [r["call"] for r in client.records()] == ["create_a", "create_b", "comment_a"]


def test_the_database_outlives_the_service_itself(tmp_path: Path) -> None:
    """Kill the service with SIGKILL: a new one on the same folder has every acknowledged write."""
    root = tmp_path / "tracker"
    with ServiceProcess(root, "keyed") as service:
        client = TrackerClient(service.space_url("s"))
        client.create_issue("disk full", run="r1", call="create_a", key="k1")
        os.kill(service.pid, signal.SIGKILL)
    with ServiceProcess(root, "keyed") as service:
        client = TrackerClient(service.space_url("s"))
        assert [r["call"] for r in client.records()] == ["create_a"]
        client.create_issue("disk full", run="r1", call="create_a", key="k1")
        assert len(client.records()) == 1


def test_sigterm_stops_the_service_at_once_even_with_a_stalled_client_connected(tmp_path: Path) -> None:
    """A client stalled in the middle of a body holds no lock: SIGTERM stops the service, status 0, within 5 s."""
    with service(tmp_path / "db") as tracker:
        TrackerClient(f"{tracker.url}/spaces/s").create_issue("disk full", run="r1", call="create_a")
        with stall(tracker, "s"):  # the service is now inside the read of the body, waiting
            tracker.process.send_signal(signal.SIGTERM)
            assert tracker.process.wait(timeout=5) == 0  # the bound: a wait that gives up after 5 s
        assert tracker.log() == ""
    with ServiceProcess(tmp_path / "db", "keyed") as again:
        assert [r["call"] for r in TrackerClient(again.space_url("s")).records()] == ["create_a"]


def test_a_port_in_use_is_one_line_and_exit_2(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """`python -m crashsweep.realsweep.tracker.service` on a busy port: one line on stderr, status 2, no traceback."""
    port = keyed_service.url.rsplit(":", 1)[1]
    command = [
        sys.executable,
        "-m",
        "crashsweep.realsweep.tracker.service",
        "--root",
        str(tmp_path / "x"),
        "--port",
        port,
    ]
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"tracker: cannot serve {tmp_path / 'x'} on 127.0.0.1:{port}: ")


def test_the_service_stops_when_its_parent_is_killed_by_sigkill(tmp_path: Path) -> None:
    """A process that started a ServiceProcess dies by SIGKILL: its service stops by itself, within seconds."""
    from tests.realsweep.process.kin import alive, wait_until

    code = (
        "import sys; from pathlib import Path; from crashsweep.realsweep.tracker.service import ServiceProcess\n"
        f"with ServiceProcess(Path({str(tmp_path / 'db')!r}), 'keyed') as s:\n"
        "    print(s.pid, flush=True); input()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env()
    )
    assert parent.stdout is not None
    service_pid = int(parent.stdout.readline())
    try:
        assert alive(service_pid)
        parent.kill()
        parent.wait(timeout=10)
        wait_until(lambda: not alive(service_pid), 10, "the orphaned service's end")
    finally:
        parent.kill()
        parent.communicate()
        if alive(service_pid):
            os.kill(service_pid, signal.SIGKILL)


def test_a_service_whose_parent_stops_reading_as_it_starts_exits_quietly(tmp_path: Path) -> None:
    """Its URL goes into a pipe no one reads (the parent stopped by Ctrl-C): status 1, no traceback."""
    command = [sys.executable, "-m", "crashsweep.realsweep.tracker.service", "--root", str(tmp_path / "db")]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.close()  # before it is ready: its READY line breaks the pipe
    try:
        assert child.wait(timeout=30) == 1
        assert child.stderr.read() == b""
    finally:
        child.kill()
        child.wait()
        child.stderr.close()


def test_a_ctrl_c_while_the_service_starts_is_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGINT reaches the whole foreground group: the child, still starting, exits 130 and says nothing."""
    from crashsweep.realsweep.tracker import service as module

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "make_server", interrupted)
    try:
        status = module.main(["--root", str(tmp_path / "db")])
    except KeyboardInterrupt:
        pytest.fail("the KeyboardInterrupt escaped: a traceback on the terminal")
    assert status == 130
    assert capsys.readouterr() == ("", "")
