"""`crashsweep fuzz`: a shrunk counterexample as a replay command and text, or the figures; exit codes."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli.fuzz import fuzz as fuzz_command
from crashsweep.cli.main import main
from crashsweep.explorer import replay, stateful
from crashsweep.explorer.stateful import DEFAULT_CRASHES, DEFAULT_STEPS
from crashsweep.spec.invariants import NO_DUPLICATE, no_duplicate
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.tracker import KEYED, KEYLESS
from crashsweep.variants import model
from tests.paths import ROOT
from tests.realsweep.helpers import child_env


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["fuzz", *args])
    out, err = capsys.readouterr()
    return status, out, err


def _replay_command(out: str) -> list[str]:
    lines = [line for line in out.splitlines() if line.startswith("replay: ")]
    assert len(lines) == 1, out
    return shlex.split(lines[0].removeprefix("replay: "))


def test_save_after_reply_is_caught_with_one_crash_and_a_command_that_replays_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(capsys, "--variant", "save-after-reply", "--seed", "0")
    assert (status, err) == (1, "")
    assert out.startswith("fuzz (seed 0, up to 8 crashes per run) found a violation")
    assert f"counterexample to {NO_DUPLICATE}" in out
    assert ", 1 crash, path " in out
    assert "CRASH" in out
    assert "RESTART" in out
    command = _replay_command(out)
    assert command[:6] == ["crashsweep", "replay", "--variant", "save-after-reply", "--depth", "8"]
    code = command[command.index("--path") + 1]
    path = replay(model("save-after-reply", TRIAGE, KEYED), 8, code)
    assert path.crashes == 1
    assert not no_duplicate.holds(path.end, TRIAGE)
    # The command itself is what `crashsweep replay` reads: it reproduces the violation.
    assert main(command[1:]) == 1
    capsys.readouterr()


def test_keys_and_markers_shows_no_violation_with_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(
        capsys, "--variant", "keys-and-markers", "--crashes", "8", "--examples", "25", "--seed", "0"
    )
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("keys-and-markers: no violation in ")
    assert lines[0].endswith(" runs")
    assert lines[1].startswith("  seed 0: runs ")
    assert "(up to 8 in one run)" in lines[1]
    witnessed = (
        "some write applied, some run finished, some conversation with a result sent, some approved write applied"
    )
    assert lines[2] == f"  witnessed: {witnessed}"
    assert len(lines) == 3


def test_the_same_seed_prints_the_same_output_in_any_process() -> None:
    def run(hash_seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        args = ["--variant", "idempotency-keys", "--examples", "10", "--seed", "42"]
        done = subprocess.run(
            [sys.executable, "-m", "crashsweep", "fuzz", *args], capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run("1") == run("2")


def test_the_same_seed_gives_the_same_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(capsys, "--variant", "save-once-per-turn", "--seed", "5")
    second = _run(capsys, "--variant", "save-once-per-turn", "--seed", "5")
    assert first == second
    assert first[0] == 1


def test_without_a_seed_one_is_chosen_and_printed(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "--variant", "save-once-per-turn")
    assert status == 1
    seed = out.split("(seed ", 1)[1].split(",", 1)[0]
    assert seed.isdigit()
    assert _run(capsys, "--variant", "save-once-per-turn", "--seed", seed)[1] == out


def test_a_job_file_and_a_tracker_are_part_of_the_replay_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    job_file = tmp_path / "one write.toml"
    job_file.write_text('name = "one"\nturns = [["post"]]\n[calls]\npost = { tool = "post", writes = true }\n')
    status, out, _ = _run(
        capsys, "--variant", "save-once-per-turn", "--job", str(job_file), "--tracker", "keyless", "--crashes", "3"
    )
    assert status == 1
    command = _replay_command(out)
    assert command[command.index("--job") + 1] == str(job_file)
    assert command[command.index("--tracker") + 1] == "keyless"
    assert command[command.index("--depth") + 1] == "3"
    path = replay(model("save-once-per-turn", load_job(job_file), KEYLESS), 3, command[command.index("--path") + 1])
    assert path.crashes == 1


def test_a_witness_no_run_reaches_makes_the_exit_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "--variant", "keys-and-markers", "--steps", "5", "--examples", "10", "--seed", "0")
    assert status == 1
    assert "no violation in " in out
    assert "never reached: 'some run finished'" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variant", "no-such-design"], "unknown variant 'no-such-design'"),
        (["--variant", "keys-and-markers", "--job", "missing.toml"], "cannot read job file"),
        (["--variant", "keys-and-markers", "--crashes", "0"], "--crashes"),
        (["--variant", "keys-and-markers", "--examples", "0"], "--examples"),
        (["--variant", "keys-and-markers", "--seed", "-1"], "--seed"),
        (["--variant", "keys-and-markers", "--tracker", "psychic"], "--tracker"),
        (["--crashes", "3"], "--variant"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = _run(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.startswith("crashsweep: error: ")
    assert message in err
    assert err.count("\n") == 1


def test_a_bad_job_file_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    job_file = tmp_path / "bad.toml"
    job_file.write_text("name = \n")
    status, _, err = _run(capsys, "--variant", "keys-and-markers", "--job", str(job_file))
    assert status == 2
    assert "not valid TOML" in err
    assert err.count("\n") == 1


def test_the_defaults_are_the_library_defaults() -> None:
    defaults = {param.name: param.default for param in fuzz_command.params}
    assert defaults["crashes"] == DEFAULT_CRASHES
    assert defaults["steps"] == DEFAULT_STEPS
    assert defaults["tracker"] == "keyed"


DOCS = ROOT / "docs"


def test_a_design_file_is_fuzzed_and_its_replay_command_names_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    design = DOCS / "designs" / "save-after-reply.toml"
    status, out, err = _run(capsys, "--design", str(design), "--seed", "0")
    assert (status, err) == (1, "")
    command = _replay_command(out)
    assert command[:4] == ["crashsweep", "replay", "--design", str(design)]
    assert main(command[1:]) == 1
    capsys.readouterr()


def test_the_example_design_file_is_fuzzed(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "--design", str(DOCS / "my-design.toml"), "--examples", "30", "--seed", "0")
    assert (status, err) == (0, "")
    assert out.startswith("my-design: no violation in ")


def test_variant_and_design_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "--variant", "agent-loop", "--design", str(DOCS / "my-design.toml"))
    assert (status, out) == (2, "")
    assert err == "crashsweep: error: give --variant NAME or --design FILE, not both\n"


def test_the_figures_say_what_they_count(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs and hypothesis examples are printed apart, and each equals the test's own count of machines and runs.

    Hypothesis decides how many examples it runs for --examples N (more when it discards some,
    and an example may end before its first action), so the test counts both itself: every
    machine hypothesis makes is an example, and a run is a machine that took a step.
    """
    made: list[stateful.ModelMachine[object]] = []
    init = stateful.ModelMachine.__init__

    def counting_init(self: stateful.ModelMachine[object]) -> None:
        init(self)
        made.append(self)

    monkeypatch.setattr(stateful.ModelMachine, "__init__", counting_init)
    for examples in (5, 40):
        made.clear()
        status, out, _ = _run(capsys, "--variant", "keys-and-markers", "--examples", str(examples), "--seed", "0")
        assert status == 0
        runs = sum(len(machine.path.steps) > 1 for machine in made)
        assert out.splitlines()[0] == f"keys-and-markers: no violation in {runs} runs"
        assert f"runs {runs} (" in out
        assert f") of {len(made)} hypothesis examples for --examples {examples} ({len(made) - runs} ended" in out
        assert len(made) >= examples


def test_a_step_count_that_leaves_no_action_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """--steps 1 spends the run's one rule on choosing its pace: refused (exit 2) instead of "0 runs"."""
    status, out, err = _run(capsys, "--variant", "keys-and-markers", "--steps", "1")
    assert (status, out) == (2, "")
    assert "--steps" in err
    assert err.count("\n") == 1
    status, out, _ = _run(capsys, "--variant", "keys-and-markers", "--steps", "2", "--examples", "10", "--seed", "0")
    assert status == 1  # one action per run never finishes one: the witness goes unreached
    assert "no violation in 0 runs" not in out
    assert "never reached: 'some run finished'" in out


def test_a_design_files_replay_command_starts_with_the_launcher(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run as bin/crashsweep, fuzz --design's replay command starts with bin/crashsweep and names the file."""
    monkeypatch.setenv("CRASHSWEEP_PROG", "bin/crashsweep")
    design = DOCS / "designs" / "save-after-reply.toml"
    status, out, _ = _run(capsys, "--design", str(design), "--seed", "0")
    assert status == 1
    assert _replay_command(out)[:4] == ["bin/crashsweep", "replay", "--design", str(design)]


def test_fuzz_leaves_nothing_in_the_current_folder(tmp_path: Path) -> None:
    """Hypothesis keeps a cache (.hypothesis/) in the current folder; fuzz keeps it in a temporary one instead."""
    crashsweep = str(Path(sys.executable).with_name("crashsweep"))
    env = {name: value for name, value in child_env().items() if name != "HYPOTHESIS_STORAGE_DIRECTORY"}
    command = [crashsweep, "fuzz", "--variant", "keys-and-markers", "--examples", "5", "--seed", "0"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_fuzz_s_machine_appends_the_replay_lines_of_the_violating_run_to_its_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The explorer's PropertyViolation names the path code; fuzz's machine adds its replay and pytest lines."""
    from hypothesis import Phase, seed, settings
    from hypothesis.stateful import run_state_machine_as_test

    from crashsweep.cli.fuzz import machine

    loop = model("save-after-reply", TRIAGE, KEYED)
    built = machine(loop, TRIAGE, None, "keyed", crashes=3, steps=60)
    phases = (Phase.explicit, Phase.generate, Phase.shrink)  # hypothesis's explain phase takes half a minute
    quiet = settings(built.TestCase.settings, max_examples=60, database=None, phases=phases)
    with pytest.raises(stateful.PropertyViolation) as caught:
        run_state_machine_as_test(seed(0)(built), settings=quiet)
    *_, replay_line, pytest_line = str(caught.value).splitlines()
    command = shlex.split(replay_line.removeprefix("replay: "))
    assert command[:6] == ["crashsweep", "replay", "--variant", "save-after-reply", "--depth", "3"]
    assert command[-1] == caught.value.path.code
    assert pytest_line == f"pytest: {shlex.join(command)} --pytest"
    assert main(command[1:]) == 1
    capsys.readouterr()
