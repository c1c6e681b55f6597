"""What `crashsweep sweep` sweeps: the framework source's command, your own program, the report."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli import sweep_sources
from crashsweep.realsweep import api
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepResult
from crashsweep.spec.job import TRIAGE_TOML
from tests.realsweep.helpers import child_env


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


def test_a_deploy_that_drops_the_keys_duplicates_your_own_program(tmp_path: Path) -> None:
    """--target with --upgrade-to MODULE:FUNCTION: every restart runs the other program (RETRIES.md 2).

    docs/examples/my_loop.py sends idempotency keys and, swept alone against a keyed tracker,
    duplicates nothing. Its "upgrade" here runs the same loop with keys off. A crash at
    `filed <title>` (points 2 and 4) comes after the tracker filed the issue under a key and
    before the save: the restart, upgraded, files it again without a key, which the tracker
    cannot match, so it keeps both. A crash at `run started` or `saved <title>` leaves nothing
    to file again. So at depth 1: 5 points, 2 scenarios with one duplicate each, none lost.
    """
    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    for name in ("my_loop.py", "my_loop_check.py"):
        (tmp_path / name).write_text((examples / name).read_text())
    (tmp_path / "my_loop_v2.py").write_text(
        "import json, os\nimport my_loop\n\n\ndef run() -> None:\n"
        "    os.environ['CRASHSWEEP_ARGS'] = json.dumps({'keys': 'off'})\n    my_loop.run()\n"
    )
    sweep = [CRASHSWEEP, "sweep", "--target", "my_loop:run", "--check", "my_loop_check:check", "--depth", "1"]
    alone = _json(subprocess.run([*sweep, "--format", "json"], cwd=tmp_path, env=child_env(), **CAPTURE))
    assert (alone["crash_points"], alone["with_dups"]) == (5, 0)
    upgrade = [*sweep, "--upgrade-to", "my_loop_v2:run"]
    row = _json(subprocess.run([*upgrade, "--format", "json"], cwd=tmp_path, env=child_env(), **CAPTURE))
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"]) == (5, 2, 2, 0)
    assert row["upgrade_to"] == "my_loop_v2:run"
    text = subprocess.run(upgrade, cwd=tmp_path, env=child_env(), **CAPTURE).stdout
    rerun = next(line for line in text.splitlines() if "re-run" in line).split(":  ", 1)[1]
    assert "--upgrade-to my_loop_v2:run" in rerun
    path = f"{Path(CRASHSWEEP).parent}{os.pathsep}{os.environ['PATH']}"  # where an installed crashsweep is
    again = subprocess.run(shlex.split(rerun), cwd=tmp_path, env=child_env(PATH=path), **CAPTURE)
    assert again.returncode == 1
    assert "dups 1" in again.stdout


CAPTURE: dict[str, Any] = {"capture_output": True, "text": True, "check": False}
CRASHSWEEP = str(Path(sys.executable).with_name("crashsweep"))


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode in (0, 1), done.stderr
    row: dict[str, Any] = json.loads(done.stdout)
    return row


def test_upgrade_refusals_are_one_line_before_any_process(capsys: pytest.CaptureFixture[str]) -> None:
    """--upgrade-to: a name that is neither a design nor a file, a framework, a pause (RETRIES.md 2 rule 3)."""
    from crashsweep.cli.main import main

    for args, message in (
        (["--variant", "agent-loop", "--upgrade-to", "nope"], "neither a design's name"),
        (["--framework", "dbos", "--upgrade-to", "agent-loop"], "not --framework"),
        (
            ["--variant", "agent-loop", "--faults", "pause", "--depth", "1", "--upgrade-to", "save-after-reply"],
            "no --faults pause",
        ),
        (["--variant", "agent-loop", "--upgrade-to", "error-to-model"], "does not implement 'error-to-model'"),
    ):
        assert main(["sweep", *args]) == 2
        err = capsys.readouterr().err
        assert message in err
        assert len(err.strip().splitlines()) == 1, err


def test_a_design_s_retry_layers_are_swept_for_real_and_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """sweep --design with layers: the row's retry figures in JSON; a timeout layer refused deeper than 1.

    keys-run-retry on one-write (no failing tool): the layer's one retry is the move `retry` at
    create_a's `tracker accepted`, the only write (1 retry move beside the crash points); it
    begins run-2, whose new key files create_a again: 1 duplicate in that scenario.
    """
    from crashsweep.cli.main import main

    examples = Path(__file__).resolve().parents[2] / "examples"
    args = ["--design", str(examples / "keys-run-retry.toml"), "--job", str(examples / "one-write.toml")]
    assert main(["sweep", *args, "--depth", "1", "--format", "json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["retries"]["stack"] == "run x2 on error"
    assert row["moves"]["1"]["retry"] == 1
    assert (row["with_dups"], row["dups"]) == (1, 1)  # crashes alone: idempotency-keys' none
    assert row["retries"]["retried"]["retry.run"] == 1
    timeout = ["--design", str(examples / "keys-turn-timeout-file.toml"), "--job", str(examples / "one-write.toml")]
    assert main(["sweep", *timeout, "--depth", "2"]) == 2
    err = capsys.readouterr().err
    assert "times out an attempt in scenarios of one move: use depth 1, not 2" in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_target_whose_module_declares_from_scratch_is_swept_from_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--target M:F whose module sets CRASHSWEEP_FROM_SCRATCH = True: dedup and snapshots off, as --framework temporal.

    The declaration is read from the module's source, which is never imported here (its top
    level would raise); a check in another module is. Without the declaration the options pass
    as given.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "scratch_agent.py").write_text("CRASHSWEEP_FROM_SCRATCH = True\nraise SystemExit('imported')\n")
    (tmp_path / "merging_agent.py").write_text("raise SystemExit('imported')\n")
    (tmp_path / "scratch_check.py").write_text("def check(scenario): ...\n")
    swept: list[api.SweepOptions] = []
    monkeypatch.setattr(api, "sweep", lambda target, check, options, *rest: swept.append(options))
    given = api.SweepOptions(depth=1, dedup=True, snapshots=True)
    for name in ("scratch_agent", "merging_agent"):
        source = sweep_sources.target_source(f"{name}:run", "scratch_check:check", {}, "keyed", api.Nemesis(), None)
        source.run(given, None)  # type: ignore[arg-type]  # no progress: api.sweep is replaced
    assert [(options.dedup, options.snapshots) for options in swept] == [(False, False), (True, True)]
    assert "scratch_agent" not in sys.modules
    assert "merging_agent" not in sys.modules


@pytest.mark.parametrize(
    ("text", "declared"),
    [
        ("CRASHSWEEP_FROM_SCRATCH = True\n", True),
        ("CRASHSWEEP_FROM_SCRATCH: bool = True\n", True),
        ("CRASHSWEEP_FROM_SCRATCH = False\n", False),
        ("CRASHSWEEP_FROM_SCRATCH = True\nCRASHSWEEP_FROM_SCRATCH = False\n", False),
        ("def f():\n    CRASHSWEEP_FROM_SCRATCH = True\n", False),
        (  # docs/examples/my_temporal_agent.py's way, inside temporalio's `with` block
            "with sandbox():\n    from crashsweep.realsweep.adapters.temporal import CRASHSWEEP_FROM_SCRATCH, x\n",
            True,
        ),
        ("from crashsweep.realsweep.adapters.script import CRASHSWEEP_FROM_SCRATCH\n", False),
        ("from .declares import CRASHSWEEP_FROM_SCRATCH\n", True),
        ("try:\n    pass\nexcept ImportError:\n    CRASHSWEEP_FROM_SCRATCH = True\n", True),
        ("from no_such_module import CRASHSWEEP_FROM_SCRATCH\n", False),
        ("CRASHSWEEP_FROM_SCRATCH = (\n", False),  # a syntax error: the sweep's import reports it
    ],
)
def test_the_declaration_is_read_from_the_source(
    text: str, declared: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Top-level assignments and imports of the name (the last wins), also relative ones; nothing is imported."""
    package = tmp_path / "agents_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "declares.py").write_text("CRASHSWEEP_FROM_SCRATCH = True\n")
    (package / "agent.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "agents_pkg", raising=False)
    assert sweep_sources.declares_from_scratch("agents_pkg.agent:run") is declared
    assert "agents_pkg.agent" not in sys.modules
    assert not sweep_sources.declares_from_scratch("no_such_module:run")
    assert not sweep_sources.declares_from_scratch("python agent.py")
    del sys.modules["agents_pkg"]  # found, so imported (a parent package): its folder is this test's


@pytest.mark.parametrize(
    ("upgrade", "args", "said"),
    [
        ("crashsweep-no-such-program --x", {}, "--upgrade-to crashsweep-no-such-program --x: no program"),
        ("/no/such/folder/prog", {}, "--upgrade-to /no/such/folder/prog: no program '/no/such/folder/prog'"),
    ],
)
def test_an_upgrade_that_cannot_run_is_named_as_the_upgrade(upgrade: str, args: dict[str, str], said: str) -> None:
    """--target with --upgrade-to: a missing program is refused before any process, by --upgrade-to's name.

    Found missing only at the first restart, it was said as the target's program ("cannot start
    '.../python'"), the one that runs fine.
    """
    import click

    with pytest.raises(click.UsageError) as caught:
        sweep_sources.target_source("python -c pass", "json:dumps", args, "keyed", api.Nemesis(), upgrade)
    assert said in caught.value.message


def test_an_arg_declaration_is_read_without_importing_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--arg: CRASHSWEEP_ARGS read from the source; the module, raising on import (a heavy framework), is not run."""
    (tmp_path / "heavy_target_41.py").write_text(
        "raise RuntimeError('the framework would load here')\n"
        "CRASHSWEEP_ARGS = {'mode': ('fast', 'slow'), 'name': ()}\n\ndef run() -> None:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    target = sweep_sources.program("heavy_target_41:run", {"mode": "fast", "name": "x"})
    assert target.label.endswith("mode=fast name=x")
    assert "heavy_target_41" not in sys.modules
    with pytest.raises(ValueError, match="--arg mode=quick: heavy_target_41 allows fast, slow"):
        sweep_sources.program("heavy_target_41:run", {"mode": "quick"})
    with pytest.raises(ValueError, match="--arg other: heavy_target_41 takes mode, name"):
        sweep_sources.program("heavy_target_41:run", {"other": "1"})


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("CRASHSWEEP_ARGS = dict(mode=('a',))\n", None),  # not a literal: imported, then read
        ("if True:\n    CRASHSWEEP_ARGS = {'mode': ('a',)}\n", None),  # in a block: imported
        ("from json import *\n", "declares no arguments"),  # what * binds: imported
        ("X = 1\n", "declares no arguments"),  # nothing binds it: not imported
    ],
)
def test_an_arg_declaration_the_source_does_not_settle_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, said: str | None
) -> None:
    name = f"declares_41_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source + "\ndef run() -> None:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    if said is None:
        assert sweep_sources.program(f"{name}:run", {"mode": "a"}).label.endswith("mode=a")
        assert name in sys.modules
    else:
        with pytest.raises(ValueError, match=said):
            sweep_sources.program(f"{name}:run", {"mode": "a"})
        assert (name in sys.modules) == ("import" in source)


SWEPT = """
import os
from pathlib import Path
import cs_marker  # the framework's import: the sweep's zygote pays it, not the command line
from crashsweep import Outcome, crashpoint

Path("imported").write_text("1")  # where it was imported from: the zygote's folder, a process's work folder

def run():
    crashpoint("started")
    Path("done").write_text("1")

def check(scenario):
    if os.environ.get("CS_RAISE"):
        raise KeyError("records")
    return Outcome(applied=int((scenario.workdir / "done").exists()))
"""

IN_PROCESS = """
import sys
from crashsweep.cli.main import main
status = main(["sweep", *sys.argv[1:]])
print("status", status, "marker", "cs_marker" in sys.modules, file=sys.stderr)
"""


def _swept(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`crashsweep sweep ARGS` by main() in a fresh Python in `folder`; its stderr ends with its status and marker."""
    command = [sys.executable, "-c", IN_PROCESS, *args]
    return subprocess.run(command, cwd=folder, env=child_env(**env), **CAPTURE)


def test_the_check_of_your_program_is_never_imported_by_the_command_line(tmp_path: Path) -> None:
    """--target with --check in one module: the check runs in forks of the zygote; with --spawn exec, here as before."""
    (tmp_path / "cs_swept.py").write_text(SWEPT)
    (tmp_path / "cs_marker.py").write_text("")
    sweep = ["--target", "cs_swept:run", "--check", "cs_swept:check", "--depth", "1", "--format", "json"]
    rows = {}
    for spawn, imported in (("fork", False), ("exec", True)):
        done = _swept(tmp_path, *sweep, "--spawn", spawn)
        assert done.stderr.splitlines()[-1] == f"status 0 marker {imported}", done.stderr
        row = json.loads(done.stdout)
        rows[spawn] = (row["crash_points"], row["scenarios"], row["with_dups"], row["missing"])
    assert rows["fork"] == rows["exec"] == (1, {"1": 1}, 0, 0)


def test_a_check_that_raises_or_names_nothing_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A missing module or name refused before any process (none imported the module); a check that raised."""
    (tmp_path / "cs_swept.py").write_text(SWEPT)
    (tmp_path / "cs_marker.py").write_text("")
    for check, words in (
        ("cs_nothing:check", "cs_nothing:check: cannot import 'cs_nothing': No module named 'cs_nothing'"),
        ("cs_swept:chek", "cs_swept:chek: 'cs_swept' has no 'chek'"),
    ):
        refused = _swept(tmp_path, "--target", "cs_swept:run", "--check", check)
        assert refused.stderr.splitlines() == [f"crashsweep: error: {words}", "status 2 marker False"]
        assert refused.stdout == ""
    assert not (tmp_path / "imported").exists()
    raised = _swept(tmp_path, "--target", "cs_swept:run", "--check", "cs_swept:check", "--depth", "1", CS_RAISE="1")
    said = raised.stderr.splitlines()
    assert said == [
        "crashsweep: error: scenario (uninterrupted): the check failed: KeyError: 'records'",
        "status 2 marker False",
    ]
