"""The `tracker serve` command: the tracker service in the command's own process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.realsweep.tracker.client import TrackerClient
from tests.realsweep.helpers import child_env

CRASHSWEEP = str(Path(sys.executable).with_name("crashsweep"))


def test_tracker_serve_answers_until_stopped(tmp_path: Path) -> None:
    """`crashsweep tracker serve --port 0` prints its URL, answers, and stops on SIGTERM."""
    command = [CRASHSWEEP, "tracker", "serve", "--root", str(tmp_path / "db"), "--port", "0", "--tracker", "keyless"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=child_env()) as server:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = line.split(" at ")[1].split(" ")[0]
        client = TrackerClient(url)
        assert client.health() == {"ok": True, "mode": "keyless"}
        client.create_issue("disk full", run="r", call="c")
        os.kill(server.pid, signal.SIGTERM)
        assert server.wait(timeout=10) == 0
    assert (tmp_path / "db" / "default.sqlite3").exists()


def test_tracker_serve_without_root_writes_nothing_here_and_removes_its_temporary_folder(tmp_path: Path) -> None:
    """No --root: the databases go to the temporary folder it prints, which SIGTERM removes; the cwd stays empty."""
    command = [CRASHSWEEP, "tracker", "serve", "--port", "0"]
    server = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env()
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "(temporary: removed when stopped; --root DIR keeps the databases)" in line
        root = Path(line.split(" serving ")[1].split(" (temporary")[0])
        client = TrackerClient(line.split(" at ")[1].split(" ")[0])
        client.create_issue("disk full", run="r", call="c")
        assert (root / "default.sqlite3").exists()
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=10)
        assert (server.returncode, err) == (0, "")
    finally:
        if server.poll() is None:
            server.kill()
        server.communicate()
    assert not root.exists()
    assert list(tmp_path.iterdir()) == []


def test_tracker_serve_refuses_a_root_it_cannot_make_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--root under a regular file: exit 2 and one line, before anything is served."""
    (tmp_path / "file").write_text("")
    assert main(["tracker", "serve", "--root", str(tmp_path / "file" / "db"), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == f"crashsweep: error: cannot use --root {tmp_path / 'file' / 'db'}: Not a directory\n"


def test_tracker_serve_on_a_taken_port_creates_no_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The port is checked first: taken, it is one line and exit 2, and --root DIR is not made."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["tracker", "serve", "--root", str(tmp_path / "db"), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"crashsweep: error: cannot serve on 127.0.0.1:{port}: ")
    assert err.count("\n") == 1
    assert not (tmp_path / "db").exists()


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "192.0.2.7", "example.org"])
def test_tracker_serve_refuses_an_address_beyond_this_machine_without_public(
    host: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service has no authentication: every interface, or any but loopback, takes --public (one line, exit 2)."""
    from crashsweep.realsweep import api

    def no_bind(*_: object, **__: object) -> None:
        raise AssertionError("the tracker was bound")

    monkeypatch.setattr(api, "tracker_server", no_bind)
    assert main(["tracker", "serve", "--root", str(tmp_path / "db"), "--host", host, "--port", "0"]) == 2
    out, err = capsys.readouterr()
    shown = host or "''"
    assert (out, err) == (
        "",
        f"crashsweep: error: --host {shown} is reachable from other machines and the tracker has no"
        " authentication: give --public to serve it anyway, or --host 127.0.0.1\n",
    )
    assert not (tmp_path / "db").exists()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_tracker_serve_takes_a_loopback_address_silently(
    host: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loopback address (the default, or localhost) is this machine's only: no --public, no warning."""
    bound = _bind_replaced(monkeypatch)
    assert main(["tracker", "serve", "--root", str(tmp_path / "db"), "--host", host, "--port", "0"]) == 0
    assert bound == [host]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_tracker_serve_public_warns_on_stderr(
    host: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--public serves the address given (the bind replaced: a test never listens beyond loopback), warning once."""
    bound = _bind_replaced(monkeypatch)
    assert main(["tracker", "serve", "--root", str(tmp_path / "db"), "--host", host, "--port", "0", "--public"]) == 0
    assert bound == [host]
    out, err = capsys.readouterr()
    assert err == (
        f"crashsweep: warning: --public: the tracker at {host}:0 has no authentication:"
        " anyone who reaches it can read and change every space\n"
    )
    assert out.startswith("tracker (keyed) serving ")


def _bind_replaced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the tracker's bind and its serving loop; the hosts it was asked to bind."""
    from types import SimpleNamespace

    from crashsweep.realsweep import api

    bound: list[str] = []

    def fake_server(root: Path, mode: str, host: str, port: int, *, quiet: bool) -> object:
        bound.append(host)
        return SimpleNamespace(url=f"http://{host}:{port}")

    monkeypatch.setattr(api, "tracker_server", fake_server)
    monkeypatch.setattr(api, "serve_tracker", lambda server: None)
    return bound


def test_tracker_serve_takes_tracker_and_mode_as_its_deprecated_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--tracker as every other command names it; --mode still works, hidden, with a one-line warning."""
    _bind_replaced(monkeypatch)
    root = ["tracker", "serve", "--root", str(tmp_path / "db"), "--port", "0"]
    assert main([*root, "--tracker", "keyless"]) == 0
    out, err = capsys.readouterr()
    assert (out.startswith("tracker (keyless) serving "), err) == (True, "")
    assert main([*root, "--mode", "keyless"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("tracker (keyless) serving ")
    assert err == "crashsweep: warning: --mode is deprecated: give --tracker keyless\n"
    assert main([*root, "--tracker", "keyed", "--mode", "keyless"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["tracker", "serve", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--tracker [keyed|keyless]" in help_text
    assert "--mode" not in help_text
