"""Tests of crashsweep.spec.cost: a design's saves, requests, model calls, questions and lookups.

Three independent sources: the uninterrupted triage run's crash points as SEMANTICS.md
sections 7 and 9 list them (counted by hand below), a hand count of every one-crash scenario
of a one-write job, and the replay oracle (tests/replay_oracle.py), which counts saves and
requests in its own loop: the built-in designs at depths 1 and 2 on triage and on generated
jobs, all 512 composed designs at depth 1 (triage, and a job with a failing and a gated
write), and the triage frontier's designs at depth 2.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from crashsweep.cli.runs import costed
from crashsweep.explorer import explore
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.cost import REQUESTS, SAVES, Cost, cost_of, point_counters
from crashsweep.spec.job import TRIAGE, Call, Job
from crashsweep.spec.policy import Policy, all_policies
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import Process, Snapshot, World
from crashsweep.variants import model
from crashsweep.variants.composed import compose
from tests.replay_oracle import DESIGNS, replay, sweep
from tests.strategies import jobs

# Section 7: save-once-per-turn saves start, turn 1, turn 2, final (4 `renamed` points of its 18);
# save-after-reply and idempotency-keys add reply 1, reply 2 and a result save after each of the
# 4 results (10); the marker designs add a marker save before each of the 3 writes (13).
# Section 9: agent-loop saves the lock, start, 3 markers, 3 write results, turn 1, turn 2, final
# (11). Every design sends the 4 calls once (4 requests) and calls the model 3 times (reply 1,
# reply 2, the final answer); nobody is asked and nothing is looked up without a crash.
RUN_SAVES = {
    "save-once-per-turn": 4,
    "save-after-reply": 10,
    "idempotency-keys": 10,
    "attempt-markers": 13,
    "keys-and-markers": 13,
    "agent-loop": 11,
}


def _row(design: str, job: Job, tracker: str, depth: int) -> Summary:
    loop = costed(model(design, job, TRACKERS[tracker]), job)
    return summarize(explore(loop, depth), variant=design, job=job.name, tracker=tracker)


def _at(point: str) -> World:
    return World(process=Process(Snapshot("run-1"), (), point))


def test_point_counters_read_saves_and_requests_off_the_point() -> None:
    """A rename completes a save; `tracker accepted` is a write's request, `tool returned` a read's."""
    assert point_counters(_at("turn 1: renamed"), TRIAGE) == {SAVES: 1}
    assert point_counters(_at("lock: renamed"), TRIAGE) == {SAVES: 1}
    assert point_counters(_at("turn 1: tmp written"), TRIAGE) == {}
    assert point_counters(_at("tracker accepted create_a"), TRIAGE) == {REQUESTS: 1}
    assert point_counters(_at("tool returned create_a"), TRIAGE) == {}
    assert point_counters(_at("tool returned search"), TRIAGE) == {REQUESTS: 1}
    assert point_counters(_at("marker saved create_a"), TRIAGE) == {}
    assert point_counters(World(), TRIAGE) == {}


def test_a_call_id_that_looks_like_a_save_is_still_a_request() -> None:
    """A call named `x: renamed` is sent, not saved: the request prefixes are read first."""
    job = Job("odd", ((Call("x: renamed", "search_issues", False),),))
    assert point_counters(_at("tool returned x: renamed"), job) == {REQUESTS: 1}


def test_cost_of_adds_approvals_to_questions() -> None:
    """Questions to a person are the ladder's asks and the approval requests together."""
    counters = {SAVES: 2, REQUESTS: 3, "model_calls": 4, "asks": 5, "approvals": 6, "lookups": 7, "reruns": 8}
    assert cost_of(counters) == Cost(saves=2, requests=3, model_calls=4, questions=11, lookups=7)
    assert Cost(5, 5, 5, 5, 5).minus(Cost(1, 2, 0, 1, 0), 2) == Cost(3, 1, 5, 3, 5)


@pytest.mark.parametrize("design", list(RUN_SAVES))
def test_uninterrupted_triage_run_cost_by_hand(design: str) -> None:
    """The uninterrupted run's cost is the hand count of SEMANTICS.md's crash-point lists."""
    row = _row(design, TRIAGE, "keyed", 1)
    assert row.run_cost == Cost(saves=RUN_SAVES[design], requests=4, model_calls=3, questions=0, lookups=0)


ONE_WRITE = Job("one write", ((Call("w", "create_issue", True),),))


def test_one_crash_scenarios_of_a_one_write_job_by_hand() -> None:
    """save-once-per-turn on one write, depth 1: saves+ 8, requests+ 3, calls+ 6 (counted below).

    Its 10 crash points: 1 start: tmp written, 2 start: renamed, 3 reply 1 arrived, 4 tracker
    accepted w, 5 tool returned w, 6 turn 1: tmp written, 7 turn 1: renamed, 8 final reply
    arrived, 9 final: tmp written, 10 final: renamed. The run saves 3 times (start, turn 1,
    final), sends 1 request, calls the model twice. A crash at point i, then a restart to the end:
    - saves: at 1 nothing is renamed and the restart begins afresh (3: +0); at 10 all 3 are done
      and the restart exits at once (+0); at 2..9 the restart saves `start` once more (+1 each): 8;
    - requests: a crash at 4, 5 or 6 sent w, and the restart (no turn saved) sends it again
      (+1 each): 3;
    - model calls: a crash at 3..6 repeats reply 1 (+1 each), at 8 or 9 the final answer (+1
      each); at 7 the restart asks only for the final answer, which the crashed one had not: 6.
    """
    row = _row("save-once-per-turn", ONE_WRITE, "keyed", 1)
    assert row.scenarios == {1: 10}
    assert row.run_cost == Cost(saves=3, requests=1, model_calls=2)
    assert row.extra_cost == Cost(saves=8, requests=3, model_calls=6)
    assert row.calls_plus == 6


def _oracle_cost(design: str, job: Job, tracker: str, depth: int) -> tuple[dict[int, tuple[int, int]], Cost]:
    result = sweep(design, job, tracker, depth)
    per_k = {k: (tally.saves, tally.requests) for k, tally in result.by_crashes.items()}
    summed = Cost(
        saves=result.total("saves"),
        requests=result.total("requests"),
        model_calls=result.total("model_calls"),
        questions=result.total("asks"),
        lookups=result.total("lookups"),
    )
    return per_k, summed


def _explorer_cost(design: str, job: Job, tracker: str, depth: int) -> tuple[dict[int, tuple[int, int]], Cost]:
    loop = costed(model(design, job, TRACKERS[tracker]), job)
    exploration = explore(loop, depth)
    counters = exploration.counts.counters
    per_k = {k: (counters[k].get(SAVES, 0), counters[k].get(REQUESTS, 0)) for k in range(1, depth + 1)}
    row = summarize(exploration, variant=design, job=job.name, tracker=tracker)
    assert row.scenario_cost is not None
    return per_k, row.scenario_cost


CASES = [(design, tracker) for design in DESIGNS for tracker in ("keyed", "keyless", "keyless-lookup")]


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(("design", "tracker"), CASES)
def test_summed_cost_agrees_with_the_oracle_on_triage(design: str, tracker: str, depth: int) -> None:
    """Saves and requests per crash count, and the summed cost, equal the replay oracle's."""
    assert _explorer_cost(design, TRIAGE, tracker, depth) == _oracle_cost(design, TRIAGE, tracker, depth)


@pytest.mark.parametrize("design", list(DESIGNS))
@settings(max_examples=15, deadline=None)
@given(job=jobs(max_turns=3))
def test_summed_cost_agrees_with_the_oracle_on_generated_jobs(design: str, job: Job) -> None:
    """On generated jobs the summed cost at depth 1 equals the oracle's (keyed and keyless)."""
    for tracker in ("keyed", "keyless"):
        assert _explorer_cost(design, job, tracker, 1) == _oracle_cost(design, job, tracker, 1)


@pytest.mark.parametrize("design", list(DESIGNS))
def test_uninterrupted_cost_of_the_oracle_equals_the_explorer(design: str) -> None:
    """The oracle's uninterrupted run saves, sends and calls what the explorer's run cost says."""
    done = replay(design, TRIAGE, "keyed", ())
    assert done is not None
    oracle = Cost(done.world.saves, done.world.requests, done.world.model_calls, done.world.asks, done.world.lookups)
    assert _row(design, TRIAGE, "keyed", 1).run_cost == oracle


def _policy_cost(policy: Policy, job: Job, tracker: str, depth: int) -> tuple[Cost | None, Cost | None]:
    loop = costed(model(compose("p", "", policy), job, TRACKERS[tracker]), job)
    row = summarize(explore(loop, depth), variant="p", job=job.name, tracker=tracker)
    return row.run_cost, row.scenario_cost


def _oracle_policy_cost(policy: Policy, job: Job, tracker: str, depth: int) -> tuple[Cost, Cost]:
    base = replay(policy, job, tracker, ())
    assert base is not None
    w = base.world
    run = Cost(w.saves, w.requests, w.model_calls, w.asks + w.approvals, w.lookups)
    result = sweep(policy, job, tracker, depth)
    summed = Cost(
        saves=result.total("saves"),
        requests=result.total("requests"),
        model_calls=result.total("model_calls"),
        questions=result.total("asks") + result.total("approvals"),
        lookups=result.total("lookups"),
    )
    return run, summed


# Every option at once: a write that fails after the tracker accepted, a read, a gated write.
SMALL = Job(
    "small",
    (
        (Call("w1", "create_issue", True, fails_after_accept=True), Call("r1", "search_issues", False)),
        (Call("w2", "comment", True, approval=True),),
    ),
)


@pytest.mark.parametrize(("job", "tracker"), [(TRIAGE, "keyed"), (SMALL, "keyed"), (SMALL, "keyless-lookup")])
def test_every_policy_costs_what_the_oracle_counts(job: Job, tracker: str) -> None:
    """All 512 composed designs: the run cost and the cost summed at depth 1 equal the oracle's."""
    for policy in all_policies():
        assert _policy_cost(policy, job, tracker, 1) == _oracle_policy_cost(policy, job, tracker, 1), policy.label


def test_triage_frontier_costs_at_depth_two_equal_the_oracle() -> None:
    """The designs of the triage frontier (one of each equal pair): depth-2 costs equal the oracle's."""
    policies = all_policies()
    for number in (251, 379, 491, 489, 347, 459, 457, 361, 331):
        policy = policies[number - 1]
        assert _policy_cost(policy, TRIAGE, "keyed", 2) == _oracle_policy_cost(policy, TRIAGE, "keyed", 2), number
