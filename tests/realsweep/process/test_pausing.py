"""A pause for real: two live processes of the reference loop, held and let go, against the model and by hand."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from crashsweep.realsweep import sweep as engine
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis
from crashsweep.realsweep.faults.pause import PAUSE, waking_at
from crashsweep.realsweep.process.runner import Runner
from crashsweep.realsweep.process.runner import runner as runner_of
from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.values import ScenarioResult, SweepOptions
from crashsweep.spec.job import load_job
from crashsweep.spec.policy import Lock
from tests.paths import ROOT
from tests.test_pause_oracle import HAND_DUPLICATING

EXAMPLES = ROOT / "examples"
ONE_WRITE_PATH = EXAMPLES / "one-write.toml"
ONE_WRITE = load_job(ONE_WRITE_PATH)
DESIGN_OF: dict[Lock, Path | None] = {
    "file": None,  # agent-loop itself takes the lock file
    "none": EXAMPLES / "agent-loop-none.toml",
    "os-lock": EXAMPLES / "agent-loop-os-lock.toml",
    "lease+fencing": EXAMPLES / "agent-loop-lease.toml",
}
OPTIONS = SweepOptions(depth=1, workers=2, dedup=False)


@pytest.mark.parametrize("lock", list(HAND_DUPLICATING))
def test_the_one_write_pause_sweep_agrees_with_the_model_and_the_hand_derivation(lock: Lock) -> None:
    """agent-loop with each lock, one move under `pause`: the real row is the model's, and its duplicates the hand's."""
    found = conformance.conform(
        "agent-loop",
        ONE_WRITE,
        ONE_WRITE_PATH,
        "keyed",
        OPTIONS,
        design_path=DESIGN_OF[lock],
        nemesis=Nemesis((PAUSE.name,)),
    )
    assert found.differences == []
    assert found.real.with_dups == HAND_DUPLICATING[lock]
    assert found.real.dups == HAND_DUPLICATING[lock]  # one extra record each
    assert found.real.moves[1]["pause"] > 0


def test_under_os_lock_each_crash_point_has_one_pause_scenario() -> None:
    """The restart is refused before its first point, so the paused process wakes only as it stops (FAULTS.md 7.1)."""
    result = reference.run(
        "agent-loop", ONE_WRITE, ONE_WRITE_PATH, "keyed", OPTIONS, None, DESIGN_OF["os-lock"], Nemesis((PAUSE.name,))
    )
    pauses = [s for s in result.scenarios if s.faults]
    assert len(pauses) == len(result.baseline.points)
    assert all(s.faults[0].endswith("wake at p2 stopped") for s in pauses)
    assert all(s.points == () for s in pauses)  # the refused restart passed no point


@contextmanager
def agent_loop(lock: Lock, tmp_path: Path) -> Iterator[Runner]:
    """A runner of agent-loop with `lock` on the one-write job, with its tracker service."""
    target = reference.target("agent-loop", ONE_WRITE_PATH, "keyed", DESIGN_OF[lock])
    options = SweepOptions(depth=1, workers=1, root=tmp_path / "sweep")
    with runner_of(target, reference.check(ONE_WRITE), options, Nemesis((PAUSE.name,))) as runner:
        yield runner


def pause_at(runner: Runner, point: str) -> tuple[Fault, ScenarioResult]:
    """The pause at the first pass of `point` of process 1, its restart run to its stop: the fault and the scenario."""
    baseline = runner.run(())
    fault = Fault(PAUSE, baseline.points.index(point) + 1, point)
    return fault, runner.run((), fault)


def test_a_stopped_last_process_leaves_the_run_to_a_supervisor_restart(tmp_path: Path) -> None:
    """file lock, paused at `lock: tmp written`, woken when the restart stops.

    By hand: the restart takes the lock (its temp file renamed), finishes run-2 (one record);
    process 1 wakes and renames its lock temp file, which is gone: it stops. It ended last and
    stopped, so the supervisor restarts (rule 6), finds the run done and exits: three
    processes, one record, no duplicate.
    """
    with agent_loop("file", tmp_path) as runner:
        _, result = pause_at(runner, "lock: tmp written")
    assert result.faults == ("pause at lock: tmp written, wake at p2 stopped",)
    assert result.record()["processes"] == 3
    assert (result.outcome.dups, result.outcome.missing, result.outcome.applied) == (0, 0, 1)
    assert result.points[:2] == ("lock: tmp written", "lock: renamed")  # the restart's, the wake choices


def test_woken_at_a_point_of_the_restart_it_renames_the_restarts_temp_file(tmp_path: Path) -> None:
    """No lock, paused at `start: tmp written`, woken at the restart's `result create_a: tmp written`.

    By hand: the restart began run-2 and sent create_a (record #1); process 1 wakes and
    renames the temp file the restart wrote (rule 5), then goes on with run-1 in memory: it
    asks the model, saves its marker, sends create_a under Key(run-1, create_a), a key the
    tracker never saw: record #2, a duplicate; it finishes. The held restart goes on: its
    rename finds its temp file gone and it stops, last: the supervisor's restart finds the run
    done. Three processes, one duplicate.
    """
    with agent_loop("none", tmp_path) as runner:
        fault, stopped = pause_at(runner, "start: tmp written")
        wake = stopped.points.index("result create_a: tmp written") + 1
        result = runner.run((), waking_at(fault, wake, stopped.points))
    assert result.faults == ("pause at start: tmp written, wake at result create_a: tmp written",)
    assert (result.outcome.dups, result.outcome.applied) == (1, 2)
    assert result.record()["processes"] == 3
    assert result.points == ()  # a scenario whose restart was held lists no wake choices


def test_a_pause_needs_depth_one() -> None:
    """Deeper scenarios with a second live process are the model's for now: refused before any process starts."""
    with pytest.raises(engine.SweepError, match="pauses a process in scenarios of one move: use depth 1, not 2"):
        reference.run(
            "agent-loop", ONE_WRITE, ONE_WRITE_PATH, "keyed", SweepOptions(depth=2), nemesis=Nemesis((PAUSE.name,))
        )


def test_an_fsync_of_a_temp_file_the_restart_renamed_does_nothing(tmp_path: Path) -> None:
    """No lock, fsync of each temp file: the woken process syncs a temp file that may be gone, and goes on (rule 5)."""
    design = tmp_path / "synced.toml"
    text = (
        (EXAMPLES / "agent-loop-none.toml")
        .read_text()
        .replace('lock = "none"', 'lock = "none"\nfsync = "no-dir-fsync"')
    )
    design.write_text(text.replace('name = "agent-loop-none"', 'name = "agent-loop-none-synced"'))
    found = conformance.conform(
        "agent-loop", ONE_WRITE, ONE_WRITE_PATH, "keyed", OPTIONS, design_path=design, nemesis=Nemesis((PAUSE.name,))
    )
    assert found.differences == []
    assert "start: tmp synced" in found.sweep.baseline.points  # the fsyncs are there, each with its point
