"""Tests of benchmarks/scaling.py: its jobs, one small grid run as a user runs it, its usage errors."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crashsweep.explorer import explore
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
scaling: Any = importlib.import_module("scaling")
generated = scaling.generated
forty_calls = importlib.import_module("explore_vs_replay").forty_calls


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / "scaling.py"), *args], capture_output=True, text=True, check=False
    )


def test_forty_calls_in_turns_of_four_is_the_other_benchmarks_job() -> None:
    """The 40-call cell measures the same job as explore_vs_replay.py's 40-call table."""
    assert generated(40, 4).turns == forty_calls().turns
    job = generated(10, 3)
    assert [len(turn) for turn in job.turns] == [3, 3, 3, 1]
    assert [call.writes for call in job.calls][:3] == [True, True, False]


def test_a_small_grid_prints_each_cell_and_the_targets() -> None:
    """Every cell's states and edges are the exploration's; the targets section names its figures."""
    done = _run("--calls", "10,40", "--depths", "1", "--designs", "agent-loop", "--memory-budget", "0")
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^agent-loop\s+(\d+)\s+1\s+([\d,]+)\s+([\d,]+)\s.*\s(merged|full)$", done.stdout, re.MULTILINE)
    assert sorted((calls, graph) for calls, _, _, graph in rows) == [
        ("10", "full"),
        ("10", "merged"),
        ("40", "full"),
        ("40", "merged"),
    ]
    for calls, states, edges, graph in rows:
        job = generated(int(calls), 4)
        exploration = explore(model("agent-loop", job, KEYED), 1, projection=graph == "merged")
        assert (int(states.replace(",", "")), int(edges.replace(",", ""))) == (exploration.states, exploration.edges)
    assert "agent-loop depth 1: 40-call rate / 400-call rate" not in done.stdout  # no 400-call cell ran
    assert "targets" in done.stdout


def test_the_floor_chain_is_one_scenario_of_length_plus_one_states() -> None:
    """Chain(n): n + 1 states in a row, n edges, one scenario ending at n; both properties settled by node 1."""
    chain = scaling.Chain(9)
    exploration = explore(chain, 1)
    assert (exploration.states, exploration.edges) == (10, 9)
    assert exploration.counts.scenarios == {0: 1}
    assert exploration.counts.measures[0]["last"] == 9
    assert {name: (v.holds, v.node) for name, v in exploration.verdicts.items()} == {
        "at-the-root": (False, 1),
        "moved": (True, 1),
    }


def test_a_missed_thousand_call_target_prints_the_floor_under_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Under a 1,000-call cell over 10 s, the explorer alone on as many states; under one that met it, nothing."""
    slow = scaling.Cell("save-after-reply", 1000, 1, 50, 49, 12.5, 12.0, None)
    fast = scaling.Cell("agent-loop", 1000, 1, 50, 49, 0.5, 0.4, None)
    scaling.targets([slow, fast])
    lines = capsys.readouterr().out.splitlines()
    slow_line = next(i for i, line in enumerate(lines) if line.startswith("  save-after-reply 1,000 calls"))
    assert "not met" in lines[slow_line]
    assert re.fullmatch(r"    the explorer alone on as many states .*: \d+\.\d\d s", lines[slow_line + 1])
    fast_line = next(i for i, line in enumerate(lines) if line.startswith("  agent-loop 1,000 calls"))
    assert "(target < 10 s: met)" in lines[fast_line]
    assert fast_line + 1 == len(lines) or "explorer alone" not in lines[fast_line + 1]


def test_the_merged_targets_are_judged_on_states_and_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    """A merged 1,000-call cell meets its target within 40,000 states and 1 s; a full cell is judged apart."""
    kept = scaling.Cell("save-after-reply", 1000, 1, 31_693, 40_000, 0.6, 0.5, None, True)
    large = scaling.Cell("agent-loop", 1000, 1, 40_001, 50_000, 0.6, 0.5, None, True)
    deep = scaling.Cell("agent-loop", 40, 4, 13_474, 20_000, 1.3, 1.2, None, True)
    scaling.targets([kept, large, deep])
    out = capsys.readouterr().out
    assert "save-after-reply 1,000 calls depth 1, merged: 31,693 states, 0.50 s [0.60] (target" in out
    assert "< 1 s: met)" in out.split("save-after-reply 1,000 calls depth 1, merged")[1].splitlines()[0]
    assert "< 1 s: not met)" in out.split("agent-loop 1,000 calls depth 1, merged")[1].splitlines()[0]
    assert "< 1 s: not met)" in out.split("agent-loop 40 calls depth 4, merged")[1].splitlines()[0]
    assert "(target < 10 s" not in out  # the full graph's target: no full cell was given


def test_bad_options_exit_2_with_one_line() -> None:
    """A malformed list or an unknown design: one line on stderr, exit 2, before any exploring."""
    for args in (("--calls", "ten"), ("--designs", "no-such-design"), ("--depths", "-1"), ("--graph", "half")):
        done = _run(*args)
        assert done.returncode == 2
        assert done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1


def test_repeat_keeps_the_best_times_and_refuses_zero() -> None:
    """--repeat 2 measures each cell twice (same states); --repeat 0 is one line on stderr and exit 2."""
    done = _run("--calls", "10", "--depths", "1", "--designs", "agent-loop", "--memory-budget", "0", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^agent-loop\s+10\s+1\s+", done.stdout, re.MULTILINE)
    refused = _run("--repeat", "0")
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert "--repeat" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_the_frontier_cell_sums_every_design_and_judges_the_wall_clock(capsys: pytest.CaptureFixture[str]) -> None:
    """--frontier's cell: the 512 designs explored in a pool, their states summed; the target is wall clock < 60 s.

    (The full graphs' depth-2 figures, 210,034 states and 271,722 edges, are pinned in tests/cli/test_frontier.py;
    here depth 1, a few seconds.)
    """
    cell = scaling.measure_frontier(depth=1, workers=2)
    assert (cell.designs, cell.workers) == (512, 2)
    assert 0 < cell.states < cell.edges
    scaling.frontier_target(scaling.FrontierCell(512, 210_034, 271_722, 2, 59.5, 100.0))
    scaling.frontier_target(scaling.FrontierCell(512, 210_034, 271_722, 2, 60.5, 100.0))
    lines = capsys.readouterr().out.split("\n")
    assert lines[1] == (
        "frontier, triage, depth 2, merged: 512 designs, 210,034 states, 271,722 edges, 2 workers: "
        "59.50 s wall [100.00 s CPU] (target < 60 s: met)"
    )
    assert lines[3].endswith("60.50 s wall [100.00 s CPU] (target < 60 s: not met)")
