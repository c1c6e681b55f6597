"""The built-in Temporal agent's history, then `crashsweep from-trace` (slow: a dev server and real processes).

The agent (realsweep/adapters/temporal_agent.py) runs once, uninterrupted, on a dev server of the
module's own (the adapter's DevServer, $CRASHSWEEP_TEMPORAL_ADDRESS), in a work folder against a
tracker service, recording the crash points it passes ($CRASHSWEEP_POINTS_LOG: what `sweep
--list-points` lists); it leaves its history in the work folder as temporalio's
`WorkflowHistory.to_json()` writes it (temporal.keep_history), and `temporal workflow show
--output json` prints it again from the server. `crashsweep from-trace` reads both. What is
checked, against what the run itself was:

- both files read as the same run, and job.toml is spec.job.TRIAGE (its name the workflow's type,
  "triage");
- the cassette's asks are the scripted model's replies for TRIAGE (ScriptedModel.reply, asked anew
  in a scratch folder), then the final answer "": the model's activity returns the reply's calls
  only;
- points.txt's lines are the points the run passed, each once, the 17 of
  tests/realsweep/adapters/test_temporal.py's hand derivation, and `sweep --framework temporal
  --list-points --format json`'s;
- the fields the history decides are those of tests/realsweep/adapters/test_temporal_agent.py's
  design of the agent (variants/presets.py has no Temporal preset); keys are not decided;
- a run that crashed and was retried (`sweep --crash "before activity run_tool 2" --keep DIR`,
  the kept scenario's history) is refused in one line and nothing is written.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from crashsweep.fromtrace import temporal_store
from crashsweep.fromtrace.design import fields
from crashsweep.realsweep.adapters.script import ScriptedModel
from crashsweep.realsweep.adapters.temporal import HISTORY, SCENARIO, DevServer, temporal_binary
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.cassette import read as read_cassette
from crashsweep.spec.job import TRIAGE, load_job
from tests.paths import ROOT
from tests.realsweep.adapters.test_temporal import expected_points
from tests.realsweep.adapters.test_temporal_agent import DESIGN
from tests.realsweep.helpers import child_env

AGENT = "crashsweep.realsweep.adapters.temporal_agent"
SHOWN = ("startup_save", "reply_save", "result_saves", "markers", "lock")


def crashsweep(*args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
    """`python -m crashsweep ARGS` from the checkout; it must exit with `status`."""
    command = [sys.executable, "-m", "crashsweep", *args]
    done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, check=False)
    assert done.returncode == status, done.stdout + done.stderr
    return done


def lines(path: Path) -> list[str]:
    """A points file's points (its comments and blank lines left out)."""
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One uninterrupted run: its history in both shapes, the points it passed, from-trace's files from the SDK's."""
    folder = tmp_path_factory.mktemp("temporal-store")
    work, log, out = folder / "work", folder / "points.log", folder / "derived"
    work.mkdir()
    server = DevServer()
    try:
        with ServiceProcess(folder / "tracker", "keyed") as service:
            env = child_env(
                CRASHSWEEP_TRACKER_URL=service.space_url("run"),
                CRASHSWEEP_WORKDIR=str(work),
                CRASHSWEEP_POINTS_LOG=str(log),
                CRASHSWEEP_TEMPORAL_ADDRESS=server.address,
            )
            done = subprocess.run([sys.executable, "-m", AGENT], cwd=work, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        workflow = "triage-" + json.loads((work / SCENARIO).read_text(encoding="utf-8"))["suffix"]
        show = [temporal_binary(), "workflow", "show", "--workflow-id", workflow, "--address", server.address]
        shown = subprocess.run([*show, "--output", "json"], capture_output=True, text=True, check=True, timeout=60)
    finally:
        server.stop()
    cli = folder / "cli.json"
    cli.write_text(shown.stdout, encoding="utf-8")
    crashsweep("from-trace", str(work / HISTORY), "--out", str(out))
    return {"sdk": work / HISTORY, "cli": cli, "out": out, "passed": log.read_text(encoding="utf-8").splitlines()}


def test_both_shapes_of_the_history_read_as_the_same_run(recorded: dict[str, Any]) -> None:
    sdk, cli = temporal_store.read(recorded["sdk"]), temporal_store.read(recorded["cli"])
    assert cli == dataclasses.replace(sdk, path=recorded["cli"])
    assert (sdk.job, sdk.spans) == ("triage", 47)  # 1 start, 7 activities x 6 events, a last task's 3 and the close


def test_the_derived_job_and_cassette_are_the_job_run(recorded: dict[str, Any], tmp_path: Path) -> None:
    assert load_job(recorded["out"] / "job.toml") == TRIAGE
    model = ScriptedModel(TRIAGE, folder=tmp_path)
    replies = [[(c.id, c.name, c.args) for c in model.reply(turn) or []] for turn in range(len(TRIAGE.turns) + 1)]
    asks = read_cassette(recorded["out"] / "cassette.jsonl").asks
    assert [[(c.id, c.tool, dict(c.args)) for c in ask.calls] for ask in asks] == replies
    assert [ask.final for ask in asks] == [None, None, ""]


def test_the_derived_points_are_the_runs_every_one_and_the_listings(recorded: dict[str, Any]) -> None:
    listing = crashsweep("sweep", "--framework", "temporal", "--list-points", "--format", "json")
    listed = [f"{p['name']}#{p['occurrence']}" for p in json.loads(listing.stdout)["points"]]
    assert lines(recorded["out"] / "points.txt") == [f"{name}#1" for name in recorded["passed"]] == listed
    assert recorded["passed"] == expected_points()


def test_the_decided_fields_are_the_agents_design(recorded: dict[str, Any]) -> None:
    """startup_save, reply_save, result_saves, markers and lock decided as the design's; keys not decided."""
    design = tomllib.loads(DESIGN.replace("BUDGET", ""))
    found = {f.name: (f.value, f.decided) for f in fields(temporal_store.read(recorded["sdk"]))}
    assert {name: found[name] for name in SHOWN} == {name: (design[name], True) for name in SHOWN}
    assert found["keys"] == ("none", False)
    derived = tomllib.loads((recorded["out"] / "design.toml").read_text(encoding="utf-8"))
    assert {name: derived[name] for name in SHOWN} == {name: design[name] for name in SHOWN}


def test_a_run_retried_after_a_crash_is_refused_and_nothing_written(tmp_path: Path) -> None:
    """The kept scenario of a crash inside run_tool 2's attempt: the restart's attempt 2 follows a timeout."""
    kept, out = tmp_path / "kept", tmp_path / "derived"
    crashsweep("sweep", "--framework", "temporal", "--crash", "before activity run_tool 2", "--keep", str(kept))
    history = kept / "scenarios" / "s-0" / "work" / HISTORY
    made = crashsweep("from-trace", str(history), "--out", str(out), status=2)
    assert made.stderr.splitlines() == [
        f"crashsweep: error: {history}: activity run_tool 2 was retried after its attempt 1 timed out "
        "(activity StartToClose timeout; event 12: a worker crash?): from-trace reads one uninterrupted run"
    ]
    assert not out.exists()
