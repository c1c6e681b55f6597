"""Rules of approvals the spec once left open, each pinned by a figure or a state that tells the readings apart.

spec/CONVERSATIONS.md section 2 states each rule and its reason: (a) a node's reset belongs to
the approval's arrival, not to its save; (b) the approval service is keyed by run; (c)
approved-exactly's (b) counts per approval, checked in every state; (d) a `none` binding
matches a gated call of any turn of the run. Each expected figure is derived by hand in the
test's docstring and, where tests/replay_oracle.py (or tests/retry_oracle.py) implements the
rule on its own, taken from it too; the explorer must give the same.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace

import pytest

from crashsweep.explorer import explore
from crashsweep.explorer.path import shortest_path
from crashsweep.spec import invariants, metrics
from crashsweep.spec.design import Env
from crashsweep.spec.job import Job, job_from_mapping
from crashsweep.spec.policy import ApprovalStorage, Policy
from crashsweep.spec.retries import parse_stack
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants import PRESETS
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel
from tests import retry_oracle
from tests.replay_oracle import Environment, dups, replay, sweep

SAVE_AFTER_REPLY = PRESETS["save-after-reply"].policy
IDEMPOTENCY_KEYS = replace(SAVE_AFTER_REPLY, keys="run-call")
STORAGES: tuple[ApprovalStorage, ...] = ("durable", "memory", "service")


def _job(toml: str) -> Job:
    return job_from_mapping(tomllib.loads(toml))


NODE = _job("""
name = "node"
turns = [["create_a", "comment_a"]]
[calls]
create_a = { tool = "create_issue", writes = true, node = "n" }
comment_a = { tool = "comment", writes = true, approval = true, node = "n" }
""")
"""An issue filed, then a gated comment, in one graph node."""
ONE_GATED = _job("""
name = "one-gated"
turns = [["comment_a"]]
[calls]
comment_a = { tool = "comment", writes = true, approval = true }
""")
"""One gated write, then the final answer: 17 crash points under save-after-reply and `service`."""
ONE_FAILING_GATED = _job("""
name = "one-failing-gated"
turns = [["comment_a"]]
[calls]
comment_a = { tool = "comment", writes = true, approval = true, fails_after_accept = true }
""")
TWO_GATED_TURNS = _job("""
name = "two-gated-turns"
turns = [["comment_a"], ["comment_b"]]
[calls]
comment_a = { tool = "comment", writes = true, approval = true }
comment_b = { tool = "comment", writes = true, approval = true }
""")


def _model(policy: Policy, job: Job, tracker: str, faults: tuple[str, ...] = ()) -> LoopModel:
    return LoopModel(compose("p", "", policy), Env(job, TRACKERS[tracker], faults))


def _walk_to(model: LoopModel, world: World, point: str) -> World:
    """Take the run's own next step until the running process is at `point`."""
    while model.crash_point(world) != point:
        world, _ = model.step(world, model.actions(world)[0])
    return world


def _crash_and_restart(model: LoopModel, world: World) -> World:
    """Crash the running process where it is, then restart."""
    for kind in ("crash", "restart"):
        (action,) = [a for a in model.actions(world) if a.kind == kind]
        world, _ = model.step(world, action)
    return world


# (a) A node's reset is applied when the approval arrives, so its save already holds it.


def test_a_node_s_reset_is_in_memory_at_approved_and_in_the_approval_save() -> None:
    """save-after-reply, `node`, job `node`: the states at `approved comment_a` and after the approval save.

    create_a is sent and its result saved; comment_a's approval arrives. At `approved
    comment_a` memory holds the approval and no result for create_a; the approval save's
    rename puts that memory on disk. Reset at the save (the save keeping the node's results),
    memory there would still hold create_a's result, and so would the checkpoint.
    """
    model = _model(replace(SAVE_AFTER_REPLY, resume_granularity="node"), NODE, "keyless")
    world = _walk_to(model, model.initial(), "approved comment_a")
    assert world.process is not None
    assert world.process.memory.last is not None
    assert world.process.memory.last.result("create_a") is None
    assert world.process.memory.last.approved == ("comment_a@1#1",)
    world = _walk_to(model, world, "approval comment_a: renamed")
    saved = world.checkpoint.committed
    assert saved is not None
    assert saved.last is not None
    assert (saved.last.result("create_a"), saved.last.approved) == (None, ("comment_a@1#1",))


def test_a_restart_after_the_approval_save_files_the_node_s_issue_again() -> None:
    """Job `node`, keyless tracker, depth 1: 38 duplicates in 29 scenarios, all 29 with one (oracle, explorer).

    The uninterrupted run passes 29 points: start (1-2), reply 1 (3-5), create_a (6-10:
    accepted, returned, result save, saved), approval requested (11), approved (12), the
    approval save (13-14), create_a again (15-19), comment_a (20-24), turn 1 (25-26), final
    (27-29); it files create_a twice (1 duplicate). A crash at 1-5 or 9-14 ends the same (1
    each: 11); at 6-8 create_a is sent again before the approval (2 each: 6); at 15-17 the
    approval save holds no result for create_a, so the restart sends it a third time (2 each:
    6); at 18-19 1 each (2); at 20-22 comment_a is sent again (2 each: 6); at 23-29 1 each (7):
    38. Reset at the save instead, the checkpoint from 14 on holds create_a's result: 14 gives 0
    and 15-17 give 1 each, 34 duplicates in 28 scenarios.
    """
    policy = replace(SAVE_AFTER_REPLY, resume_granularity="node")
    crash_at_save = replay(policy, NODE, "keyless", (14,))
    assert crash_at_save is not None
    assert dups(crash_at_save.world, NODE) == 1
    tally = sweep(policy, NODE, "keyless", 1).by_crashes[1]
    assert (tally.scenarios, tally.dups, tally.with_dups) == (29, 38, 29)
    measures = explore(_model(policy, NODE, "keyless"), 1).counts.measures[1]
    assert (measures["dups"], measures["with_dups"]) == (38, 29)


# (b) The approval service is keyed by run: a new run asks the person again.


@pytest.mark.parametrize("storage", STORAGES)
def test_a_run_retry_asks_again_under_every_storage(storage: ApprovalStorage) -> None:
    """idempotency-keys, a run layer of 2 attempts, the gated write fails after the tracker applied it.

    Run-1: the person approves comment_a (#1), record 1 is redeemed against #1, the tool
    fails, and the layer begins run-2, which finds no approval of its own run (empty memory
    under `durable` and `memory`, none of run-2 at the service): the person approves again
    (#2), and record 2 (a new key) is redeemed against #2. 2 questions, approved-exactly holds.
    A service not keyed by run would hand run-2 approval #1: 1 question, #1 redeemed twice.
    """
    policy = replace(
        IDEMPOTENCY_KEYS,
        approval_storage=storage,
        retries=parse_stack([{"scope": "run", "on": "error", "attempts": 2}]),
    )
    done = retry_oracle.replay(policy, ONE_FAILING_GATED, "keyed", ())
    assert done is not None
    assert (done.world.approvals, done.world.redeemed) == (2, [1, 2])
    exploration = explore(_model(policy, ONE_FAILING_GATED, "keyed"), 0)
    assert exploration.counts.counters[0][metrics.APPROVALS] == 2
    assert exploration.verdicts[invariants.APPROVED_EXACTLY].holds


def test_a_fresh_run_after_an_unreadable_checkpoint_asks_again_at_the_service() -> None:
    """idempotency-keys, `service`, power loss, fresh-run, keyed tracker, depth 1: 44 questions, approved-exactly holds.

    17 points (start 1-2, reply 1 3-5, approval requested 6, approved 7, comment_a 8-9, its
    result save 10-12, turn 1 13-14, final 15-17), each a crash or a cut: 34 scenarios, one
    question each, plus: a crash at 6 (+1, asked again in run-1); a cut at 6 or 7, whose last
    rename was never synced (+2, run-2 asks); the 7 cuts after the record (8, 9, 11, 12, 14,
    15, 17: each follows an unsynced rename) begin run-2, which asks (+7) and sends under
    Key(run-2, comment_a): record 2, against approval #2. 34 + 10 = 44. (A crash at 7 or later
    finds #1 at the service in run-1; a cut before 6 begins run-2 before any question; a cut at
    a `tmp written` acts as a crash.) A service not keyed by run hands run-2 approval #1: 44 - 8
    = 36 questions, and #1 redeemed twice in 7 scenarios.
    """
    policy = replace(IDEMPOTENCY_KEYS, approval_storage="service", unreadable="fresh-run")
    power = Environment(("power-loss",))
    cut = replay(policy, ONE_GATED, "keyed", ((9, "power-loss"),), power)
    assert cut is not None
    assert (cut.world.fresh_runs, cut.world.redeemed) == (2, [1, 2])
    oracle = sweep(policy, ONE_GATED, "keyed", 1, power)
    assert (oracle.by_crashes[1].scenarios, oracle.by_crashes[1].approvals) == (34, 44)
    assert oracle.verdicts()[invariants.APPROVED_EXACTLY]
    exploration = explore(_model(policy, ONE_GATED, "keyed", ("power-loss",)), 1)
    assert (exploration.counts.scenarios[1], exploration.counts.counters[1][metrics.APPROVALS]) == (34, 44)
    assert exploration.verdicts[invariants.APPROVED_EXACTLY].holds


# (c) approved-exactly (b): per approval, in every state.


def test_two_approvals_of_one_call_do_not_license_two_records_under_the_second() -> None:
    """save-after-reply, `durable`, keyless, job one-gated: approval #1 lost, #2 redeemed twice (2 crashes).

    A crash at `approval comment_a: tmp written` (point 8) loses #1; the restart asks again
    (#2), saves it, and the tracker applies record 1 against #2; a crash at that `tracker
    accepted comment_a` (the restart's 7th point) leaves no result, and the next restart sends
    it again under #2. The person approved comment_a@1 twice and two records were applied, so
    a count per (call, version) holds; per approval it breaks: #2 was redeemed twice.
    """
    done = replay(SAVE_AFTER_REPLY, ONE_GATED, "keyless", (8, 7))
    assert done is not None
    assert ([n for n, _, _, _ in done.world.given], done.world.redeemed) == ([1, 2], [2, 2])
    assert not done.world.approved_exactly()
    model = _model(SAVE_AFTER_REPLY, ONE_GATED, "keyless")
    world = _crash_and_restart(model, _walk_to(model, model.initial(), "approval comment_a: tmp written"))
    world = _crash_and_restart(model, _walk_to(model, world, "tracker accepted comment_a"))
    world = _walk_to(model, world, "tracker accepted comment_a")
    assert world.tracker.count("comment_a") == 2
    assert invariants.violation(invariants.APPROVED_EXACTLY, world, ONE_GATED) == "approval #2 was redeemed twice"


def test_approved_exactly_s_counterexample_ends_at_the_record_that_breaks_it() -> None:
    """save-after-reply, `durable`, keyless, job one-gated, depth 1: the counterexample is 15 states, not finished.

    The initial state, 10 points to the first `tracker accepted comment_a` (start 2, reply 1
    3, approval requested, approved, approval save 2, accepted), the crash, the restart at
    `start: tmp written`, `start: renamed`, and the resend's `tracker accepted comment_a`,
    where #1 is redeemed twice. Checked at the run's end, it would go on to `final: renamed`.
    """
    exploration = explore(_model(SAVE_AFTER_REPLY, ONE_GATED, "keyless"), 1)
    verdict = exploration.verdicts[invariants.APPROVED_EXACTLY]
    assert not verdict.holds
    path = shortest_path(exploration, verdict.node or 0)
    assert (len(path.steps), path.crashes) == (15, 1)
    assert exploration.model.crash_point(path.end) == "tracker accepted comment_a"
    assert not exploration.model.is_finished(path.end)


# (d) A bare yes matches a gated call of any turn of the run.


@pytest.mark.parametrize("storage", STORAGES)
def test_a_bare_yes_of_turn_1_passes_turn_2_s_gate(storage: ApprovalStorage) -> None:
    """idempotency-keys, binding `none`, keyed, job two-gated-turns, no crash: 1 question, approved-exactly broken.

    comment_a is approved (#1) and applied; in turn 2 the gate of comment_b finds #1 (kept in
    turn 1's memory, or at the service) and asks nothing: comment_b's record is redeemed
    against an approval of comment_a, which it redeems a second time. With the approvals of a
    turn matching its own calls only, the person would be asked twice and it would hold, as
    it does bound to the call.
    """
    policy = replace(IDEMPOTENCY_KEYS, approval_storage=storage, approval_binding="none")
    base = replay(policy, TWO_GATED_TURNS, "keyed", ())
    assert base is not None
    assert (base.world.approvals, base.world.redeemed) == (1, [1, 1])
    exploration = explore(_model(policy, TWO_GATED_TURNS, "keyed"), 0)
    assert exploration.counts.counters[0][metrics.APPROVALS] == 1
    verdict = exploration.verdicts[invariants.APPROVED_EXACTLY]
    assert not verdict.holds
    end = shortest_path(exploration, verdict.node or 0).end
    assert invariants.violation(invariants.APPROVED_EXACTLY, end, TWO_GATED_TURNS) == (
        "comment_b@1 was applied under approval #1, given for comment_a with arguments v1;"
        " approval #1 was redeemed twice"
    )
    bound = explore(_model(replace(policy, approval_binding="call"), TWO_GATED_TURNS, "keyed"), 0)
    assert bound.counts.counters[0][metrics.APPROVALS] == 2
    assert bound.verdicts[invariants.APPROVED_EXACTLY].holds
