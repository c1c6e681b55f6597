"""The retry oracle (tests/retry_oracle.py) on small cases whose figures are derived by hand.

Point numbers below count the crash points of a run from 1. idempotency-keys on the job
one-write passes 15: start: tmp written (1), renamed (2), reply 1 arrived (3), reply 1: tmp
written (4), renamed (5), tracker accepted create_a (6), tool returned create_a (7), result
create_a: tmp written (8), renamed (9), result saved (10), turn 1: 2 (11, 12), final reply
arrived (13), final: 2 (14, 15).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.policy import Lock, Policy
from crashsweep.spec.retries import Layer, Stack
from crashsweep.variants import PRESETS
from tests.replay_oracle import Environment, Move, dups, missing
from tests.retry_oracle import RetryWorld, TimeoutWorld, replay, scenarios, sweep
from tests.test_replay_oracle import shares_nothing_mutable

ROOT = Path(__file__).resolve().parents[1]
TRIAGE_FAILS = load_job(ROOT / "examples" / "triage-fails.toml")
ONE_WRITE = load_job(ROOT / "examples" / "one-write.toml")
ONE_FAILING_WRITE = Job("one-failing-write", ((Call("create_a", "create_issue", True, fails_after_accept=True),),))
CALL2, RUN2 = Layer("call", "error", 2), Layer("run", "error", 2)


def keys(*stack: Layer) -> Policy:
    """idempotency-keys under the given retry layers, innermost first."""
    layers: Stack = stack
    return replace(PRESETS["idempotency-keys"].policy, retries=layers)


def world_of(policy: Policy, job: Job, tracker: str, moves: tuple[Move, ...]) -> RetryWorld:
    """The final world of one replayed scenario (which must exist)."""
    done = replay(policy, job, tracker, moves)
    assert done is not None
    assert isinstance(done.world, RetryWorld)
    return done.world


def test_a_run_retry_on_triage_fails_gives_the_hand_derived_figures() -> None:
    """tests/spec/test_retrying.py item 1 (idempotency-keys, run x2, keyed, depth 1), figure for figure.

    41 points (7 of run-1, 34 of run-2); 41 scenarios, all crashes; a duplicate in all but
    the crashes at 6, 7 and 8; calls+ 5; the run retry in all but the crashes at 6 and 7;
    worst 1 duplicate and 5 model calls, the run's own 4.
    """
    result = sweep(keys(RUN2), TRIAGE_FAILS, "keyed", 1)
    tally = result.tally(1)
    assert (result.crash_points, tally.scenarios, dict(tally.moves)) == (41, 41, {"crash": 41})
    assert (tally.with_dups, tally.dups, tally.missing, tally.calls_plus) == (38, 38, 0, 5)
    assert dict(tally.retried) == {"run": 39}
    assert (result.worst_dups, result.worst_calls, result.run_calls) == (1, 5, 4)


def test_a_call_retry_on_triage_fails_gives_the_hand_derived_figures() -> None:
    """tests/spec/test_retrying.py, call x2: 36 points, 36 crashes + 2 retry moves, no duplicate.

    The layer's one retry of create_a goes to its own failure in every crash scenario but the
    crashes at `tracker accepted create_a` and `tool failed create_a` (6, 7), whose restart
    resends create_a under the same key and meets no failure: 34 retries. The two retry moves
    are at create_b's and comment_a's `tracker accepted` (fresh instances), each scenario
    with create_a's retry beside its own: 4. retry.call = 34 + 4 = 38.
    """
    result = sweep(keys(CALL2), TRIAGE_FAILS, "keyed", 1)
    tally = result.tally(1)
    assert (result.crash_points, tally.scenarios, dict(tally.moves)) == (36, 38, {"crash": 36, "retry": 2})
    assert (tally.with_dups, tally.dups, tally.missing) == (0, 0, 0)
    assert dict(tally.retried) == {"call": 38}


@pytest.mark.parametrize(("layer", "records", "calls"), [(RUN2, 2, 3), (CALL2, 1, 2)])
def test_the_worked_example_of_retries_md(layer: Layer, records: int, calls: int) -> None:
    """RETRIES.md 1.6, the uninterrupted run of one-failing-write under keys, keyed tracker.

    run x2: run-1 sends Key(run-1, create_a) (#1), fails; run-2 sends Key(run-2, create_a)
    (#2): 2 records, 3 model calls (run-1's reply, run-2's reply and final answer).
    call x2: create_a is sent again under Key(run-1, create_a), answered from #1: 1 record,
    2 model calls (the reply, the final answer).
    """
    world = world_of(keys(layer), ONE_FAILING_WRITE, "keyed", ())
    assert (len(world.records), world.model_calls, world.requests) == (records, calls, 2)
    assert dict(world.retried) == {layer.scope: 1}


def test_a_turn_retry_asks_the_model_again_and_resends_the_turn() -> None:
    """idempotency-keys, turn x2, triage-fails, uninterrupted: its 34 points plus 5.

    create_a fails after `tracker accepted` (+1 point, `tool failed`); turn 1 is dropped and the
    model asked again: `reply 1 arrived` and the reply save (3 more); create_a's first
    `tracker accepted` is the 5th. Model calls 3 + 1. Keyed: Key(run-1, create_a) again,
    answered from the first record; keyless: a second record.
    """
    for tracker, duplicates in (("keyed", 0), ("keyless", 1)):
        result = sweep(keys(Layer("turn", "error", 2)), TRIAGE_FAILS, tracker, 1)
        assert (result.crash_points, result.run_calls, result.run_dups) == (39, 4, duplicates)
        assert dict(result.run_retried) == {"turn": 1}


@pytest.mark.parametrize(("attempts", "retry_moves"), [(2, 19), (None, 21)])
def test_attempts_bound_the_retries_of_an_instance(attempts: int | None, retry_moves: int) -> None:
    """idempotency-keys on one-write, a call layer, depth 2: the retry moves of the 2-move scenarios.

    A retry at 6 then a crash at one of the 11 points that follow (`tool failed`, the resend's
    `tracker accepted` and the 9 after it): 11 moves. A crash at 1..8 (create_a's result not
    yet durable), then a retry at the restart's `tracker accepted create_a`: 8 more (the
    instance run-1/create_a has made no retry). x2: 19. Unbounded: the resend's `tracker
    accepted` offers a second retry too: one scenario with two retries, 21.
    """
    result = sweep(keys(Layer("call", "error", attempts)), ONE_WRITE, "keyed", 2)
    assert result.tally(2).moves["retry"] == retry_moves
    assert result.tally(1).moves == {"crash": 15, "retry": 1}


def test_the_innermost_layer_with_an_attempt_left_catches() -> None:
    """call x3 > run x2, keyless: three retries at create_a's successive `tracker accepted` points.

    The call layer catches the first two (its instance run-1/create_a), the run layer the third:
    run-2 sends create_a once more. Four records of create_a: 3 duplicates.
    """
    policy = keys(Layer("call", "error", 3), RUN2)
    world = world_of(policy, ONE_WRITE, "keyless", ((6, "retry"), (2, "retry"), (2, "retry")))
    assert dict(world.retried) == {"call": 2, "run": 1}
    assert (len(world.records), dups(world, ONE_WRITE)) == (4, 3)


def test_a_crash_at_tool_failed_spends_no_attempt() -> None:
    """run x2 on triage-fails: a crash at `tool failed create_a` (7) comes before the layer acts.

    The restart resends Key(run-1, create_a): answered, no failure. No retry, nothing spent.
    """
    world = world_of(keys(RUN2), TRIAGE_FAILS, "keyed", ((7, "crash"),))
    assert (dict(world.retried), dict(world.spent), dups(world, TRIAGE_FAILS)) == ({}, {}, 0)


def test_attempt_counts_survive_a_crash() -> None:
    """call x2 on one-write, keyless: a retry at 6, a crash at the resend's `tool returned` (3 after).

    The restart resends create_a (its result is not saved) and the layer, spent on
    run-1/create_a before the crash, offers no retry at its `tracker accepted`: 3 records.
    """
    done = replay(keys(CALL2), ONE_WRITE, "keyless", ((6, "retry"), (3, "crash")))
    assert done is not None
    assert all("retry" not in offered for _, offered in done.later)
    assert len(done.world.records) == 3


def test_a_lost_reply_is_caught_like_any_error() -> None:
    """FAULTS.md 2 beside a call layer: a lost reply at 6 is retried by the layer, not the loop.

    save-after-reply (no keys), keyless: the resend makes record #2 either way; the retry is
    counted as `retry.call`, and the move as `lost-reply`.
    """
    policy = replace(PRESETS["save-after-reply"].policy, retries=(CALL2,))
    done = replay(policy, ONE_WRITE, "keyless", ((6, "lost-reply"),), Environment(("lost-reply",)))
    assert done is not None
    assert isinstance(done.world, RetryWorld)
    assert (dict(done.world.retried), len(done.world.records)) == ({"call": 1}, 2)


@pytest.mark.parametrize(
    ("lock", "scenarios", "retry_moves", "duplicates"), [("file", 99, 84, 6), ("lease+fencing", 83, 70, 0)]
)
def test_a_turn_timeout_gives_the_hand_derived_figures(
    lock: Lock, scenarios: int, retry_moves: int, duplicates: int
) -> None:
    """tests/spec/test_retrying.py item 2: idempotency-keys without startup save, turn x2 on timeout, one-write.

    Lock file: 15 crashes + 16 + 4 x 13 + 2 x 8 wake choices = 99, 6 duplicates (the woken
    process resends under run-1's key while run-2's sent its own). Lease: 13 + 14 + 4 x 11 +
    2 x 6 = 83, none (the restart's lease fences the woken process's first rename).
    """
    plain = replace(PRESETS["idempotency-keys"].policy, startup_save=False, lock=lock)
    result = sweep(replace(plain, retries=(Layer("turn", "timeout", 2),)), ONE_WRITE, "keyed", 1)
    tally = result.tally(1)
    assert (tally.scenarios, tally.moves["retry"], tally.with_dups, tally.dups) == (
        scenarios,
        retry_moves,
        duplicates,
        duplicates,
    )
    assert dict(tally.retried) == {"turn": retry_moves}


# Budgets (RETRIES.md 1.8). ONE_ATTEMPT: a call layer whose policy is unset, its schedule-to-close one attempt.
ONE_ATTEMPT = Layer("call", "error", None, unset=True, one_attempt=True)


@pytest.mark.parametrize(("one_attempt", "lost", "calls"), [(True, 7, 106), (False, 0, 117)])
def test_a_one_attempt_budget_on_triage_gives_the_figures_of_retries_md(
    one_attempt: bool, lost: int, calls: int
) -> None:
    """RETRIES.md 1.8's consequence: idempotency-keys on triage, keyed, one move.

    34 crash points (start 1-2, reply 1 3-5, create_a 6-10, create_b 11-15, turn 1 16-17,
    reply 2 18-20, search 21-24, comment_a 25-29, turn 2 30-31, final 32-34) and 3 retry moves
    (each write's `tracker accepted`, caught by the unset layer): 37 scenarios, 3 `retry.call`.
    The crashes at 6, 7 (2 writes missing each), 11, 12, 21 (1 each) and 25, 26 (0) fail the run
    at the restart: 7 missing. Model calls: a retry's scenario 3 (9 in all); the failed runs 1
    (at 6, 7, 11, 12) or 2 (21, 25, 26): 10; the other crashes 3, plus 1 where the reply or final
    answer was not yet saved (3, 4, 18, 19, 32, 33): 27 x 3 + 6 = 87. 106 in all. Without the
    budget the restart sends the call again under its key: nothing missing, and the 7 runs
    finish with 3 calls each (their reply is saved): 106 - 10 + 21 = 117.
    """
    result = sweep(keys(replace(ONE_ATTEMPT, one_attempt=one_attempt)), TRIAGE, "keyed", 1)
    tally = result.tally(1)
    assert (result.crash_points, tally.scenarios, dict(tally.moves)) == (34, 37, {"crash": 34, "retry": 3})
    assert (tally.missing, tally.with_dups, tally.model_calls, dict(tally.retried)) == (lost, 0, calls, {"call": 3})


def test_a_failed_start_takes_no_lock_no_save_and_no_request() -> None:
    """agent-loop (a lock file) on one-write: a crash at `tracker accepted create_a`, then a start that fails the run.

    Points: lock 1-2, start 3-4, reply 1 5, marker 6-8, `tracker accepted create_a` 9. The
    second start passes no crash point: it takes no lock (the first start's stays), saves
    nothing and sends nothing; no third start follows. create_a was applied: nothing missing.
    """
    policy = replace(PRESETS["agent-loop"].policy, retries=(ONE_ATTEMPT,))
    base = world_of(policy, ONE_WRITE, "keyed", ())
    done = replay(policy, ONE_WRITE, "keyed", ((9, "crash"),))
    assert done is not None
    world = done.world
    assert isinstance(world, RetryWorld)
    assert (world.failed, world.timed_out, done.last_points) == (True, {"run-1"}, [])
    assert (world.starts, world.lock, world.requests, len(world.records)) == (2, 1, 1, 1)
    assert world.saves < base.saves
    assert missing(world, ONE_WRITE) == 0


def test_a_crash_at_tool_failed_spends_no_budget() -> None:
    """triage-fails: a crash at `tool failed create_a` (7) comes after the attempt answered: the restart goes on.

    The restart loads the saved reply 1 and resends create_a under its key (the job's failure is
    spent): nothing missing, 1 + 2 model calls.
    """
    world = world_of(keys(ONE_ATTEMPT), TRIAGE_FAILS, "keyed", ((7, "crash"),))
    assert (world.failed, world.timed_out, missing(world, TRIAGE_FAILS), world.model_calls) == (False, set(), 0, 3)


def test_a_read_s_tool_returned_is_a_budget_site() -> None:
    """triage, keyed: a crash at the search's `tool returned` (21) fails the run; comment_a is never sent."""
    world = world_of(keys(ONE_ATTEMPT), TRIAGE, "keyed", ((21, "crash"),))
    assert (world.failed, missing(world, TRIAGE), world.model_calls) == (True, 1, 2)


def test_the_budget_is_spent_whatever_attempts_are_left() -> None:
    """call x2, one-attempt, one-write: a retry at 6, a crash at the resend's `tracker accepted` (2 after).

    The layer has no retry left, and its budget is spent all the same: the run fails; the
    write was applied (twice under keyless).
    """
    world = world_of(keys(replace(CALL2, one_attempt=True)), ONE_WRITE, "keyless", ((6, "retry"), (2, "crash")))
    assert (world.failed, dict(world.retried), len(world.records)) == (True, {"call": 1}, 2)


def test_a_run_layer_does_not_catch_a_failed_run() -> None:
    """call x3 one-attempt > run x2, one-write: a crash at 6 fails the run at the restart; no run-2 begins.

    The oracle's reading of rule 3: the run layer's trigger is a tool's error at `tracker
    accepted`, and a failed workflow "is not resumed".
    """
    world = world_of(keys(Layer("call", "error", 3, one_attempt=True), RUN2), ONE_WRITE, "keyed", ((6, "crash"),))
    assert (world.failed, dict(world.retried), world.fresh_runs) == (True, {}, 1)


def test_a_start_that_loads_no_checkpoint_of_the_run_goes_on() -> None:
    """langgraph-exit saves nothing before its final answer: a crash at 2 leaves no checkpoint of run-1.

    Point 2 is `tracker accepted create_a` (1: `reply 1 arrived`). The restart begins run-2 (it
    does not load run-1) and sends create_a again: 2 records, not failed.
    """
    policy = replace(PRESETS["langgraph-exit"].policy, retries=(ONE_ATTEMPT,))
    world = world_of(policy, ONE_WRITE, "keyless", ((2, "crash"),))
    assert (world.failed, world.timed_out, world.fresh_runs, len(world.records)) == (False, {"run-1"}, 2, 2)


def test_an_unset_retry_policy_bounds_nothing_but_the_depth() -> None:
    """As `attempts = None` above: the resend's `tracker accepted` offers a second retry, 21 retry moves at depth 2."""
    result = sweep(keys(Layer("call", "error", None, unset=True)), ONE_WRITE, "keyed", 2)
    assert result.tally(2).moves["retry"] == 21


# Prefix reuse (replay_oracle.scenarios, pause_oracle.scenarios): the same figures as replays from scratch.
APPROVAL = load_job(ROOT / "examples" / "triage-approval.toml")
PARALLEL = load_job(ROOT / "examples" / "parallel-batch.toml")
ONE_PROCESS_FAULTS = Environment(("lost-reply", "wrong-answer", "key-expiry", "power-loss"), fresh_ids=True)
REUSE_CASES = [
    ("idempotency-keys", (replace(ONE_ATTEMPT, attempts=2),), TRIAGE_FAILS, "keyed", Environment()),
    ("idempotency-keys", (ONE_ATTEMPT, RUN2), TRIAGE, "keyless", ONE_PROCESS_FAULTS),
    ("keys-and-markers", (Layer("turn", "error", None), Layer("run", "error", 3)), APPROVAL, "keyless-lookup",
     ONE_PROCESS_FAULTS),
    ("agent-loop", (CALL2, Layer("turn", "unknown-outcome", 3)), PARALLEL, "keyless-lookup",
     Environment(("lost-reply",))),
    ("error-to-model", (Layer("call", "unknown-outcome", None),), TRIAGE_FAILS, "keyed", ONE_PROCESS_FAULTS),
    ("idempotency-keys", (Layer("call", "timeout", 2),), ONE_WRITE, "keyless", Environment()),
    ("agent-loop", (Layer("call", "error", 3), Layer("turn", "timeout", 2)), ONE_WRITE, "keyed", Environment()),
    ("idempotency-keys", (ONE_ATTEMPT, Layer("turn", "timeout", 2)), ONE_WRITE, "keyless", Environment()),
]  # fmt: skip


@pytest.mark.parametrize(("design", "stack", "job", "tracker", "env"), REUSE_CASES)
def test_a_sweep_from_cuts_and_forks_gives_the_figures_of_replays_from_scratch(
    design: str, stack: Stack, job: Job, tracker: str, env: Environment
) -> None:
    """Depth 2, one process (a one-attempt budget's death included) or two (timeouts): every figure agrees.

    `reuse` replays an extension from where its scenario's replay left it (a fork at the crash,
    or a cut at a process start), `reuse=False` from an empty world: the tallies, the retries
    per scope, the worst figures, the point names and the steps must be the same.
    """
    policy = replace(PRESETS[design].policy, retries=stack)
    resumed = sweep(policy, job, tracker, 2, env)
    scratch = sweep(policy, job, tracker, 2, env, reuse=False)
    assert resumed.tally(2).scenarios > 0
    assert resumed == scratch
    assert (resumed.worst_dups, resumed.worst_calls) == (scratch.worst_dups, scratch.worst_calls)


def test_a_retry_world_copy_shares_nothing_mutable() -> None:
    """RetryWorld.copy and TimeoutWorld's, on the final worlds of one-move scenarios: equal, nothing shared."""
    budget = keys(replace(ONE_ATTEMPT, attempts=2), RUN2)
    worlds = [done.world for _, _, done in scenarios(budget, TRIAGE_FAILS, "keyed", 1)]
    timeouts = keys(Layer("turn", "timeout", 2), Layer("run", "timeout", 2))
    worlds += [done.world for _, _, done in scenarios(timeouts, ONE_WRITE, "keyed", 1)]
    assert any(isinstance(world, TimeoutWorld) and world.spent for world in worlds)
    assert any(isinstance(world, RetryWorld) and world.timed_out for world in worlds)
    assert any(isinstance(world, RetryWorld) and world.retried for world in worlds)
    assert all(shares_nothing_mutable(world, world.copy()) for world in worlds)
