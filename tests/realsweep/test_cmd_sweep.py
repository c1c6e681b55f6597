"""The commands: `sweep` of a design and of your own loop, `conform`, and `tracker serve`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli import main
from realsweep.tracker_client import TrackerClient
from tests.realsweep.helpers import child_env

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
CRASHSWEEP = str(Path(sys.executable).with_name("crashsweep"))
EXAMPLE = [CRASHSWEEP, "sweep", "--target", "my_loop:run", "--check", "my_loop_check:check"]


def test_sweep_of_a_design_prints_the_explorers_columns(capsys: pytest.CaptureFixture[str]) -> None:
    """save-after-reply at depth 1: 34 scenarios, 9 with a duplicate, exit 1 (no-duplicate violated)."""
    status = main(["sweep", "--variant", "save-after-reply", "--depth", "1", "--format", "json", "--workers", "2"])
    data = json.loads(capsys.readouterr().out)
    assert status == 1
    assert (data["crash_points"], data["scenarios"], data["with_dups"], data["dups"]) == (34, {"1": 34}, 9, 9)
    assert data["invariants"]["no-duplicate"]["holds"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep"], "give either --variant"),
        (["sweep", "--variant", "nope"], "unknown variant 'nope'"),
        (["sweep", "--target", "my_loop:run"], "--target needs --check"),
        (["sweep", "--variant", "agent-loop", "--target", "x:y"], "give either --variant"),
        (["sweep", "--target", "my_loop:run", "--check", "nothing"], "expected module:function"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Usage errors: exit 2 and one line on stderr, no traceback."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_the_readme_example_sweeps_clean_against_a_keyed_tracker() -> None:
    """docs/examples/my_loop.py at depth 2 through the real command: no duplicate, nothing missing, exit 0."""
    done = subprocess.run(
        [*EXAMPLE, "--depth", "2"],
        cwd=EXAMPLES,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "crash points  5" in done.stdout
    assert "1 crash: 5   2 crashes: 12   (17 in all)" in done.stdout
    assert "no-duplicate  holds" in done.stdout


def test_the_example_against_a_keyless_tracker_finds_the_duplicate() -> None:
    """The same loop against a tracker that ignores keys: a crash after `filed` files the issue twice."""
    done = subprocess.run(
        [*EXAMPLE, "--depth", "1", "--tracker", "keyless"],
        cwd=EXAMPLES,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "no-duplicate  VIOLATED  first in scenario 2: crash at point 2 'filed disk full on db-1'" in done.stdout


def test_conform_prints_both_rows_and_no_difference(capsys: pytest.CaptureFixture[str]) -> None:
    """idempotency-keys at depth 1: the model's row, the real row, and "no difference"."""
    assert main(["conform", "--variants", "idempotency-keys", "--depth", "1"]) == 0
    out = capsys.readouterr().out
    assert "idempotency-keys (model)" in out
    assert "idempotency-keys (real)" in out
    assert "idempotency-keys: no difference" in out


def test_tracker_serve_answers_until_stopped(tmp_path: Path) -> None:
    """`crashsweep tracker serve --port 0` prints its URL, answers, and stops on SIGTERM."""
    command = [CRASHSWEEP, "tracker", "serve", "--root", str(tmp_path / "db"), "--port", "0", "--mode", "keyless"]
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


MY_DESIGN = Path(__file__).resolve().parents[2] / "docs" / "my-design.toml"


def test_the_example_design_file_is_swept_for_real(capsys: pytest.CaptureFixture[str]) -> None:
    """sweep --design docs/my-design.toml: real processes, the explorer's crash points, nothing duplicated."""
    assert main(["explore", "--design", str(MY_DESIGN), "--depth", "1", "--format", "json"]) == 0
    modelled = json.loads(capsys.readouterr().out)
    status = main(["sweep", "--design", str(MY_DESIGN), "--depth", "1", "--format", "json", "--workers", "2"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    assert data["variant"] == "my-design"
    assert data["crash_points"] == modelled["crash_points"]
    assert (data["with_dups"], data["missing"]) == (0, 0)


def test_conform_takes_a_design_file(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["conform", "--design", str(MY_DESIGN), "--workers", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert "my-design: no difference" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep", "--variant", "agent-loop", "--design", str(MY_DESIGN)], "give either --variant or --design"),
        (["sweep", "--design", "/nonexistent.toml"], "cannot read design file"),
        (["conform", "--design", "/nonexistent.toml"], "cannot read design file"),
    ],
)
def test_bad_design_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
