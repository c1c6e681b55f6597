"""The built-in LangGraph agent's own checkpoints, then `crashsweep from-trace` (slow: real sweeps).

`crashsweep sweep --framework langgraph --durability D --depth 1 --keep DIR` runs the agent
(realsweep/adapters/langgraph_agent.py: thread "triage", SqliteSaver in work/checkpoints.sqlite)
once uninterrupted, then once per crash point with a restart; DIR keeps each scenario's last
process: its work folder and its points log (`points-N.log`, N the process's number in the
scenario). The uninterrupted run is the one process 1 kept. What is checked, against the runs:

- points.txt is the uninterrupted run's own points log, every name and pass (their order is the
  threads' and not kept by any record), and `--list-points --format json`'s too; for sync and
  async they are tests/realsweep/adapters/test_langgraph.py's 29, by hand from the graph;
- job.toml is spec.job.TRIAGE (its name the thread's, "triage"); the cassette's asks are the
  scripted model's replies for TRIAGE, then its answer "done: 2 tool turn(s)";
- the fields the records show (the saves at the start and after each turn, no marker; under
  "exit" no reply saved) are decided as the durability's preset (variants/presets.py); keys not;
- a restarted process resumed the thread exactly when its points log holds no "before put step
  -1" (a resume writes no input checkpoint; a restart that found nothing saved starts afresh and
  writes it; one that found the thread finished passes no point, and logs none): those
  databases, and only those, are refused as resumed. Under "exit" no restart resumes: nothing is
  saved before the end, so a restart starts afresh or finds the thread finished; every kept
  database reads as one run (the records cannot show such a crash).
- with the derived cassette and points, `sweep --framework langgraph` (same durability) keeps every point.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crashsweep.fromtrace import langgraph_store
from crashsweep.fromtrace.design import fields
from crashsweep.fromtrace.recording import TraceError
from crashsweep.realsweep.adapters.script import ScriptedModel
from crashsweep.spec.cassette import read as read_cassette
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.variants.presets import FRAMEWORKS
from tests.importers.real.kept import swept
from tests.paths import ROOT
from tests.realsweep.adapters.test_langgraph import expected_points
from tests.realsweep.helpers import child_env

DB = "work/checkpoints.sqlite"


def crashsweep(*args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
    """`python -m crashsweep ARGS` from the checkout; it must exit with `status`."""
    command = [sys.executable, "-m", "crashsweep", *args]
    done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, check=False)
    assert done.returncode == status, done.stdout + done.stderr
    return done


def passes(names: list[str]) -> list[str]:
    """Names as NAME#PASS, in order."""
    seen: Counter[str] = Counter()
    found = []
    for name in names:
        seen[name] += 1
        found.append(f"{name}#{seen[name]}")
    return found


@pytest.fixture(scope="module", params=["sync", "async", "exit"])
def derived(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A kept depth-1 sweep, its uninterrupted run's database, the listing, and from-trace's four files."""
    durability = request.param
    kept = swept(tmp_path_factory, "--framework", "langgraph", "--durability", durability)
    (first,) = [p for p in sorted(kept.glob("processes/p*")) if (p / "points-1.log").exists()]
    out = kept.parent / "derived"
    crashsweep("from-trace", str(first / DB), "--out", str(out))
    listing = crashsweep(
        "sweep", "--framework", "langgraph", "--durability", durability, "--list-points", "--format", "json"
    )
    return {
        "durability": durability,
        "kept": kept,
        "db": first / DB,
        "out": out,
        "log": passes((first / "points-1.log").read_text(encoding="utf-8").splitlines()),
        "listed": [f"{p['name']}#{p['occurrence']}" for p in json.loads(listing.stdout)["points"]],
        "points": [
            line
            for line in (out / "points.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        ],
    }


def test_the_derived_points_are_the_runs_own_and_the_listings(derived: dict[str, Any]) -> None:
    assert Counter(derived["points"]) == Counter(derived["log"]) == Counter(derived["listed"])
    assert all(point.endswith("#1") for point in derived["points"])  # each name once in an uninterrupted run
    if derived["durability"] != "exit":
        assert sorted(derived["points"]) == sorted(f"{name}#1" for name in expected_points())


def test_the_derived_job_and_cassette_are_the_job_run(derived: dict[str, Any], tmp_path: Path) -> None:
    assert load_job(derived["out"] / "job.toml") == TRIAGE
    model = ScriptedModel(TRIAGE, folder=tmp_path)
    replies = [[(c.id, c.name, c.args) for c in model.reply(turn) or []] for turn in range(len(TRIAGE.turns) + 1)]
    asks = read_cassette(derived["out"] / "cassette.jsonl").asks
    assert [[(c.id, c.tool, dict(c.args)) for c in ask.calls] for ask in asks] == replies
    assert [ask.final for ask in asks] == [None, None, "done: 2 tool turn(s)"]


def test_the_fields_the_records_show_are_the_presets(derived: dict[str, Any]) -> None:
    """Startup, results and markers (and, under exit, reply_save) decided as the preset; keys not decided."""
    design = tomllib.loads((derived["out"] / "design.toml").read_text(encoding="utf-8"))
    found = {f.name: (f.value, f.decided) for f in fields(langgraph_store.read(derived["db"]))}
    preset = {p.name: p.policy for p in FRAMEWORKS}[f"langgraph-{derived['durability']}"]
    shown = ["startup_save", "result_saves", "markers"] + (["reply_save"] if derived["durability"] == "exit" else [])
    assert {name: found[name] for name in shown} == {name: (getattr(preset, name), True) for name in shown}
    assert {name: design[name] for name in shown} == {name: getattr(preset, name) for name in shown}
    assert found["keys"] == ("none", False)


def test_a_resumed_thread_is_refused_and_only_a_resumed_one(derived: dict[str, Any]) -> None:
    resumed, refused = [], []
    for process in sorted(derived["kept"].glob("processes/p*")):
        logs = sorted(process.glob("points-*.log"))
        restarted = bool(logs) and logs[0].name != "points-1.log" and derived["durability"] != "exit"
        if restarted and "before put step -1" not in logs[0].read_text(encoding="utf-8").splitlines():
            resumed.append(process)
        why = refusal(process / DB)
        if why:
            assert "was resumed before checkpoint step" in why, (process, why)
            refused.append(process)
    assert refused == resumed
    assert bool(resumed) == (derived["durability"] != "exit")
    if resumed:
        command = ["from-trace", str(resumed[0] / DB), "--out", str(derived["out"].parent / "refused")]
        done = crashsweep(*command, status=2)
        assert done.stderr.count("\n") == 1
        assert "from-trace reads one uninterrupted run" in done.stderr


def refusal(path: Path) -> str:
    """Why from-trace refuses the database, or "" when it reads it."""
    try:
        langgraph_store.read(path)
    except TraceError as error:
        return str(error)
    return ""


def test_a_sweep_with_the_derived_cassette_and_points_keeps_every_point(derived: dict[str, Any]) -> None:
    out, durability = derived["out"], derived["durability"]
    cassette, points = ["--cassette", str(out / "cassette.jsonl")], ["--points", f"from:{out / 'points.txt'}"]
    done = crashsweep(
        "sweep", "--framework", "langgraph", "--durability", durability, "--depth", "1", *cassette, *points
    )
    assert f"{len(derived['points'])} of {len(derived['points'])} kept" in done.stdout
