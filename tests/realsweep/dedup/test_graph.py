"""The deduplicating sweep: the same rows as the sweep of every scenario, with fewer processes.

The small program's figures are hand counts (below); the reference loop's rows are checked
against the sweep of every scenario (--no-dedup) and against the model (conformance).
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.cli.sweep import DEFAULT_MATRIX
from crashsweep.realsweep import rows
from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.sweep import Outcome, Scenario, SweepOptions, SweepResult, Target, sweep
from crashsweep.realsweep.world import World
from crashsweep.spec.job import TRIAGE, load_job

PROGRAM = textwrap.dedent(
    """
    import json, os, time
    from pathlib import Path
    from crashsweep.realsweep.probe.crashpoint import count, crashpoint, fresh_id

    def main():
        state = Path(os.environ["CRASHSWEEP_WORKDIR"]) / "state.json"
        saved = json.loads(state.read_text()) if state.exists() else {"run": fresh_id(), "done": 0}
        count("starts")
        for step in range(saved["done"], 3):
            saved = {**saved, "done": step + 1, "at": time.time()}
            state.write_text(json.dumps(saved))
            crashpoint(f"saved {step + 1}")
    """
)


def key(world: World) -> World:
    """The state key of PROGRAM: its timestamp blanked."""
    data = world.file("state.json")
    if data is None:
        return world
    return world.with_file("state.json", json.dumps({**json.loads(data), "at": 0}).encode())


def finished(scenario: Scenario) -> Outcome:
    """Missing unless the state file says 3 steps."""
    done = json.loads((scenario.workdir / "state.json").read_text())["done"]
    return Outcome(missing=0 if done == 3 else 1, applied=1)


def _sweep(tmp_path: Path, name: str, **extra: object) -> SweepResult:
    (tmp_path / "prog.py").write_text(PROGRAM)
    target = Target.entry_point("prog:main", path=[str(tmp_path)])
    options = SweepOptions(depth=2, workers=2, tracker=None, root=tmp_path / name, **extra)  # type: ignore[arg-type]
    return sweep(target, finished, options)


PROGRAM_SWEEPS: dict[str, dict[str, object]] = {
    "keyed": {"dedup": True, "state_key": key},
    "plain": {"dedup": True},
    "every": {},
    "snapped": {"dedup": True, "state_key": key, "snapshots": True},
    "listed": {"dedup": True, "state_key": key, "snapshots": True, "every": True},
}
"""PROGRAM's sweeps at depth 2 by name: with the state key (processes killed for real at the
points), without it, every scenario, with the key and snapshots, and that one listing every scenario."""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], SweepResult]:
    """PROGRAM's sweep of each name in PROGRAM_SWEEPS, run once for the module (several tests read the same one)."""
    folder = tmp_path_factory.mktemp("program")
    done: dict[str, SweepResult] = {}

    def swept(name: str) -> SweepResult:
        if name not in done:
            done[name] = _sweep(folder, name, **PROGRAM_SWEEPS[name])
        return done[name]

    return swept


def test_a_state_key_merges_worlds_that_differ_only_by_a_timestamp(program: Callable[[str], SweepResult]) -> None:
    """Hand counts. Points: saved 1, 2, 3. A crash at saved k leaves done = k; the restart passes 3 - k points.

    Scenarios: 3 with one crash, 2 + 1 + 0 = 3 with two. Worlds (the empty one included):
    with the key, done = 1, 2, 3 after one crash and done = 2 (from 1), 3 (from 1), 3 (from 2)
    after two: 1 + 3 + 2 = 6 distinct of 1 + 3 + 3 = 7 reached. Processes: one to the end per
    world, one per crash point below the depth: root 1 + 3, level 1 (1 + 2) + (1 + 1) + (1 + 0),
    level 2 one each: 4 + 6 + 2 = 12 (13 when the timestamp keeps all 7 apart). The sweep of
    every scenario runs 1 + 3 * 2 + 3 * 3 = 16.
    """
    keyed, plain, every = program("keyed"), program("plain"), program("every")
    assert keyed.worlds == (6, 7)
    assert plain.worlds == (7, 7)
    assert (keyed.processes, plain.processes, every.processes) == (12, 13, 16)
    for result in (keyed, plain):
        counts = result.counts
        assert counts is not None
        assert counts.scenarios == {0: 1, 1: 3, 2: 3}
        assert counts.total("missing", range(1, 3)) == 0
        # starts: a scenario with k crashes starts k + 1 processes: 3 * 2 + 3 * 3
        assert counts.total("starts", range(1, 3)) == 15
    assert every.scenarios[-1].counters["starts"] == 3


def test_the_representatives_are_the_first_scenarios_of_their_worlds(program: Callable[[str], SweepResult]) -> None:
    """With the key, the two-crash world done = 3 is reached by 1,2 and 2,1: it is named 1,2."""
    keyed = program("keyed")
    assert [s.code for s in keyed.scenarios] == ["1", "2", "3", "1,1", "1,2"]


SMALL_JOB = """\
name = "issue-and-comment"
turns = [["create_a"], ["comment_a"]]

[calls]
create_a = { tool = "create_issue", writes = true }
comment_a = { tool = "comment", writes = true }
"""


@pytest.mark.parametrize(
    ("variant", "tracker"), [("save-once-per-turn", "keyed"), ("idempotency-keys", "keyless"), ("agent-loop", "keyed")]
)
def test_dedup_gives_the_rows_of_every_scenario_and_of_the_model_at_depth_2(
    tmp_path: Path, variant: str, tracker: str
) -> None:
    """The same row from the graph of worlds as from every scenario run, and the model's row."""
    path = tmp_path / "job.toml"
    path.write_text(SMALL_JOB)
    job = load_job(path)
    options = SweepOptions(depth=2, workers=2, dedup=True, snapshots=True)
    merged = conformance.conform(variant, job, path, tracker, options)
    assert merged.agrees, conformance.render([merged])
    every = reference.run(variant, job, path, tracker, SweepOptions(depth=2, workers=2))
    assert merged.sweep.counts is not None
    assert every.counts is None
    assert merged.real == rows.summary(every, variant=variant, job=job.name, tracker=tracker)
    assert merged.sweep.processes < every.processes
    distinct, reached = merged.sweep.worlds
    assert distinct < reached  # worlds did merge: the reference loop's run IDs come from fresh_id()


KILLED_AT_DEPTH_1 = SweepOptions(depth=1, workers=2, dedup=True)
"""Merging worlds, a process killed for real at every point, one crash deep."""


@pytest.fixture(scope="module")
def killed_at_depth_1() -> Callable[[str, str], conformance.Conformance]:
    """The model's row and the real one (KILLED_AT_DEPTH_1) of a design and tracker on triage, made once for the module.

    The real sweep is the one test_snapshots_and_kills_give_the_same_reference_rows compares
    with snapshots: the same reference.run with the same options, so it is run once for both.
    """
    done: dict[tuple[str, str], conformance.Conformance] = {}

    def conformed(variant: str, tracker: str) -> conformance.Conformance:
        if (variant, tracker) not in done:
            done[variant, tracker] = conformance.conform(variant, TRIAGE, None, tracker, KILLED_AT_DEPTH_1)
        return done[variant, tracker]

    return conformed


@pytest.mark.parametrize(("variant", "tracker"), DEFAULT_MATRIX)
def test_every_design_conforms_deduplicated_at_depth_1(
    variant: str, tracker: str, killed_at_depth_1: Callable[[str, str], conformance.Conformance]
) -> None:
    """Merging worlds, a process killed for real at every point: every design's row is the model's."""
    result = killed_at_depth_1(variant, tracker)
    assert result.agrees, conformance.render([result])
    assert result.sweep.counts is not None


def test_snapshots_build_the_graph_that_real_kills_build(program: Callable[[str], SweepResult]) -> None:
    """One run per world, paused at its points, against a process killed at each point: the same graph.

    The same worlds (distinct and reached), the same path counts and sums, the same
    representative scenarios with their points and counters; fewer processes: one per world
    (6 with the key) instead of 12.
    """
    killed, snapped = program("keyed"), program("snapped")
    assert snapped.worlds == killed.worlds
    assert snapped.counts == killed.counts
    assert snapped.scenarios == killed.scenarios
    assert snapped.baseline == killed.baseline
    assert (snapped.processes, killed.processes) == (6, 12)


@pytest.mark.parametrize(("variant", "tracker"), [("save-once-per-turn", "keyed"), ("agent-loop", "keyless")])
def test_snapshots_and_kills_give_the_same_reference_rows(
    variant: str, tracker: str, killed_at_depth_1: Callable[[str, str], conformance.Conformance]
) -> None:
    """The reference loop on triage at depth 1: the same counts, representatives and worlds either way."""
    snapped = replace(KILLED_AT_DEPTH_1, snapshots=True)
    results = [killed_at_depth_1(variant, tracker).sweep, reference.run(variant, TRIAGE, None, tracker, snapped)]
    assert results[0].counts == results[1].counts
    assert results[0].scenarios == results[1].scenarios
    assert results[0].worlds == results[1].worlds
    assert results[1].processes == results[1].worlds[0]  # one process per distinct world


BY_HAND = textwrap.dedent(
    """
    import os, signal
    from pathlib import Path

    def point(name):  # the protocol by hand, as a program in another language would: no snapshots
        with open(os.environ["CRASHSWEEP_POINTS_LOG"], "a") as log:
            log.write(name + "\\n")
        if os.environ.get("CRASHSWEEP_CRASH_AT") == "1:" + name:
            os.kill(os.getpid(), signal.SIGKILL)

    state = Path("state.txt")
    for step in range(int(state.read_text()) if state.exists() else 0, 2):
        state.write_text(str(step + 1))
        point(f"saved {step + 1}")
    """
)


def test_a_program_that_does_not_pause_at_its_points_is_killed_at_them(tmp_path: Path) -> None:
    """Hand counts: points saved 1, saved 2; a crash at saved 1 leaves one point to the restart.

    Scenarios: 2 with one crash, 1 with two. Processes: from the empty world 1 + 2 killed, from
    state 1: 1 + 1, from state 2 (one crash): 1, from state 2 (two crashes): 1; 7 in all.
    """
    (tmp_path / "by_hand.py").write_text(BY_HAND)
    target = Target.command([sys.executable, str(tmp_path / "by_hand.py")])
    results = []
    for snapshots in (True, False):
        options = SweepOptions(depth=2, workers=2, tracker=None, dedup=True, snapshots=snapshots)
        results.append(sweep(target, lambda s: Outcome(applied=1), options))
    assert results[0].counts == results[1].counts
    assert results[0].counts is not None
    assert results[0].counts.scenarios == {0: 1, 1: 2, 2: 1}
    assert results[0].processes == results[1].processes == 7


def test_every_scenario_can_be_listed_from_the_graph(program: Callable[[str], SweepResult]) -> None:
    """every=True: the graph's paths expanded are the scenarios the sweep of every scenario runs."""
    listed, every = program("listed"), program("every")
    assert listed.processes == 6
    assert [(s.crashes, s.counters, s.outcome, s.points) for s in listed.scenarios] == [
        (s.crashes, s.counters, s.outcome, s.points) for s in every.scenarios
    ]


ONE_WRITE = """
name = "one-write"
turns = [["create_a"]]

[calls]
create_a = { tool = "create_issue", writes = true }
"""
"""A job of one write: few crash points, so that a sweep that kills at every point stays small."""


def test_faults_two_moves_deep_give_the_models_row_killed_or_snapshotted(tmp_path: Path) -> None:
    """A lost reply, then a kill at a later point of the same process, or a snapshot there: the model's row.

    save-once-per-turn on one write: the process that loses the reply and is killed later is
    `_crash` with a fault; both graphs count the model's row, and the same one.
    """
    path = tmp_path / "one-write.toml"
    path.write_text(ONE_WRITE)
    job = load_job(path)
    found = []
    lost = Nemesis(("lost-reply",))
    for snapshots in (True, False):
        options = SweepOptions(depth=2, workers=2, dedup=True, snapshots=snapshots)
        result = conformance.conform("save-once-per-turn", job, path, "keyed", options, nemesis=lost)
        assert result.differences == []
        assert result.real.moves[2]["lost-reply"] > 0
        found.append((result.real, result.sweep.counts))
    assert found[0] == found[1]
