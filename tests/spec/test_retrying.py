"""Retry layers (spec/RETRIES.md): figures derived by hand from the rules, then checked against the explorer.

Two derivations, one per item of the issue's "done when":

1. idempotency-keys with a whole-run retry on the job triage-fails (create_a's tool fails after
   the tracker applied it), keyed tracker, depth 1. Process 1 passes 7 points (start: 2, reply 1
   arrived, reply 1: 2, tracker accepted create_a, tool failed create_a); the run layer catches
   the failure and begins run-2, whose 34 points are idempotency-keys' triage run (create_a
   fails no more). 41 points, and no retry move: the layer's one retry is spent on the job's
   failure before any other write is accepted, and no write is accepted before it. Run-2 sends
   create_a under Key(run-2): the uninterrupted run holds a duplicate and makes 4 model calls
   (3 without the layer). A crash at point i:
   - 1-5 (before create_a is sent): the restart meets the failure and the run retry anyway,
     so 1 dup; model calls 4, or 5 after a crash at `reply 1 arrived` or `reply 1: tmp written`
     (the model is asked again): calls+ +2;
   - 6, 7 (create_a applied, failure spent, no retry yet): the restart resends Key(run-1),
     which the tracker honours, and no failure comes: 0 dups, 3 calls (-1 each);
   - 8 (`start: tmp written` of run-2): the checkpoint still holds run-1, which the restart
     finishes under run-1's keys: 0 dups, 3 calls (-1);
   - 9-13 (run-2's start save renamed up to create_a applied): the restart goes on with run-2:
     1 dup; 5 calls after a crash at run-2's `reply 1 arrived` or `reply 1: tmp written`, else 4
     (+2);
   - 14-41: 1 dup; +1 call at the 4 points between a model call and its reply's (or the final
     answer's) save: `reply 2 arrived`, `reply 2: tmp written`, `final reply arrived`,
     `final: tmp written` (+4).
   So 41 scenarios, with_dups 41 - 3 = 38, dups 38, calls+ 2 - 2 - 1 + 2 + 4 = 5; the run retry
   happens in every scenario but the crashes at 6 and 7: retry.run 39. The worst scenario holds
   1 duplicate and 5 model calls. With a layer of scope `call` instead, create_a is sent again
   under the same key: no duplicate anywhere.

2. A `timeout` layer of scope `turn` and a file lock (idempotency-keys without its startup
   save, job one-write, depth 1): see `test_a_turn_timeout_duplicates_past_a_lock_file_not_a_lease`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.explorer.worst import most
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.job import Job, load_job
from crashsweep.spec.policy import Lock, Policy
from crashsweep.spec.retries import Layer, Stack
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import PRESETS
from crashsweep.variants.composed import compose

ROOT = Path(__file__).resolve().parents[2]
TRIAGE_FAILS = load_job(ROOT / "examples" / "triage-fails.toml")
ONE_WRITE = load_job(ROOT / "examples" / "one-write.toml")


def _row(policy: Policy, job: Job, depth: int = 1) -> Summary:
    design = compose("under test", "a design with retry layers", policy)
    model = variants.model(design, job, TRACKERS["keyed"])
    return summarize(explore(model, depth), variant="under test", job=job.name, tracker="keyed")


def _keys(stack: Stack) -> Policy:
    return replace(PRESETS["idempotency-keys"].policy, retries=stack)


def test_a_run_retry_duplicates_what_the_run_had_done_under_keys() -> None:
    """Item 1 of the module's docstring: every figure derived there."""
    row = _row(_keys((Layer("run", "error", 2),)), TRIAGE_FAILS)
    assert row.crash_points == 41
    assert row.scenarios == {1: 41}
    assert row.moves == {1: {"crash": 41, "retry": 0}}
    assert (row.with_dups, row.dups, row.missing, row.calls_plus) == (38, 38, 0, 5)
    assert row.retried == {"retry.call": 0, "retry.turn": 0, "retry.run": 39}
    assert (row.worst_dups, row.worst_calls, row.run_calls) == (1, 5, 4)
    assert not row.holds


def test_a_call_retry_duplicates_nothing_under_keys() -> None:
    """Scope `call` resends create_a with Key(run-1, create_a): the tracker honours it.

    The points are idempotency-keys' own on triage-fails (36: its failure is followed by the
    same resend the loop makes); the layer (attempts 2) is spent on create_a, and the move
    `retry` is offered at the two other writes' `tracker accepted` points: 38 scenarios.
    """
    row = _row(_keys((Layer("call", "error", 2),)), TRIAGE_FAILS)
    assert (row.crash_points, row.scenarios, row.moves[1]) == (36, {1: 38}, {"crash": 36, "retry": 2})
    assert (row.with_dups, row.dups, row.missing) == (0, 0, 0)
    assert row.holds


def _timeout_design(lock: Lock) -> Policy:
    plain = replace(PRESETS["idempotency-keys"].policy, startup_save=False, lock=lock)
    return replace(plain, retries=(Layer("turn", "timeout", 2),))


def test_a_turn_timeout_duplicates_past_a_lock_file_not_a_lease() -> None:
    """idempotency-keys without its startup save, a turn x2 timeout layer, one-write, depth 1.

    The run's points (lock file): lock: 2, reply 1 arrived, reply 1: 2, tracker accepted and
    tool returned create_a, result create_a: 3, turn 1: 2, final reply arrived, final: 2 = 15.
    A turn times out at a point where turn 1 is in memory and not complete: `reply 1: tmp
    written` (4) up to `result saved create_a` (10), 7 sites. The new attempt restarts from disk;
    the first wakes at one of its points, or when it stops.
    - Site 4: nothing renamed yet, so the restart begins run-2 (15 points: 16 wake choices). The
      woken process renames its temp file and sends create_a under Key(run-1) whenever a temp
      file lies on disk: its own, before the restart writes one (wakes at the restart's lock:
      tmp written, lock: renamed, reply 1 arrived), or the restart's after it sent Key(run-2)
      (result create_a: tmp written, turn 1: tmp written, final: tmp written): 6 duplicates.
      Woken at the restart's `reply 1: tmp written`, it renames run-2's reply over the
      checkpoint and sends once; the restart's rename then fails: no duplicate. Elsewhere its
      rename fails and it stops. The lock file stops nobody.
    - Sites 5-8: the checkpoint holds run-1's reply: the restart resends under run-1's keys
      (12 points, 13 choices each); sites 9, 10: the result is saved (7 points, 8 choices).
    Scenarios: 15 crashes + 16 + 4 x 13 + 2 x 8 = 99, with_dups 6.
    With lease+fencing (no lock points: 13 and 11, 10, 5 points) the restart's lease fences the
    woken process's first rename: 13 + 14 + 4 x 11 + 2 x 6 = 83 scenarios, no duplicate.
    """
    locked = _row(_timeout_design("file"), ONE_WRITE)
    assert (locked.crash_points, locked.scenarios, locked.moves[1]) == (15, {1: 99}, {"crash": 15, "retry": 84})
    assert (locked.with_dups, locked.dups) == (6, 6)
    leased = _row(_timeout_design("lease+fencing"), ONE_WRITE)
    assert (leased.crash_points, leased.scenarios, leased.moves[1]) == (13, {1: 83}, {"crash": 13, "retry": 70})
    assert (leased.with_dups, leased.dups) == (0, 0)


@pytest.mark.parametrize("scope", ["call", "turn", "run"])
def test_no_layer_catches_twice_more_than_its_attempts_allow(scope: str) -> None:
    """At depth 2 a layer with attempts 2 retries an instance once: a second failure reaches the loop.

    On one-write, a `call` or `turn` layer's instance is the one write (or turn) of run-1, and a
    `run` layer's is the scenario: no scenario retries more than once.
    """
    layer = Layer(scope, "error", 2)  # type: ignore[arg-type]  # a scope of the parametrization
    model = variants.model(compose("x", "x", _keys((layer,))), ONE_WRITE, TRACKERS["keyed"])
    exploration = explore(model, 2)
    assert most(exploration, f"retry.{scope}") == 1
