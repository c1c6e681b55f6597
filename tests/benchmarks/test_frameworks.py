"""Tests of benchmarks/frameworks.py and agent_cpu.py: a sweep's speed beside the agent's own cost."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep.adapters import frameworks as registry

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
frameworks: Any = importlib.import_module("frameworks")

FIELDS = {"setup", "processes", "seconds", "setup_seconds", "sweep_seconds", "own_cpu_per_process", "rate", "ratio"}


def test_json_is_a_list_of_setups_with_their_rate_and_the_agents_own_cost() -> None:
    """The smallest setup (LangGraph exit, 5 points) at depth 1: one object, its counts, rate and ratio."""
    args = [
        "--depth",
        "1",
        "--workers",
        "2",
        "--format",
        "json",
        "--only",
        "exit, keys, call IDs stable",
        "--runs",
        "1",
    ]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "frameworks.py"), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    (setup,) = json.loads(done.stdout)
    assert set(setup) >= FIELDS
    assert setup["setup"] == "LangGraph exit, keys, call IDs stable"
    assert (setup["crash_points"], setup["scenarios"], setup["processes"]) == (5, 5, 11)
    assert setup["with_dups"] == [0, 0]
    assert setup["seconds"] > 0
    assert setup["own_cpu_per_process"] > 0
    assert setup["own_cpu_in_process"] > 0
    # The setup (the framework's import in the zygote) is part of the seconds, and the rate is of the rest.
    assert 0 < setup["setup_seconds"] < setup["seconds"]
    assert setup["sweep_seconds"] == pytest.approx(setup["seconds"] - setup["setup_seconds"], abs=0.002)
    assert setup["rate"] == pytest.approx(setup["processes"] / setup["sweep_seconds"], rel=0.01)
    assert setup["overall_rate"] == pytest.approx(setup["processes"] / setup["seconds"], rel=0.01)
    cores = setup["cores"]
    assert setup["ratio"] == pytest.approx(setup["rate"] * setup["own_cpu_per_process"] / cores, rel=0.01)
    assert setup["overall_ratio"] == pytest.approx(
        setup["overall_rate"] * setup["own_cpu_per_process"] / cores, rel=0.01
    )


def test_a_markdown_row_gives_the_counts_then_the_speed() -> None:
    """A row: depth 1 / depth N per count, then setup and sweep seconds, processes/s, own CPU in ms, the ratio."""
    figures = {
        "setup": "DBOS, no keys",
        "crash_points": 20,
        "scenarios": 20,
        "with_dups": [6, 6],
        "dups": [6, 6],
        "missing": [0, 0],
        "unreached": 0,
        "processes": 41,
        "seconds": 3.5,
        "setup_seconds": 1.0,
        "sweep_seconds": 2.5,
        "rate": 16.4,
        "own_cpu_per_process": 0.1,
        "ratio": 0.82,
    }
    assert (
        frameworks.row(figures)
        == "| DBOS, no keys | 20 | 20 | 6 / 6 | 6 / 6 | 0 / 0 | 0 | 41 | 1.0 | 2.5 | 16.4 | 100 | 0.82 |"
    )


@pytest.mark.parametrize(
    "args", [("--depth", "0"), ("--workers", "two"), ("--format", "xml"), ("--only", "no such setup"), ("--runs", "0")]
)
def test_bad_options_exit_2_with_one_line(args: tuple[str, ...]) -> None:
    """Depth 0, a count that is no number, an unknown format, no setup chosen, no run: one line, exit 2, nothing run."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "frameworks.py"), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1


def test_agent_cpu_refuses_a_run_count_that_is_no_number() -> None:
    """agent_cpu.py MODULE RUNS: RUNS must be a positive number: its usage in one line, exit 2."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "agent_cpu.py"), "crashsweep.realsweep.adapters.dbos_agent", "none"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1


def without(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make framework `name` look uninstalled: its record looks for a package that cannot be found."""
    records = tuple(replace(f, package="no_such_package_here") if f.name == name else f for f in registry.REGISTRY)
    monkeypatch.setattr(registry, "REGISTRY", records)


def test_a_stack_whose_extra_is_missing_is_left_out_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """installed(): the other setups kept in order; the stack's setups dropped, named by one line with the extra."""
    without(monkeypatch, "dbos")
    kept, lines = frameworks.installed(frameworks.SETUPS)
    assert kept == [setup for setup in frameworks.SETUPS if setup[1] != "dbos"]
    assert lines == ["frameworks.py: skipping 2 setups: dbos is not installed: pip install 'crashsweep[dbos]'"]


def test_the_run_skips_a_missing_stack_and_measures_the_others(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """main(): one line on stderr for the missing stack, no traceback; the rest measured (here, faked) and printed."""
    without(monkeypatch, "temporal")
    monkeypatch.setattr(frameworks, "measure", lambda name, *_: {"setup": name})
    monkeypatch.setattr(sys, "argv", ["frameworks.py", "--format", "json", "--only", "keys from"])
    assert frameworks.main() == 0
    out, err = capsys.readouterr()
    assert [row["setup"] for row in json.loads(out)] == [
        setup[0] for setup in frameworks.SETUPS if "keys from" in setup[0] and setup[1] != "temporal"
    ]
    assert err == "frameworks.py: skipping 1 setup: temporal is not installed: pip install 'crashsweep[temporal]'\n"


def test_nothing_left_to_run_exits_1_after_the_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every chosen stack missing: its line on stderr, nothing on stdout, exit 1, nothing measured."""
    without(monkeypatch, "openai-agents")
    monkeypatch.setattr(frameworks, "measure", lambda *_: pytest.fail("measured a setup"))
    monkeypatch.setattr(sys, "argv", ["frameworks.py", "--only", "OpenAI"])
    assert frameworks.main() == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "frameworks.py: skipping 3 setups: openai-agents is not installed: pip install 'crashsweep[openai-agents]'"
    ]


def test_own_gives_a_users_agent_its_row_and_leaves_its_folder_as_it_was() -> None:
    """--own: my_support_graph of docs/examples (34 points at depth 1, its docs page's figures), every scenario run.

    Its graph writes its checkpoints to the folder it runs in: each run, swept or measured,
    runs in a work folder of its own, so docs/examples gains no file.
    """
    examples = BENCHMARKS.parent / "docs" / "examples"
    before = sorted(path.name for path in examples.iterdir() if path.name != "__pycache__")
    args = ["--own", "--depth", "1", "--workers", "2", "--format", "json", "--only", "LangGraph", "--runs", "1"]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "frameworks.py"), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    (setup,) = json.loads(done.stdout)
    assert setup["setup"] == "your own LangGraph graph (my_support_graph)"
    assert (setup["crash_points"], setup["scenarios"], setup["processes"]) == (34, 34, 1 + 2 * 34)
    assert setup["own_cpu_per_process"] > 0
    assert sorted(path.name for path in examples.iterdir() if path.name != "__pycache__") == before
