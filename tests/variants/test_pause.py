"""A paused process (spec/FAULTS.md section 7): the verdicts and figures derived by hand, from the explorer.

The derivations are in tests/test_pause_oracle.py's docstring (the one-write job) and below;
the explorer must reach the same figures as the hand count and as the oracle.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep import variants
from crashsweep.explorer import Exploration, explore
from crashsweep.reports.counterexample import shortest
from crashsweep.spec import invariants
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import Lock
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel

ONE_WRITE = load_job(Path(__file__).resolve().parents[2] / "examples" / "one-write.toml")
AGENT_LOOP = variants.PRESETS["agent-loop"].policy


def _explore(lock: Lock, job: Job, depth: int = 1, faults: tuple[str, ...] = ("pause",)) -> Exploration[World]:
    design = compose(f"agent-loop ({lock})", "", replace(AGENT_LOOP, lock=lock))
    return explore(LoopModel(design, Env(job, TRACKERS["keyed"], faults)), depth)


@pytest.mark.parametrize(("lock", "duplicating"), [("file", 22), ("none", 3), ("lease+fencing", 0), ("os-lock", 0)])
def test_one_pause_on_one_write(lock: Lock, duplicating: int) -> None:
    """With its lock file agent-loop duplicates (22, more than with no lock: 3); a lease or an OS lock does not."""
    counts = _explore(lock, ONE_WRITE).counts
    assert counts.measures[1]["with_dups"] == duplicating
    assert counts.measures[1]["dups"] == duplicating
    assert counts.measures[1]["missing"] == 0


def test_the_file_lock_duplicates_on_triage_and_lease_fencing_does_not() -> None:
    """The triage job: the same verdicts (two live processes send the same write under two run IDs)."""
    file_lock, lease = _explore("file", TRIAGE), _explore("lease+fencing", TRIAGE)
    assert not file_lock.verdicts[invariants.NO_DUPLICATE].holds
    assert lease.verdicts[invariants.NO_DUPLICATE].holds
    assert lease.verdicts[invariants.NO_LOSS].holds


@pytest.mark.parametrize("job", [ONE_WRITE, TRIAGE], ids=lambda job: job.name)
def test_shortest_counterexample_of_the_file_lock(job: Job) -> None:
    """18 steps, one move: pause at `lock: renamed`, wake at the restart's `tracker accepted create_a`.

    Hand count: a duplicate needs a second run ID, so process 1 pauses before `start: renamed`
    (at `lock: renamed`: 2 steps, then the pause, which starts process 2, 1 step). Both must
    then send create_a. Process 1 sending first would finish its run while process 2 is held
    (longer); so process 2 sends first: 8 steps from its `lock: tmp written` to `tracker
    accepted create_a` (lock renamed, start 2, reply 1, marker 3, accepted), then the
    wake-up (1 step, to process 1's `start: tmp written`) and process 1's 6 steps to its own
    `tracker accepted create_a` (start renamed, reply 1, marker 3, accepted): 2 + 1 + 8 + 1 + 6
    = 18. Pausing at `lock: tmp written` cannot duplicate (its lock rename fails), and at
    `start: tmp written` its rename needs process 2's temp file, which it has only at later
    points. Triage's first turn starts the same way.
    """
    ex = _explore("file", job)
    [cx] = shortest(ex, variant="agent-loop", job=job.name, job_file=None, tracker="keyed")
    assert len(cx.steps) == 18
    assert [(step.kind, step.action, step.before.process.point if step.before.process else None)
            for step in cx.steps if step.kind == "fault" or step.action == "wake"] == [
        ("fault", "pause", "lock: renamed"),
        ("step", "wake", "tracker accepted create_a"),
    ]  # fmt: skip
    assert cx.steps[-1].point == "tracker accepted create_a"


def test_pauses_are_tallied_and_os_lock_refuses_the_restart() -> None:
    """os-lock on triage: 36 crash points (38 minus the lock file's 2), each a crash or a pause, 72 scenarios."""
    ex = _explore("os-lock", TRIAGE)
    assert ex.counts.scenarios[1] == 72
    assert ex.counts.counters[1][fault_counter("pause")] == 36
    violation = ex.verdicts[invariants.NO_DUPLICATE].node
    assert violation is None


def test_without_pause_the_new_locks_are_no_lock() -> None:
    """Crashes alone: os-lock and lease+fencing reach exactly the figures of lock none (depth 2)."""
    none = _explore("none", TRIAGE, 2, ()).counts
    for lock in ("os-lock", "lease+fencing"):
        other = _explore(lock, TRIAGE, 2, ()).counts
        assert other.scenarios == none.scenarios
        assert other.measures == none.measures
        assert other.counters == none.counters


def test_lease_fencing_holds_at_depth_2() -> None:
    """lease+fencing on one-write, two moves (pauses and crashes together): nothing duplicated or lost."""
    ex = _explore("lease+fencing", ONE_WRITE, 2)
    assert ex.verdicts[invariants.NO_DUPLICATE].holds
    assert ex.verdicts[invariants.NO_LOSS].holds
    assert ex.counts.counters[2][fault_counter("pause")] > 0
