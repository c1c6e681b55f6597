"""The Ray engine on a local Ray instance: the same JSON as the local engine, and its refusals.

One local Ray instance serves the whole module (started by `RayEngine`, as the command starts
it without --address; stopped at the end). The commands run in this process find it connected
and use it. The rows and scenario files are compared with the local engine's byte for byte,
but for the seconds a sweep took; the local engine's rows are themselves checked against the
model's elsewhere (test_graph.py, test_conformance.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crashsweep import variants
from crashsweep.cli.main import main
from crashsweep.explorer.search import explore
from crashsweep.realsweep.engines.ray import LOOPBACK, RayEngine, check_address
from crashsweep.realsweep.sweep import Outcome, Scenario, SweepOptions, Target, sweep
from crashsweep.realsweep.values import SweepError
from crashsweep.reports.summary import summarize
from crashsweep.spec.job import load_job
from crashsweep.spec.tracker import TRACKERS
from tests.paths import ROOT
from tests.published import SEED_TABLE
from tests.realsweep.helpers import child_env
from tests.test_pause_oracle import HAND_DUPLICATING

os.environ.setdefault(LOOPBACK, "0")  # whichever test imports ray first, Ray's nodes stay on loopback


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[RayEngine]:
    """A local Ray instance of two CPUs for the module, on loopback; the tests' commands reuse its connection."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'crashsweep[ray]')")
    with RayEngine(workers=2) as engine:
        assert ray.util.get_node_ip_address() == "127.0.0.1"
        yield engine


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(args)
    return status, capsys.readouterr().out


def _compare(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """Run `args` on each engine; assert equal status, JSON rows (seconds aside) and scenario files."""
    rows, files = [], []
    for engine in ("local", "ray"):
        scenarios = tmp_path / f"{engine}.jsonl"
        extra = ["--format", "json", "--workers", "2", "--scenarios", str(scenarios), "--engine", engine]
        status, out = _run([*args, *extra], capsys)
        row = json.loads(out)
        del row["seconds"]
        rows.append((status, json.dumps(row, indent=2)))
        files.append(scenarios.read_bytes())
    assert rows[0] == rows[1]
    assert files[0] == files[1]
    assert files[0]  # a scenario file with something in it
    parsed: dict[str, Any] = json.loads(rows[0][1])
    return parsed


@pytest.mark.parametrize("variant", ["idempotency-keys"])
def test_ray_gives_the_local_json_of_the_reference_loop_at_depth_2(
    ray_instance: RayEngine, variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Merging worlds with snapshots (the default): the same row, worlds and processes, and the same scenarios.

    The figures themselves are the published table's (SEMANTICS.md section 8, depth 2, keyed).
    One design: what is compared is the engine, and save-once-per-turn (the largest graph, 12 s
    here) goes through Ray at depth 1 below, killed for real and from scratch, and at depth 2
    under faults.
    """
    row = _compare(["sweep", "--variant", variant, "--depth", "2"], tmp_path, capsys)
    once, twice, with_dups, dups, missing, asks, calls = SEED_TABLE[variant]
    assert row["scenarios"] == {"1": once, "2": twice}
    assert (row["with_dups"], row["dups"], row["missing"], row["asks"], row["calls_plus"]) == (
        with_dups,
        dups,
        missing,
        asks,
        calls,
    )
    assert row["crashed_worlds"] == "snapshots"


@pytest.mark.parametrize("how", [["--kill"], ["--no-dedup"]])
def test_ray_gives_the_local_json_with_real_kills_and_without_merging(
    ray_instance: RayEngine, how: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--kill (one killed process per point) and --no-dedup (every scenario from scratch), at depth 1.

    The published table's depth 1 is its depth 2's one-crash column: 18 scenarios.
    """
    row = _compare(["sweep", "--variant", "save-once-per-turn", "--depth", "1", *how], tmp_path, capsys)
    assert row["scenarios"] == {"1": SEED_TABLE["save-once-per-turn"][0]}


ONE_WRITE = """
name = "one-write"
turns = [["create_a"]]

[calls]
create_a = { tool = "create_issue", writes = true }
"""
"""A job of one write (test_graph.py's): few points, so that a depth-2 sweep with faults stays small."""


@pytest.mark.parametrize(
    ("variant", "faults"),
    [("save-once-per-turn", ("lost-reply",)), ("idempotency-keys", ("key-expiry", "lost-reply"))],
)
def test_ray_gives_the_local_json_under_faults_at_depth_2(
    ray_instance: RayEngine,
    variant: str,
    faults: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--faults at depth 2: faults as moves of the merging sweep, the same row and scenarios on Ray.

    Lost replies are processes sent with their faults; an expired world is made by an actor
    from the archive of the world it copies. The figures themselves are the model explorer's
    for the same design, job and faults (an independent implementation of the rules): its
    scenarios per move count and its tally of crashes and faults per move count.
    """
    job_path = tmp_path / "one-write.toml"
    job_path.write_text(ONE_WRITE)
    args = ["sweep", "--variant", variant, "--job", str(job_path), "--depth", "2"]
    row = _compare([*args, "--faults", ",".join(faults)], tmp_path, capsys)
    model = explore(variants.model(variant, load_job(job_path), TRACKERS["keyed"], faults=faults), 2)
    expected = summarize(model, variant=variant, job="one-write", tracker="keyed", faults=faults).to_json()
    for fault in faults:  # each fault two moves deep: after a crash or another fault
        assert row["moves"]["2"][fault] > 0, fault
    for key in ("scenarios", "moves", "with_dups", "dups", "missing"):
        assert row[key] == expected[key], key


def test_ray_gives_the_local_json_of_a_pause_sweep(
    ray_instance: RayEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--faults pause (every scenario from scratch, depth 1): a pause scenario is one unit, run by an actor's runner.

    agent-loop-os-lock on one-write: no duplicate (derived by hand in tests/test_pause_oracle.py).
    """
    examples = ROOT / "examples"
    args = ["sweep", "--design", str(examples / "agent-loop-os-lock.toml"), "--job", str(examples / "one-write.toml")]
    row = _compare([*args, "--depth", "1", "--faults", "pause"], tmp_path, capsys)
    assert row["with_dups"] == HAND_DUPLICATING["os-lock"]
    assert row["moves"]["1"]["pause"] == row["crash_points"]  # the refused restart: one wake choice per pause


def test_conform_on_ray_agrees_with_the_model(ray_instance: RayEngine, capsys: pytest.CaptureFixture[str]) -> None:
    """conform shares the engine: the real rows made on Ray equal the model's."""
    status, out = _run(["conform", "--variants", "save-once-per-turn", "--engine", "ray", "--workers", "2"], capsys)
    assert status == 0, out
    assert "no difference" in out


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--address", "127.0.0.1:1"], "--address goes with --engine ray"),
        (["--engine", "ray", "--keep", "kept"], "--engine ray takes no --keep"),
        (["--engine", "ray", "--crash", "x"], "--engine ray takes no --crash"),
        (["--engine", "ray", "--address", "nowhere"], "--address nowhere: expected HOST:PORT"),
    ],
)
def test_bad_engine_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any process starts: one line on stderr, exit 2."""
    assert main(["sweep", "--variant", "agent-loop", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err


def test_an_address_where_no_cluster_answers_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """No connection at the address: refused in a few seconds, one line, exit 2 (sweep and conform)."""
    address = f"127.0.0.1:{_closed_port()}"
    for command in (["sweep", "--variant", "agent-loop"], ["conform"]):
        assert main([*command, "--engine", "ray", "--address", address]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert err.startswith(f"crashsweep: error: --address {address}: no Ray cluster answers there")


def test_ray_missing_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without Ray importable: one line naming pip install 'crashsweep[ray]', exit 2."""
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    assert main(["sweep", "--variant", "agent-loop", "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert err == ("crashsweep: error: --engine ray needs Ray, which is not installed: pip install 'crashsweep[ray]'\n")


def test_check_address_takes_the_forms_ray_documents() -> None:
    """HOST:PORT and ray://HOST:PORT are tried; auto is left to Ray; anything else is refused."""
    check_address("auto")
    for bad in ("localhost", "ray://", ":80", "host:port"):
        with pytest.raises(SweepError, match="expected HOST:PORT"):
            check_address(bad)
    with pytest.raises(SweepError, match="no Ray cluster answers there"):
        check_address(f"ray://127.0.0.1:{_closed_port()}")


def test_a_check_that_cannot_travel_is_one_error_before_any_process(ray_instance: RayEngine, tmp_path: Path) -> None:
    """A check holding a lock cannot be pickled for the actors: a SweepError, not Ray's traceback."""
    lock = threading.Lock()

    def check(scenario: Scenario) -> Outcome:
        with lock:
            return Outcome()

    options = SweepOptions(depth=1, workers=2, tracker=None, dedup=True, engine=ray_instance)
    with pytest.raises(SweepError, match=r"^cannot send the sweep to Ray: TypeError: cannot pickle '_thread.lock'"):
        sweep(Target.command("true"), check, options)


def test_a_cluster_started_with_ray_start_is_used_at_its_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's cluster steps on one machine: `ray start --head`, then the command with --address.

    The command on the cluster runs as its own process (this one is connected to the module's
    instance); its row equals the local engine's (run here, in this process) but for the
    seconds. The head is stopped by its own signal handling (`--block`: SIGTERM stops every
    process it started).
    """
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip("Ray is not installed (pip install 'crashsweep[ray]')")
    args = ["sweep", "--variant", "save-once-per-turn", "--depth", "1", "--format", "json", "--workers", "2"]
    status, out = _run([*args, "--engine", "local"], capsys)
    assert status == 1  # save-once-per-turn duplicates
    local = json.loads(out)
    del local["seconds"]
    port = _closed_port()
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false", "--block"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, LOOPBACK: "0"},
    )
    try:
        _wait_until_listening(port)
        command = [str(Path(sys.executable).with_name("crashsweep")), *args, "--engine", "ray"]
        env = {**child_env(), LOOPBACK: "0", "RAY_AUTH_MODE": "token"}  # the head made a token: use it
        done = subprocess.run(
            [*command, "--address", f"127.0.0.1:{port}"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        row = json.loads(done.stdout)
        del row["seconds"]
        assert row == local
        assert row["scenarios"] == {"1": SEED_TABLE["save-once-per-turn"][0]}
    finally:
        head.terminate()
        head.wait(timeout=60)


def _wait_until_listening(port: int, timeout: float = 120.0) -> None:
    """Wait for the head's GCS to accept connections on loopback `port` (a bounded number of tries)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f"ray start --head did not listen on port {port} within {timeout:g} s") from None
            time.sleep(0.5)
