"""The pause oracle on its own reproduces the figures derived by hand in spec/FAULTS.md section 7.

The job is examples/one-write.toml (one turn, one write `create_a`); the design agent-loop
(keyed tracker) with each lock. Hand derivation of the duplicates at one move:

A duplicate needs two records of create_a, and every request of agent-loop carries
Key(run, create_a): the keyed tracker applies a second record only under a second run ID. A
restart begins a second run only when no checkpoint exists, so process 1 must be paused
before its `start: renamed`, and both processes must then send. Process 2 runs the same 18
(file lock) or 16 (no lock) crash points; process 1 wakes at one of them or when process 2
stops (19 or 17 choices). Both share one temp file: a rename whose temp file is gone fails
and stops the process (rule 5).

- lock `file`, paused at `lock: tmp written`: its lock rename succeeds only if woken at
  process 2's `lock: tmp written`; then it finishes run-1 while process 2 is held, and
  process 2's lock rename fails: one record. Woken anywhere else, it stops: 0 duplicates.
- `file`, paused at `lock: renamed`: woken, it saves run-1 and finishes (one record), and
  process 2 goes on with run-2 and sends too, unless it is held between a temp write and its
  rename (its rename then fails): at `start: tmp written` and `marker create_a: tmp written`
  it has not sent yet (no duplicate); at `result`, `turn 1` and `final: tmp written` it has
  (duplicate). 19 - 2 = 17 duplicates.
- `file`, paused at `start: tmp written`: its rename needs a temp file: only at process 2's
  temp writes (and at its lock points, where process 2 has not touched the checkpoint yet:
  process 1 finishes run-1, then process 2 runs run-2: a duplicate each, 2). At `start` and
  `marker create_a: tmp written` process 2 has not sent: none; at `result`, `turn 1`,
  `final: tmp written` it has: 3. Elsewhere the rename fails: none. 2 + 3 = 5.
- So `file`: 0 + 17 + 5 = **22** scenarios with one duplicate each.
- lock `none`: only `start: tmp written` is before the run ID is durable; as the last case
  without the two lock points: **3**.
- `lease+fencing`: process 2 takes token 2 at its start, before any of its crash points, so
  process 1 is stale whenever it wakes: its first write to disk or request is refused and it
  stops. Nothing it does after the pause reaches disk or tracker, so every final world is
  one of a crash at that point: agent-loop has none with a duplicate: **0**.
- `os-lock`: process 2 is refused at its start; process 1 wakes and finishes alone: **0**,
  and one scenario per crash point (the pause has no wake-up choice: process 2 has no point).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import Lock
from tests import pause_oracle
from tests.replay_oracle import DESIGNS as ORACLE_DESIGNS
from tests.replay_oracle import Environment, sweep
from tests.test_replay_oracle import shares_nothing_mutable

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ONE_WRITE = load_job(EXAMPLES / "one-write.toml")
AGENT_LOOP = ORACLE_DESIGNS["agent-loop"]
PAUSE = Environment(("pause",))
HAND_DUPLICATING: dict[Lock, int] = {"file": 22, "none": 3, "lease+fencing": 0, "os-lock": 0}
"""The scenarios with a duplicate at one move on one-write, per lock, derived by hand (module docstring)."""


@pytest.mark.parametrize(("lock", "duplicating"), list(HAND_DUPLICATING.items()))
def test_duplicates_after_one_pause_on_one_write(lock: Lock, duplicating: int) -> None:
    """The hand-derived scenarios with a duplicate (module docstring); each has exactly one extra record."""
    result = pause_oracle.sweep(replace(AGENT_LOOP, lock=lock), ONE_WRITE, "keyed", 1, PAUSE)
    tally = result.by_crashes[1]
    assert tally.with_dups == duplicating
    assert tally.dups == duplicating
    assert tally.missing == 0


def test_os_lock_pause_scenarios_are_the_crash_points() -> None:
    """os-lock on triage: agent-loop's 38 crash points minus the two of the lock file = 36 crashes, 36 pauses."""
    result = pause_oracle.sweep(replace(AGENT_LOOP, lock="os-lock"), TRIAGE, "keyed", 1, PAUSE)
    assert result.crash_points == 36
    assert dict(result.by_crashes[1].moves) == {"crash": 36, "pause": 36}
    assert result.by_crashes[1].scenarios == 72
    assert result.by_crashes[1].with_dups == 0


@pytest.mark.parametrize("design", ["agent-loop", "save-after-reply", "keys-and-markers"])
def test_without_pause_it_is_the_single_process_oracle(design: str) -> None:
    """Crashes alone: the threaded replay gives the single-process oracle's figures at depth 2."""
    policy = ORACLE_DESIGNS[design]
    threaded = pause_oracle.sweep(policy, TRIAGE, "keyed", 2, Environment())
    plain = sweep(policy, TRIAGE, "keyed", 2)
    for k in (1, 2):
        a, b = threaded.by_crashes[k], plain.by_crashes[k]
        assert (a.scenarios, a.with_dups, a.dups, a.asks, a.model_calls) == (
            b.scenarios,
            b.with_dups,
            b.dups,
            b.asks,
            b.model_calls,
        )


def test_a_replay_leaves_no_thread_behind() -> None:
    """Every process thread ends with its replay, even one whose scenario does not exist."""
    before = threading.active_count()
    assert pause_oracle.replay(AGENT_LOOP, ONE_WRITE, "keyed", ((3, "pause"),), (99,), PAUSE) is None
    assert pause_oracle.replay(AGENT_LOOP, ONE_WRITE, "keyed", ((2, "pause"),), (9,), PAUSE) is not None
    assert threading.active_count() == before


APPROVAL = load_job(EXAMPLES / "triage-approval.toml")
PARALLEL = load_job(EXAMPLES / "parallel-batch.toml")
REUSE_CASES = [
    ("save-after-reply", "none", ONE_WRITE, 2, ("pause", "lost-reply")),
    ("keys-and-markers", "os-lock", ONE_WRITE, 2, ("pause", "power-loss")),
    ("agent-loop", "lease+fencing", TRIAGE, 2, ("lost-reply",)),
    ("attempt-markers", "file", APPROVAL, 1, ("pause", "changed-args")),
    ("keys-and-markers", "file", PARALLEL, 1, ("pause", "key-expiry")),
]


@pytest.mark.parametrize(("design", "lock", "job", "depth", "faults"), REUSE_CASES)
def test_a_sweep_from_cuts_and_forks_gives_the_figures_of_replays_from_scratch(
    design: str, lock: Lock, job: Job, depth: int, faults: tuple[str, ...]
) -> None:
    """Every figure agrees whether each scenario (each wake-up choice) is resumed or replayed from an empty world.

    A resumed replay begins at a process start or a crash while no other process lived, and only
    where every pause taken by then wakes as the scenario says (a choice that moves the last
    pause's wake-up may not reuse a cut after that pause).
    """
    policy = replace(ORACLE_DESIGNS[design], lock=lock)
    resumed = pause_oracle.sweep(policy, job, "keyed", depth, Environment(faults))
    scratch = pause_oracle.sweep(policy, job, "keyed", depth, Environment(faults), reuse=False)
    assert resumed.by_crashes[depth].scenarios > 0
    assert resumed == scratch


def test_a_fenced_world_copy_shares_nothing_mutable() -> None:
    """Fenced's copy (World.copy, its fencing token kept), on the final worlds of one-move pause scenarios."""
    policy = replace(AGENT_LOOP, lock="lease+fencing")
    worlds = [done.world for _, _, done in pause_oracle.scenarios(policy, ONE_WRITE, "keyed", 1, PAUSE)]
    assert any(isinstance(world, pause_oracle.Fenced) and world.fence == 2 for world in worlds)
    assert all(shares_nothing_mutable(world, world.copy()) for world in worlds)
