"""The pytest plugin (crashsweep/pytest_plugin.py), run by pytest itself through pytester as a user's suite would."""

from __future__ import annotations

import shutil

import pytest

from crashsweep import testing
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
    """Neither or both of variant and design: a ValueError that says so."""
    with pytest.raises(ValueError, match="one of them"):
        testing.explore()
    with pytest.raises(ValueError, match="unknown tracker"):
        testing.explore("agent-loop", tracker="nope")
