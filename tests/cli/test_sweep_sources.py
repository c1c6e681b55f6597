"""What `crashsweep sweep` sweeps: option combinations, the framework source's command, the report."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from crashsweep.cli import sweep_sources
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepResult
from crashsweep.spec.job import TRIAGE_TOML


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "give either"),
        ({"variant": "v", "framework": "dbos"}, "give either"),
        ({"target_spec": "m:f"}, "--target needs --check"),
        ({"variant": "v", "target_args": ("a=1",)}, "--check and --arg go with --target"),
        ({"variant": "v", "framework_options": ("on", None, None)}, "go with --framework"),
        ({"framework": "dbos", "framework_options": (None, None, "exit")}, "--durability goes with"),
    ],
)
def test_options_that_do_not_go_together_are_refused(given: dict[str, object], message: str) -> None:
    """One source, its own options only."""
    arguments: dict[str, object] = {
        "variant": None,
        "design_path": None,
        "target_spec": None,
        "check_spec": None,
        "target_args": (),
        "framework": None,
        "framework_options": (None, None, None),
        "job_path": None,
    }
    with pytest.raises(click.UsageError, match=message):
        sweep_sources.combination(**{**arguments, **given})  # type: ignore[arg-type]


def test_a_framework_source_names_every_setting_in_its_command(tmp_path: Path) -> None:
    """Defaults made explicit, so that the re-run command means the same setup whatever the defaults."""
    source = sweep_sources.framework_source("langgraph", None, "keyed", None, "fresh", None)
    assert source.command == [
        "crashsweep", "sweep", "--framework", "langgraph", "--keys", "on", "--call-ids", "fresh",
        "--durability", "async", "--tracker", "keyed",
    ]  # fmt: skip
    assert (source.label, source.job) == ("langgraph async, keys on, call IDs fresh", "triage")
    job = tmp_path / "j.toml"
    job.write_text(TRIAGE_TOML)
    dbos = sweep_sources.framework_source("dbos", job, "keyless", "off", None, None)
    assert dbos.command[-4:] == ["--job", str(job), "--tracker", "keyless"]
    assert "--durability" not in dbos.command


def test_the_json_report_lists_the_unreached_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    """Scenario 2 unreached: listed by code in the JSON row; both invariants hold: exit 0."""
    done = ScenarioResult((Crash(1, "a"),), Outcome(applied=1), {}, ())
    missed = ScenarioResult((Crash(2, "b"),), Outcome(), {}, (), unreached=1)
    result = SweepResult(1, ScenarioResult((), Outcome(applied=1), {}, ("a", "b")), (done,), 3, 0.5, (missed,))
    source = sweep_sources.framework_source("dbos", None, "keyed", None, None, None)
    assert sweep_sources.report(result, source, "keyed", "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unreached"] == ["2"]
    assert data["crash_points"] == 2
