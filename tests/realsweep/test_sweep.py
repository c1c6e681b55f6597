"""The generic sweep engine on small real programs: scenario counts, counters, refusals and failures."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from crashsweep.realsweep.sweep import (
    Outcome,
    Scenario,
    ScenarioResult,
    SweepError,
    SweepOptions,
    Target,
    TargetFailed,
    determinism_runs,
    replay,
    sweep,
)

PROGRAM = textwrap.dedent(
    """
    import os
    from pathlib import Path
    from crashsweep.realsweep.probe.crashpoint import count, crashpoint

    def main():
        state = Path("steps.txt")
        done = int(state.read_text()) if state.exists() else 0
        count("starts")
        for step in range(done, 2):
            crashpoint(f"step {step}")
            state.write_text(str(step + 1))
        crashpoint("end")
        FAIL = os.environ.get("FAIL_ON_RESTART")
        if FAIL and done:
            raise SystemExit(int(FAIL))

    if __name__ == "__main__":
        main()
    """
)


def outcome(scenario: Scenario) -> Outcome:
    """One effect per finished program: the steps file says 2."""
    path = scenario.workdir / "steps.txt"
    steps = path.read_text() if path.exists() else ""
    return Outcome(dups=0, missing=0 if steps == "2" else 1, applied=1)


@pytest.fixture
def program(tmp_path: Path) -> Path:
    """The small program, as a file."""
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return path


def options(tmp_path: Path, depth: int, **extra: object) -> SweepOptions:
    """Options for a test sweep with no tracker."""
    return SweepOptions(depth=depth, workers=2, tracker=None, root=tmp_path / "sweep", **extra)  # type: ignore[arg-type]


def test_every_scenario_up_to_the_depth_is_run(program: Path, tmp_path: Path) -> None:
    """3 points; restarts pass 3, 2 and 1 points: 3 scenarios with one crash, 6 with two."""
    result = sweep(Target.command([sys.executable, str(program)]), outcome, options(tmp_path, 2))
    assert result.baseline.points == ("step 0", "step 1", "end")
    assert [s.code for s in result.scenarios] == ["1", "2", "3", "1,1", "1,2", "1,3", "2,1", "2,2", "3,1"]
    assert all(s.outcome.missing == 0 for s in result.scenarios)
    assert [s.counters["starts"] for s in result.scenarios[:3]] == [2, 2, 2]
    assert result.scenarios[3].counters["starts"] == 3
    assert result.processes == 1 + 3 * 2 + 6 * 3
    assert (
        result.scenarios[4].describe()
        == "crash at point 1 'step 0', restart, crash at point 2 'step 1', restart to the end"
    )


def test_an_entry_point_is_forked_or_started_with_the_same_results(tmp_path: Path, program: Path) -> None:
    """module:function through the zygote and through `python -m crashsweep.realsweep.probe.entry`: same scenarios."""
    codes = []
    for spawn in ("fork", "exec"):
        target = Target.entry_point("prog:main", path=[str(program.parent)])
        result = sweep(target, outcome, options(tmp_path / spawn, 2, spawn=spawn))
        codes.append([s.code for s in result.scenarios])
    assert codes[0] == codes[1]
    assert len(codes[0]) == 9


@pytest.mark.parametrize("spawn", ["fork", "exec"])
def test_the_setup_is_the_time_before_the_first_process_started(tmp_path: Path, program: Path, spawn: str) -> None:
    """Forked: the zygote's start and import come first; started: the interpreter's start is the process's own."""
    target = Target.entry_point("prog:main", path=[str(program.parent)])
    result = sweep(target, outcome, options(tmp_path, 1, spawn=spawn))
    assert 0 < result.setup < result.seconds


def test_a_program_whose_points_change_is_refused(tmp_path: Path) -> None:
    """Points named from randomness differ between runs from the same disk: not deterministic."""
    path = tmp_path / "random_points.py"
    path.write_text(
        "import os\nfrom crashsweep.realsweep.probe.crashpoint import crashpoint\ncrashpoint(os.urandom(4).hex())\n"
    )
    with pytest.raises(SweepError, match="no clock, no randomness"):
        sweep(Target.command([sys.executable, str(path)]), outcome, options(tmp_path, 1))


def test_a_restart_that_fails_after_a_crash_cannot_recover_and_the_sweep_goes_on(program: Path, tmp_path: Path) -> None:
    """A restart that exits 3 ends its scenario (spec/POINTS.md 5): never finished, its status named; the rest run.

    The restarts after the crashes at points 2 and 3 find a step done and exit 3; the one after
    point 1 finds none and finishes.
    """
    target = Target(argv=(sys.executable, str(program)), env={"FAIL_ON_RESTART": "3"})
    result = sweep(target, outcome, options(tmp_path, 1))
    assert [(s.code, s.outcome.exit_status) for s in result.scenarios] == [("1", 0), ("2", 3), ("3", 3)]
    failed = result.scenarios[1]
    assert failed.outcome.stuck == "the restart exited with status 3: (no output)"
    assert failed.counters["cannot_recover"] == 1
    assert failed.describe() == "crash at point 2 'step 1', restart, which cannot recover (exit status 3)"


def test_a_program_that_fails_in_its_uninterrupted_run_fails_the_sweep(tmp_path: Path) -> None:
    """No crash before it: the program failed by itself (TargetFailed), named by its exception, not its last line.

    The exception carries a note (as LangGraph's "During task with name ..."), printed after it.
    """
    path = tmp_path / "fails.py"
    path.write_text(
        "from crashsweep.realsweep.probe.crashpoint import crashpoint\n"
        "crashpoint('p')\n"
        "error = ValueError('the approval was refused')\n"
        "error.add_note(\"During task with name 'approval' and id '1'\")\n"
        "raise error\n"
    )
    with pytest.raises(TargetFailed) as failed:
        sweep(Target.command([sys.executable, str(path)]), outcome, options(tmp_path, 1))
    assert str(failed.value) == (
        "the uninterrupted run, process 1: exited with status 1: ValueError: the approval was refused"
    )


def test_a_program_without_crash_points_is_refused(tmp_path: Path) -> None:
    """Nothing marked: there is nothing to sweep."""
    with pytest.raises(SweepError, match="no crash point"):
        sweep(Target.command([sys.executable, "-c", "pass"]), outcome, options(tmp_path, 1))


def test_a_hanging_process_is_stopped(tmp_path: Path) -> None:
    """A process that outlives the timeout fails the sweep instead of hanging it."""
    path = tmp_path / "hang.py"
    path.write_text(
        "import time\nfrom crashsweep.realsweep.probe.crashpoint import crashpoint\ncrashpoint('p')\ntime.sleep(60)\n"
    )
    with pytest.raises(TargetFailed, match="still running after 1 s"):
        sweep(Target.command([sys.executable, str(path)]), outcome, options(tmp_path, 1, timeout=1.0))


def test_outcome_of_counts_duplicates_and_missing_writes() -> None:
    """Outcome.of: effects beyond the first per write, writes with no effect; each effect an event of its history."""
    found = Outcome.of(["a", "a", "a", "b", "x"], ["a", "b", "c"])
    assert (found.dups, found.missing, found.applied) == (2, 1, 5)
    assert found.history is not None
    assert [(e.f, e.call, e.effect_id) for e in found.history.events] == [
        ("effect", call, f"#{n}") for n, call in enumerate(["a", "a", "a", "b", "x"], 1)
    ]
    assert (found.history.expected, found.history.facts) == (("a", "b", "c"), frozenset({"effects", "status"}))


def test_a_sweep_takes_the_determinism_checks_second_round_as_its_scenarios(program: Path, tmp_path: Path) -> None:
    """The check's second round is the depth-1 sweep's: taken, the sweep runs none again, and its row is the same.

    3 points: the check runs the uninterrupted run and 3 scenarios of one crash twice (1 + 3 x 2
    processes a round). The sweep that takes the second round runs no process and calls no check;
    at depth 2 it runs only the 6 scenarios of two crashes (6 x 3 processes). Either way its
    scenarios, counters and process count are those of a sweep that ran everything itself.
    """
    target = Target.command([sys.executable, str(program)])
    checked = determinism_runs(target, outcome, options(tmp_path / "check", 1))
    assert (checked.starts, checked.divergence) == (4, None)
    assert sorted(len(crashes) for crashes in checked.ran) == [0, 1, 1, 1]
    for depth in (1, 2):
        checks: list[Scenario] = []

        def counted(scenario: Scenario, checks: list[Scenario] = checks) -> Outcome:
            checks.append(scenario)
            return outcome(scenario)

        alone = sweep(target, outcome, options(tmp_path / f"alone-{depth}", depth))
        taken = sweep(target, counted, options(tmp_path / f"taken-{depth}", depth, ran=checked.ran))
        assert len(checks) == (0 if depth == 1 else 6)
        assert [(s.code, s.outcome, dict(s.counters), s.points) for s in taken.scenarios] == [
            (s.code, s.outcome, dict(s.counters), s.points) for s in alone.scenarios
        ]
        assert taken.processes == alone.processes == (7 if depth == 1 else 25)


def test_scenarios_already_run_go_only_with_a_sweep_of_every_scenario_that_keeps_none(tmp_path: Path) -> None:
    """A merging sweep's units are processes and a kept sweep keeps folders: neither takes scenarios run before."""
    target = Target.command(["true"])
    ran = {(): ScenarioResult((), Outcome(), {}, ("end",))}
    for extra in ({"dedup": True}, {"keep": True}):
        with pytest.raises(SweepError, match=r"^scenarios already run are taken by a sweep of every scenario"):
            sweep(target, outcome, SweepOptions(tracker=None, ran=ran, **extra))  # type: ignore[arg-type]


def test_bad_options_are_refused(tmp_path: Path) -> None:
    """Depth 0, no workers or an unknown spawn mode: SweepError before anything runs."""
    target = Target.command(["true"])
    for bad in (
        SweepOptions(depth=0, tracker=None),
        SweepOptions(workers=0, tracker=None),
        SweepOptions(spawn="thread", tracker=None),
    ):
        with pytest.raises(SweepError):
            sweep(target, outcome, bad)
    with pytest.raises(SweepError, match="empty"):
        Target.command("")


def test_a_failing_check_names_the_scenario(program: Path, tmp_path: Path) -> None:
    """A check that raises: SweepError naming the scenario and the error, not a traceback from a thread."""

    def broken(scenario: Scenario) -> Outcome:
        raise KeyError("records")

    with pytest.raises(SweepError, match="the uninterrupted run: the check failed: KeyError"):
        sweep(Target.command([sys.executable, str(program)]), broken, options(tmp_path, 1))


def test_a_point_some_runs_skip_is_counted_unreached_not_refused(tmp_path: Path) -> None:
    """Only the first process ever started passes "b" (a marker outside the work dirs says so).

    The baseline lists a, b, c. At depth 1, the scenarios that die at a and at c run as chosen;
    the one that was to die at b ends normally without passing it: it is unreached, counted
    apart, and the sweep goes on instead of refusing.
    """
    path = tmp_path / "skips.py"
    path.write_text(
        "import os\nfrom pathlib import Path\nfrom crashsweep.realsweep.probe.crashpoint import crashpoint\n"
        "marker = Path(os.environ['MARKER'])\ncrashpoint('a')\n"
        "if not marker.exists():\n    marker.touch()\n    crashpoint('b')\ncrashpoint('c')\n"
    )
    target = Target(argv=(sys.executable, str(path)), env={"MARKER": str(tmp_path / "first")})
    result = sweep(target, outcome_any, options(tmp_path, 1))
    assert result.baseline.points == ("a", "b", "c")
    assert [s.code for s in result.scenarios] == ["1", "3"]
    assert [(s.code, s.unreached) for s in result.unreached] == [("2", 1)]
    assert result.unreached[0].record()["outcome"] is None


def outcome_any(scenario: Scenario) -> Outcome:
    """Every scenario is fine: the test is about which scenarios run."""
    return Outcome(applied=1)


def test_replay_runs_exactly_one_scenario_named_by_its_points(program: Path, tmp_path: Path) -> None:
    """Die at the 1st pass of "step 1", restart to the end: two processes, two starts, the program done."""
    target = Target.command([sys.executable, str(program)])
    result = replay(target, outcome, options(tmp_path, 1), [("step 1", 1)])
    assert result.counters["starts"] == 2
    assert result.outcome.missing == 0
    assert result.points == ("step 1", "end")
    assert result.record()["processes"] == 2


def test_replay_of_a_power_cut_cuts_at_its_point_and_a_cut_never_reached_is_unreached(
    program: Path, tmp_path: Path
) -> None:
    """cut=True: one scenario of one power cut at the point given (the sweep's "power-loss at NAME#K"), then a restart.

    The program keeps no journal of its saves: the cut loses nothing, and its restart finishes.
    A pass the program never makes: its first process ends without it, and no cut or restart follows.
    """
    target = Target.command([sys.executable, str(program)])
    cut = replay(target, outcome, options(tmp_path / "cut", 1), [("step 1", 1)], cut=True)
    assert (cut.crashes, cut.faults, cut.unreached) == ((), ("power-loss at step 1",), 0)
    assert cut.record()["processes"] == 2
    assert cut.counters["starts"] == 2
    missed = replay(target, outcome, options(tmp_path / "missed", 1), [("end", 2)], cut=True)
    assert (missed.unreached, missed.points, missed.faults) == (
        1,
        ("step 0", "step 1", "end"),
        ("power-loss at end#2",),
    )
    with pytest.raises(SweepError, match="a power cut is re-run alone"):
        replay(target, outcome, options(tmp_path / "two", 1), [("end", 1), ("end", 1)], cut=True)
