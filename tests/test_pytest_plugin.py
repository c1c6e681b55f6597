"""The pytest plugin (crashsweep/pytest_plugin.py), run by pytest itself through pytester as a user's suite would."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crashsweep import testing
from crashsweep.cli import main as cli_main
from crashsweep.cli import runs
from tests.paths import ROOT

pytest_plugins = ["pytester"]

REPLAY = "replay: crashsweep replay --variant save-after-reply --depth 1 --tracker keyed --path 10:7=1"


def test_the_plugin_is_registered_with_pytest_by_its_entry_point(pytester: pytest.Pytester) -> None:
    """Installed crashsweep: a suite that never imports it has the marker and the fixture."""
    pytester.makepyfile("def test_it(crashsweep):\n    assert crashsweep.explore('agent-loop', depth=1).holds\n")
    result = pytester.runpytest("--strict-markers", "--markers")
    result.stdout.fnmatch_lines(["*@pytest.mark.crashsweep(variant=None, *"])
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)


def test_the_marker_fails_a_test_with_the_shortest_counterexample_and_its_replay_command(
    pytester: pytest.Pytester,
) -> None:
    """A violated design fails its test (not an error); a safe one passes; the body runs after the check."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.crashsweep("save-after-reply", depth=1)
        def test_unsafe():
            raise AssertionError("the body runs only when the design holds")

        @pytest.mark.crashsweep("agent-loop", depth=1)
        def test_safe():
            pass
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*save-after-reply (job triage, tracker keyed, depth 1): no-duplicate VIOLATED: "
            "shortest counterexample: 1 crash, 10 steps, path 10:7=1",
            f"*{REPLAY}",
            "*VIOLATED no-duplicate after step 10*",
        ]
    )
    result.stdout.no_fnmatch_line("*the body runs only*")


def test_a_hypothesis_machine_fails_with_the_replay_command_of_its_shrunk_run(pytester: pytest.Pytester) -> None:
    """fuzz's machine as a test: the failure's message is the run step by step, then its replay lines."""
    pytester.makepyfile(
        """
        from hypothesis import Phase, settings
        from crashsweep import testing

        Machine = testing.state_machine("save-after-reply", crashes=2, steps=40)
        quick = (Phase.explicit, Phase.generate, Phase.shrink)  # hypothesis's explain phase takes half a minute
        Machine.TestCase.settings = settings(Machine.TestCase.settings, max_examples=60, database=None, phases=quick)
        TestSaveAfterReply = Machine.TestCase
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    replay = "crashsweep replay --variant save-after-reply --depth 2 --tracker keyed --path 10:7=1"
    headline = "*always property 'no-duplicate' violated after 10 steps and 1 crash*"
    result.stdout.fnmatch_lines([headline, f"*replay: {replay}", f"*pytest: {replay} --pytest"])


def test_a_hypothesis_machine_takes_fuzz_s_options_as_the_command_line_checks_them() -> None:
    """crashes, steps, tracker... are fuzz's options: a bad one is one line, before any run."""
    with pytest.raises(testing.UsageError, match=r"^crashsweep: crashes: 0 is not in the range x>=1"):
        testing.state_machine("save-after-reply", crashes=0)
    with pytest.raises(testing.UsageError, match="give a variant name or design=FILE"):
        testing.state_machine()
    assert testing.state_machine("save-after-reply", steps=7).TestCase.settings.stateful_step_count == 7


def test_the_fixture_checks_a_design_file_with_job_tracker_depth_and_faults(pytester: pytest.Pytester) -> None:
    """check() with a design file and faults; explore() gives the row and counterexamples to assert on."""
    design = ROOT / "docs" / "my-design.toml"
    pytester.makepyfile(
        f"""
        def test_file(crashsweep):
            explored = crashsweep.check(design={str(design)!r}, tracker="keyed", depth=1)
            assert explored.row.depth == 1

        def test_faults(crashsweep):
            explored = crashsweep.explore("agent-loop", depth=1, faults=("pause",))
            assert explored.row.faults == ("pause",)
            crashsweep.check("agent-loop", depth=1, faults="pause")
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*agent-loop (job triage, tracker keyed, depth 1): no-duplicate VIOLATED*move*"])
    result.stdout.fnmatch_lines(
        ["*replay: crashsweep replay --variant agent-loop --depth 1 --tracker keyed --faults pause*"]
    )


def test_the_docs_example_passes(pytester: pytest.Pytester) -> None:
    """docs/examples/test_with_plugin.py, run as a user runs it."""
    example = ROOT / "docs" / "examples" / "test_with_plugin.py"
    (pytester.path / "docs" / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "my-design.toml", pytester.path / "docs" / "my-design.toml")
    shutil.copy(example, pytester.path / "docs" / "examples" / example.name)
    pytester.runpytest("--strict-markers", "docs/examples").assert_outcomes(passed=3)


def test_a_sweep_fails_the_test_with_the_command_that_re_runs_its_scenario(pytester: pytest.Pytester) -> None:
    """check_sweep runs `crashsweep sweep` for real and fails with its first scenario and its --crash line."""
    pytester.makepyfile(
        """
        def test_sweep(crashsweep):
            crashsweep.check_sweep("save-after-reply", depth=1, options=["--workers", "2"])
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no-duplicate VIOLATED: first in scenario *tracker accepted create_a*",
            "*re-run: * sweep --variant save-after-reply --tracker keyed --spawn fork "
            "--crash 'tracker accepted create_a'",
        ]
    )


def test_a_misnamed_design_is_one_clear_error() -> None:
    """Neither or both of variant and design: a ValueError that says so; a tracker as the command line says it."""
    with pytest.raises(ValueError, match="one of them"):
        testing.explore()
    with pytest.raises(ValueError, match="tracker: 'nope' is not one of 'keyed', 'keyless', 'keyless-lookup'"):
        testing.explore("agent-loop", tracker="nope")


BAD_CALLS: list[tuple[dict[str, Any], str]] = [
    (
        {"depth": 10**20},
        "crashsweep: depth: 100000000000000000000 is above 100: every crash more multiplies the states;"
        " a search that deep cannot finish",
    ),
    ({"depth": 0}, "crashsweep: depth: 0 is below 1"),
    ({"depth": "2"}, "crashsweep: depth='2' (str): expected a whole number (int)"),
    ({"depth": True}, "crashsweep: depth=True (bool): expected a whole number (int)"),
    ({"variant": None, "design": 123}, "crashsweep: design=123 (int): expected a design file (str or Path)"),
    ({"depht": 2}, "crashsweep: explore() takes no keyword 'depht'; did you mean 'depth'? (it takes variant, design,"),
    ({"variant": "save-afterreply"}, "crashsweep: variant: unknown variant 'save-afterreply' (known: "),
    ({"tracker": "keyd"}, "crashsweep: tracker: 'keyd' is not one of 'keyed', 'keyless', 'keyless-lookup'; did you"),
    ({"faults": ("paws",)}, "crashsweep: faults: unknown fault 'paws' (known: "),
    ({"max_states": 10**20}, "crashsweep: max_states: 100000000000000000000 is above "),
    ({"variant": None, "design": "no-such-design"}, "crashsweep: design: no file or shipped design named"),
]


@pytest.mark.parametrize(("given", "said"), BAD_CALLS)
def test_a_bad_call_is_one_line_as_the_command_line_says_it(
    given: dict[str, Any], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line's types, bounds and did-you-mean: UsageError (a ValueError and a TypeError), before any work."""
    arguments = {"variant": "agent-loop", **given}
    variant = arguments.pop("variant")

    def explored(*_: object) -> None:  # depth=10**20 once ran for 357 s: no exploration may start
        raise AssertionError("a bad call started an exploration")

    monkeypatch.setattr(runs, "run", explored)
    with pytest.raises(testing.UsageError) as raised:
        testing.explore(variant, **arguments)
    message = str(raised.value)
    assert message.startswith(said), message
    assert "\n" not in message
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, TypeError)


def test_a_close_name_is_suggested_for_a_misspelt_variant() -> None:
    """As `explore --variant save-afterreply` says it."""
    with pytest.raises(testing.UsageError, match="did you mean 'save-after-reply'"):
        testing.check("save-afterreply", depth=1)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"depth": 13}, "crashsweep: depth: 13 is above 12: every crash more about doubles the processes"),
        ({"options": "--workers 2"}, "crashsweep: options='--workers 2' (str): expected command-line words"),
        ({"options": ["--wrokers", "2"]}, "crashsweep: No such option '--wrokers'."),
        ({"options": ["--workers", "0"]}, "crashsweep: --workers: 0 is below 1"),
        ({"args": {1: "x"}}, "crashsweep: args={1: 'x'} (dict): expected a mapping of str keys"),
        ({"framework": "dbos2"}, "crashsweep: framework: 'dbos2' is not one of"),
        ({"varient": "agent-loop"}, "crashsweep: sweep() takes no keyword 'varient'; did you mean 'variant'?"),
    ],
)
def test_a_bad_sweep_is_refused_before_any_process_starts(
    given: dict[str, Any], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every word is checked by the sweep command's own parameters first; no `crashsweep sweep` is started."""

    def no_run(*_: object, **__: object) -> None:
        raise AssertionError("a sweep was started")

    monkeypatch.setattr(subprocess, "run", no_run)
    with pytest.raises(testing.UsageError) as raised:
        testing.sweep(**({"variant": "agent-loop"} | given) if "varient" not in given else given)
    assert str(raised.value).startswith(said), str(raised.value)


def test_the_default_depth_is_the_command_lines() -> None:
    """explore's and sweep's --depth default, the functions' and the marker's (its help says it)."""
    from crashsweep.cli.main import explore
    from crashsweep.cli.sweep import sweep
    from crashsweep.pytest_plugin import MARKER_HELP

    defaults = {param.name: param.default for command in (explore, sweep) for param in command.params}
    assert defaults["depth"] == testing.DEPTH == 2
    assert all(p.default == 2 for c in (explore, sweep) for p in c.params if p.name == "depth")
    for function in (testing.explore, testing.sweep):
        assert inspect.signature(function).parameters["depth"].default == testing.DEPTH
    assert f"depth={testing.DEPTH}," in MARKER_HELP


def test_a_marker_with_a_bad_argument_fails_its_test_in_one_line(pytester: pytest.Pytester) -> None:
    """A misspelt keyword or a depth beyond the bound: the test fails with the line, no traceback of crashsweep's."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.crashsweep("agent-loop", depht=1)
        def test_misspelt():
            pass

        @pytest.mark.crashsweep("agent-loop", depth=10**20)
        def test_too_deep():
            pass
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.crashsweep(...): crashsweep: explore() takes no keyword 'depht'; did you mean 'depth'?*",
            "*@pytest.mark.crashsweep(...): crashsweep: depth: 100000000000000000000 is above 100*",
        ]
    )
    result.stdout.no_fnmatch_line("*testing.py*")
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_sweep_s_check_is_refused_as_the_command_line_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check=` naming nothing in the target's module: the command line's one line, read from its source."""
    (tmp_path / "pp_swept.py").write_text("raise SystemExit('imported')\n\ndef run():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    said = "crashsweep sweep exited 2: crashsweep: error: pp_swept:chek: 'pp_swept' has no 'chek'"
    path = list(sys.path)
    with pytest.raises(pytest.fail.Exception, match=f"^{re.escape(said)}$"):
        testing.sweep(target="pp_swept:run", check="pp_swept:chek", depth=1)
    assert sys.path == path  # the working directory was on it for the sweep alone


COUNTED = """
from pathlib import Path
import os
with open(Path(__file__).with_name("imports.txt"), "a") as imports:
    imports.write(f"{os.getpid()}\\n")
from my_loop import run
"""


def test_the_sweeps_of_a_session_import_their_program_once(pytester: pytest.Pytester) -> None:
    """Two tests sweep one target: one zygote imports it and serves both; it is stopped when the session ends.

    The target notes each import of its module (in a zygote) with the zygote's process ID.
    The session runs in a process of its own, as a user's does.
    """
    for name in ("my_loop.py", "my_loop_check.py"):
        shutil.copy(ROOT / "docs" / "examples" / name, pytester.path / name)
    (pytester.path / "counted_loop.py").write_text(COUNTED)
    sweep = 'crashsweep.check_sweep(target="counted_loop:run", check="my_loop_check:check", depth=1)'
    pytester.makepyfile(f"def test_once(crashsweep):\n    {sweep}\n\ndef test_again(crashsweep):\n    {sweep}\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)
    imports = (pytester.path / "imports.txt").read_text().split()
    assert len(imports) == 1, imports
    cmdline = Path("/proc", imports[0], "cmdline")
    assert not cmdline.exists() or b"zygote_server" not in cmdline.read_bytes()


def test_a_module_that_exits_as_the_command_imports_it_fails_the_test_as_the_command_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CRASHSWEEP_ARGS its source cannot settle: the command imports the module, which exits; one line, no traceback."""
    (tmp_path / "pp_exits.py").write_text("CRASHSWEEP_ARGS = dict(keys=('on',))\nraise SystemExit('no agent here')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pytest.fail.Exception, match=r"^crashsweep sweep exited 1: no agent here$"):
        testing.sweep(target="pp_exits:run", check="pp_exits:run", args={"keys": "on"}, depth=1)


def test_ctrl_c_in_a_sweep_stops_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep interrupted (the command's exit 130) raises KeyboardInterrupt: the session stops, as at a command."""
    monkeypatch.setattr(cli_main, "main", lambda argv, module: 130)
    with pytest.raises(KeyboardInterrupt):
        testing.sweep("agent-loop", depth=1)
