"""The built-in DBOS agent recorded for real with $CRASHSWEEP_OTLP, then `crashsweep from-trace` (slow: real processes).

`crashsweep sweep --framework dbos --list-points --format json`, run with CRASHSWEEP_OTLP set,
runs the agent once, uninterrupted (realsweep/adapters/dbos_agent.py), and prints the points it
passed; the agent's process appends its spans to the file (genai_spans.py). `crashsweep
from-trace` reads that file back. What is checked, against what the run itself was, not against
what from-trace printed:

- points.txt's `NAME#PASS` lines are the JSON's names and passes, every one, in order;
- job.toml is spec.job.TRIAGE, the job the agent plays, as a Job value (its name too: the agent
  span's `crashsweep.job` is the job's name, "triage");
- the cassette's asks are the scripted model's replies for TRIAGE (ScriptedModel.reply, asked
  anew in a scratch folder), then the final answer "done";
- keys: each write's span carries the key StepTools sends, the key of ("triage", "step N"), N the
  DBOS step that ran it (by hand from the workflow: step 1 asks, 2 and 3 file create_a and
  create_b, 4 asks, 5 searches, 6 comments, 7 asks); the design reads "run-call". With `--keys
  off` no span has a key and the design reads "none".
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.cassette import read as read_cassette
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.keys import key
from tests.fromtrace.triage_replies import scripted
from tests.paths import ROOT
from tests.realsweep.adapters.test_dbos import expected_points
from tests.realsweep.helpers import child_env, run_python

WRITE_STEPS = {"create_a": 2, "create_b": 3, "comment_a": 6}
"""The DBOS step that runs each write of TRIAGE, by hand from the workflow (see the docstring)."""


def crashsweep(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m crashsweep ARGS` from the checkout, with `env` added; it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-m", "crashsweep", *args], cwd=ROOT, env=child_env(**env), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def listed(json_text: str) -> list[str]:
    """`--list-points --format json`'s points as NAME#PASS."""
    return [f"{point['name']}#{point['occurrence']}" for point in json.loads(json_text)["points"]]


def spans(trace: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(scope name, span) of every span of an OTLP JSON lines file."""
    for line in trace.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    yield scope["scope"]["name"], span


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes as plain values."""
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


@pytest.fixture(scope="module", params=["on", "off"])
def derived(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One traced `--list-points --format json` run (keys on or off), an untraced one, and from-trace's four files."""
    keys = request.param
    folder = tmp_path_factory.mktemp(f"dbos-keys-{keys}")
    trace, out = folder / "run.jsonl", folder / "derived"
    command = ["sweep", "--framework", "dbos", "--keys", keys, "--list-points", "--format", "json"]
    traced = crashsweep(*command, CRASHSWEEP_OTLP=str(trace))
    untraced = crashsweep(*command)
    crashsweep("from-trace", str(trace), "--out", str(out))
    return {
        "keys": keys,
        "trace": trace,
        "listed": listed(traced.stdout),
        "untraced": listed(untraced.stdout),
        "points": [
            line
            for line in (out / "points.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        ],
        "job": load_job(out / "job.toml"),
        "design": tomllib.loads((out / "design.toml").read_text(encoding="utf-8")),
        "cassette": read_cassette(out / "cassette.jsonl"),
    }


def test_the_derived_points_are_the_listed_points_every_one(derived: dict[str, Any]) -> None:
    """Recording changes no point (the untraced run lists the same); they are the 20 the workflow's code gives.

    expected_points() is tests/realsweep/adapters/test_dbos.py's derivation by hand; each name
    is passed once in an uninterrupted run.
    """
    assert derived["points"] == derived["listed"]
    assert derived["listed"] == derived["untraced"]
    assert derived["points"] == [f"{name}#1" for name in expected_points()]


def test_the_derived_job_is_the_job_run(derived: dict[str, Any]) -> None:
    assert derived["job"] == TRIAGE
    assert derived["job"].name == "triage"


def test_the_cassettes_asks_are_the_scripted_models_replies(derived: dict[str, Any], tmp_path: Path) -> None:
    asks = derived["cassette"].asks
    assert [[(c.id, c.tool, dict(c.args)) for c in ask.calls] for ask in asks] == scripted(tmp_path)
    assert [ask.final for ask in asks] == [None, None, "done"]


def test_each_write_span_carries_the_key_sent_and_the_design_reads_it(derived: dict[str, Any]) -> None:
    """Keys on: StepTools' key of ("triage", "step N"); off: none. The scopes are the agent's and the probe's only."""
    found = list(spans(derived["trace"]))
    assert {scope for scope, _ in found} == {"crashsweep.adapters", "crashsweep"}  # DBOS's own tracing is off
    tools = [attributes(span) for _, span in found if span["name"].startswith("execute_tool ")]
    sent = {a["gen_ai.tool.call.id"]: a.get("crashsweep.idempotency_key") for a in tools}
    if derived["keys"] == "on":
        assert sent == {"search": None} | {call: key("triage", f"step {n}") for call, n in WRITE_STEPS.items()}
        assert derived["design"]["keys"] == "run-call"
    else:
        assert sent == dict.fromkeys(["create_a", "create_b", "search", "comment_a"])
        assert derived["design"]["keys"] == "none"


UNTRACED = (
    "import sys\n"
    "from crashsweep.realsweep.adapters import dbos_agent\n"
    "status = dbos_agent.main([])\n"
    "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    "raise SystemExit(status)\n"
)


def test_without_the_variable_nothing_of_opentelemetry_is_imported(tmp_path: Path) -> None:
    """The agent's process, run to its end untraced, has loaded no module of OpenTelemetry and written no spans."""
    with ServiceProcess(tmp_path / "tracker", "keyed") as service:
        done = run_python(
            UNTRACED, tmp_path, CRASHSWEEP_TRACKER_URL=service.space_url("untraced"), CRASHSWEEP_WORKDIR=str(tmp_path)
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["model-ledger.jsonl"]  # the model's ledger only
