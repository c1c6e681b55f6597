"""`crashsweep from-trace dbos.sqlite` on the system databases of the built-in DBOS and pydantic-ai agents (slow).

Each agent (realsweep/adapters/dbos_agent.py, pydantic_ai_agent.py) runs once, uninterrupted, in
a work folder against a tracker service, recording the crash points it passes
($CRASHSWEEP_POINTS_LOG: what `sweep --list-points` lists); `crashsweep from-trace` then reads
its work/dbos.sqlite. What is checked, against what the run itself was:

- job.toml is spec.job.TRIAGE, the job both agents play (its name: the workflow's, or
  pydantic-ai's agent's, "triage");
- the cassette's asks are the scripted model's replies for TRIAGE (ScriptedModel.reply, asked
  anew in a scratch folder); the final answer's text is pydantic-ai's ("done: 2 tool turn(s)",
  ScriptedFunction's) and, for DBOS's agent, empty: its step records only the reply's calls;
- DBOS's agent: points.txt's lines are the points the run passed, every one in order, and the 20
  of tests/realsweep/adapters/test_dbos.py's hand derivation; pydantic-ai: none (its tools'
  results are not recorded), though the run passed 12;
- the design's decided fields: DBOS's agent, the `dbos` preset's (startup_save, reply_save,
  result_saves, markers, lock; keys not decided: DBOS records no key a call sent); pydantic-ai,
  the same but result_saves "none" (its tools are no steps: pydantic_ai.py's docstring);
- a run that crashed and was recovered (`sweep --crash "before recording step 2" --keep DIR`,
  the kept scenario's database) is refused in one line and nothing is written.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.cassette import read as read_cassette
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.variants.presets import FRAMEWORKS
from tests.fromtrace.triage_replies import scripted
from tests.paths import ROOT
from tests.realsweep.adapters.test_dbos import expected_points
from tests.realsweep.helpers import child_env

AGENTS = {"dbos": "dbos_agent", "pydantic-ai": "pydantic_ai_agent"}
"""Each framework's built-in agent module (crashsweep.realsweep.adapters.NAME)."""
FINAL = {"dbos": "", "pydantic-ai": "done: 2 tool turn(s)"}
DECIDED = ("startup_save", "reply_save", "result_saves", "markers", "lock")


def crashsweep(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m crashsweep ARGS` from the checkout."""
    command = [sys.executable, "-m", "crashsweep", *args]
    return subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, check=False)


def lines(path: Path) -> list[str]:
    """A points file's points (its comments and blank lines left out)."""
    text = path.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module", params=list(AGENTS))
def derived(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One uninterrupted run of the framework's agent, the points it passed, from-trace's files from its database."""
    framework = request.param
    folder = tmp_path_factory.mktemp(f"{framework}-store")
    work, log, out = folder / "work", folder / "points.log", folder / "derived"
    work.mkdir()
    agent = [sys.executable, "-m", f"crashsweep.realsweep.adapters.{AGENTS[framework]}"]
    with ServiceProcess(folder / "tracker", "keyed") as service:
        env = child_env(
            CRASHSWEEP_TRACKER_URL=service.space_url("run"),
            CRASHSWEEP_WORKDIR=str(work),
            CRASHSWEEP_POINTS_LOG=str(log),
        )
        done = subprocess.run(agent, cwd=work, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    made = crashsweep("from-trace", str(work / "dbos.sqlite"), "--out", str(out))
    assert made.returncode == 0, made.stdout + made.stderr
    return {
        "framework": framework,
        "passed": log.read_text(encoding="utf-8").splitlines(),
        "points": lines(out / "points.txt"),
        "job": load_job(out / "job.toml"),
        "design": tomllib.loads((out / "design.toml").read_text(encoding="utf-8")),
        "design_text": (out / "design.toml").read_text(encoding="utf-8"),
        "cassette": read_cassette(out / "cassette.jsonl"),
    }


def test_the_derived_job_is_the_job_run(derived: dict[str, Any]) -> None:
    assert derived["job"] == TRIAGE
    assert derived["job"].name == "triage"


def test_the_cassettes_asks_are_the_scripted_models_replies(derived: dict[str, Any], tmp_path: Path) -> None:
    asks = derived["cassette"].asks
    assert [[(c.id, c.tool, dict(c.args)) for c in ask.calls] for ask in asks] == scripted(tmp_path)
    assert [ask.final for ask in asks] == [None, None, FINAL[derived["framework"]]]


def test_the_points_are_the_runs_every_one_or_none_when_the_records_cannot_say(derived: dict[str, Any]) -> None:
    """DBOS's agent: the points passed, as NAME#1 (each once), the hand derivation's 20. pydantic-ai: none of its 12."""
    if derived["framework"] == "dbos":
        assert derived["points"] == [f"{name}#1" for name in derived["passed"]]
        assert derived["passed"] == expected_points()
    else:
        assert derived["points"] == []
        assert len(derived["passed"]) == 12  # 1 start + 3 model steps x 2 + 3 tracker writes + 2 around the status


def test_the_decided_design_fields_are_the_frameworks(derived: dict[str, Any]) -> None:
    """Each field the records decide is the `dbos` preset's; pydantic-ai's tools are no steps: no result saved."""
    preset = next(p for p in FRAMEWORKS if p.name == "dbos").policy
    expected = {name: getattr(preset, name) for name in DECIDED}
    if derived["framework"] == "pydantic-ai":
        expected["result_saves"] = "none"
    assert {name: derived["design"][name] for name in DECIDED} == expected
    text = derived["design_text"]
    for name in DECIDED:
        comment = text.split(f"\n{name} = ")[1].splitlines()[1]
        assert comment.startswith("  # read from: "), name


@pytest.mark.parametrize("framework", list(AGENTS))
def test_a_run_recovered_after_a_crash_is_refused_and_nothing_written(framework: str, tmp_path: Path) -> None:
    """The kept scenario of a crash before step 2's record, recovered by the restart: DBOS counts a recovery."""
    kept, out = tmp_path / "kept", tmp_path / "derived"
    swept = crashsweep("sweep", "--framework", framework, "--crash", "before recording step 2", "--keep", str(kept))
    assert swept.returncode == 0, swept.stdout + swept.stderr
    database = kept / "scenarios" / "s-0" / "work" / "dbos.sqlite"
    made = crashsweep("from-trace", str(database), "--out", str(out))
    assert made.returncode == 2
    assert made.stderr.splitlines() == [
        f"crashsweep: error: {database}: workflow triage was recovered after it started (recovery_attempts 2): "
        "from-trace reads one uninterrupted run"
    ]
    assert not out.exists()
