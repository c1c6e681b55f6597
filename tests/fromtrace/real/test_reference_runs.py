"""from-trace on real runs of the reference loop: three designs, each recorded once, derived, conformed at depth 2.

Each design is run as a user records it (spec/FROM_TRACE.md; docs/guide/from-trace.md):
`CRASHSWEEP_OTLP=FILE crashsweep sweep DESIGN --list-points --format json`, one uninterrupted
process of the reference loop tracing itself, whose listing is kept to compare the points with.
Then `crashsweep from-trace FILE --out DIR`. The expectations are not from-trace's output: the
design must be the shipped one (variants/presets.py for save-after-reply and keys-and-markers,
the shipped file attempt-markers-memory.toml), field for field (the fields one run cannot
show take the values spec/FROM_TRACE.md 3 names, which are the shipped designs' own); the job
must be the job run (spec/job.py TRIAGE, the shipped triage-approval.toml); the points must be
the listing's, name and pass; and `conform --depth 2` of the shipped design beside the derived
one must find no difference between model and real for either, with equal rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli import shipped
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import Policy, read_design_file
from crashsweep.variants.presets import BUILT_IN
from tests.paths import ROOT
from tests.realsweep.helpers import child_env

DESIGNS = {
    "save-after-reply": ("--variant", "triage"),
    "keys-and-markers": ("--variant", "triage"),
    "attempt-markers-memory": ("--design", "triage-approval"),
}
"""Each design, the option that takes it and the job it runs (a shipped job's name)."""


def _crashsweep(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "crashsweep", *args]
    return subprocess.run(command, cwd=ROOT, env=env or child_env(), capture_output=True, text=True, check=False)


@pytest.fixture(scope="module", params=sorted(DESIGNS))
def derived(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, list[str]]:
    """(design, the folder from-trace wrote, the listing's points as NAME#PASS) of one recorded run."""
    name: str = request.param
    option, job = DESIGNS[name]
    folder = tmp_path_factory.mktemp(name)
    env = child_env(CRASHSWEEP_OTLP=str(folder / "run.jsonl"))
    listed = _crashsweep("sweep", option, name, "--job", job, "--list-points", "--format", "json", env=env)
    assert listed.returncode == 0, listed.stderr
    points = [f"{p['name']}#{p['occurrence']}" for p in json.loads(listed.stdout)["points"]]
    done = _crashsweep("from-trace", str(folder / "run.jsonl"), "--out", str(folder / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return name, folder / "out", points


def _shipped(name: str) -> tuple[Policy, Job]:
    if name == "attempt-markers-memory":
        design = read_design_file(shipped.files("design")[name])[2]
        return design, load_job(shipped.files("job")["triage-approval"])
    return {p.name: p.policy for p in BUILT_IN}[name], TRIAGE


def test_the_design_and_the_job_are_the_ones_run(derived: tuple[str, Path, list[str]]) -> None:
    name, out, _ = derived
    policy, job = _shipped(name)
    assert read_design_file(out / "design.toml")[2] == policy
    assert load_job(out / "job.toml") == job


def test_the_points_are_the_listings(derived: tuple[str, Path, list[str]]) -> None:
    _, out, points = derived
    lines = (out / "points.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == points


def _rows(text: str) -> dict[str, list[str]]:
    """conform's rows by their label, "NAME (model)" / "NAME (real)", to their figures and verdict."""
    rows = {}
    for line in text.splitlines():
        for side in (" (model) ", " (real) "):
            if side in line:
                label, _, rest = line.strip().partition(side)
                rows[label + side.rstrip()] = rest.split()
    return rows


def test_conform_at_depth_2_agrees_with_the_shipped_design(derived: tuple[str, Path, list[str]]) -> None:
    name, out, _ = derived
    option = "--variants" if DESIGNS[name][0] == "--variant" else "--design"
    done = _crashsweep(
        "conform", option, name, "--design", str(out / "design.toml"), "--job", str(out / "job.toml"),
        "--depth", "2", "--color", "never",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr  # model and real agree, for both designs
    rows = _rows(done.stdout)
    ours = f"{name}-from-trace"
    assert rows[f"{ours} (model)"] == rows[f"{name} (model)"] == rows[f"{name} (real)"] == rows[f"{ours} (real)"]
