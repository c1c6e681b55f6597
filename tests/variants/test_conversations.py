"""The saved conversation, approvals and a node's resume (spec/CONVERSATIONS.md), pinned by hand.

Each figure below is derived from the rules in the comment above it; none is pasted from a run.
save-after-reply passes 34 crash points on triage (SEMANTICS.md); numbered in order they are:
 1 start: tmp written       2 start: renamed           3 reply 1 arrived
 4 reply 1: tmp written     5 reply 1: renamed         6 tracker accepted create_a
 7 tool returned create_a   8-9 result create_a: tmp written, renamed
10 result saved create_a   11 tracker accepted create_b   12 tool returned create_b
13-14 result create_b: tmp written, renamed            15 result saved create_b
16-17 turn 1: tmp written, renamed                     18 reply 2 arrived
19-20 reply 2: tmp written, renamed                    21 tool returned search
22-23 result search: tmp written, renamed              24 result saved search
25 tracker accepted comment_a   26 tool returned comment_a
27-28 result comment_a: tmp written, renamed           29 result saved comment_a
30-31 turn 2: tmp written, renamed                     32 final reply arrived
33-34 final: tmp written, renamed
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.explorer.path import shortest_path
from crashsweep.explorer.search import Exploration, explore
from crashsweep.reports.summary import summarize
from crashsweep.spec import invariants
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import ApprovalBinding, Policy
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants import DESIGNS, model
from crashsweep.variants.composed import compose

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAVE_AFTER_REPLY = Policy(
    startup_save=True,
    reply_save="before-first-send",
    result_saves="each-call",
    markers="none",
    keys="none",
    lock="none",
)
ATTEMPT_MARKERS = replace(SAVE_AFTER_REPLY, markers="before-writes", ladder=("lookup", "person"))
NEW = (invariants.WELL_FORMED_TRANSCRIPT, invariants.APPROVED_EXACTLY, invariants.CAN_FINISH)


def _explore(policy: Policy, job: Job, tracker: str, depth: int, faults: tuple[str, ...] = ()) -> Exploration[World]:
    return explore(model(compose("d", "d", policy), job, TRACKERS[tracker], faults=faults), depth)


@pytest.mark.parametrize("variant", sorted(DESIGNS))
def test_the_built_in_designs_keep_the_new_properties_on_triage_at_depth_2(variant: str) -> None:
    """No built-in design sends an orphaned call, has a gate, or gets stuck: each holds, each witnessed."""
    exploration = explore(model(variant, TRIAGE, TRACKERS["keyed"]), 2)
    row = summarize(exploration, variant=variant, job="triage", tracker="keyed")
    verdicts = {v.name: v for v in row.invariants}
    for name in NEW:
        assert verdicts[name].holds, name
        assert verdicts[name].witnessed, name
    assert row.never_finish == 0


def test_as_is_sends_an_orphaned_call_and_the_run_never_finishes() -> None:
    """A restart whose checkpoint holds a call without a result sends it as it is, and is refused for good.

    The checkpoint holds such a call from `reply 1: renamed` (5) until `result create_b: renamed`
    (14) gives the last result of turn 1: crashes at 5-13 (9); and from `reply 2: renamed` (20)
    until `result comment_a: renamed` (28): crashes at 20-27 (8). 17 of the 34 scenarios end
    stuck. Missing there (keyed tracker, so nothing is duplicated): at 5 all three writes; at
    6-10 create_b and comment_a (create_a was applied at 6); at 11-13 comment_a; at 20-24
    comment_a; at 25-27 none: 3 + 5x2 + 3x1 + 5x1 = 21.
    """
    exploration = _explore(replace(SAVE_AFTER_REPLY, transcript_on_restart="as-is"), TRIAGE, "keyed", 1)
    row = summarize(exploration, variant="as-is", job="triage", tracker="keyed")
    assert (row.scenarios, row.never_finish, row.missing, row.dups) == ({1: 34}, 17, 21, 0)
    verdicts = {v.name: v for v in row.invariants}
    assert not verdicts[invariants.WELL_FORMED_TRANSCRIPT].holds
    assert not verdicts[invariants.CAN_FINISH].holds
    # The shortest counterexample: the crash at `reply 1: renamed`, then the refused restart.
    path = shortest_path(exploration, exploration.verdicts[invariants.CAN_FINISH].node or 0)
    assert path.steps[-1].crashes == 1
    assert invariants.stuck(path.end) == "the provider refuses the conversation: create_a has no result"


def test_repair_sends_a_well_formed_conversation_and_loses_what_it_repaired_unsent() -> None:
    """`repair` gives every orphaned call "outcome unknown" and goes on: no stuck run, writes lost instead.

    The same 17 crashes find orphaned calls. A repaired write never applied is never sent:
    at 5 create_a and create_b (2); at 6-10 create_b (5x1); at 11-13 none (applied at 11);
    at 20-24 comment_a (5x1); at 25-27 none: 2 + 5 + 5 = 12 missing, no-loss violated.
    """
    exploration = _explore(replace(SAVE_AFTER_REPLY, transcript_on_restart="repair"), TRIAGE, "keyed", 1)
    row = summarize(exploration, variant="repair", job="triage", tracker="keyed")
    assert (row.never_finish, row.missing, row.dups) == (0, 12, 0)
    verdicts = {v.name: v.holds for v in row.invariants}
    assert verdicts[invariants.WELL_FORMED_TRANSCRIPT]
    assert verdicts[invariants.CAN_FINISH]
    assert not verdicts[invariants.NO_LOSS]


@pytest.mark.parametrize("tracker", ["keyless", "keyless-lookup"])
def test_memory_approvals_let_the_ladder_send_a_marked_write_unapproved(tracker: str) -> None:
    """Under `memory` no save holds the approval; the marker save does, so the ladder sends with none.

    attempt-markers on triage-approval: comment_a is approved, marked, Save(marker comment_a),
    sent. A crash at `marker comment_a: renamed` or `marker saved comment_a` leaves the marker
    durable, the write not applied and no approval on disk: the restart settles it on the
    ladder (lookup, or a person), hears "no", and sends it with no approval: unapproved. The
    shortest counterexample is the first of those crashes.
    """
    job = load_job(EXAMPLES / "triage-approval.toml")
    exploration = _explore(replace(ATTEMPT_MARKERS, approval_storage="memory"), job, tracker, 1)
    verdict = exploration.verdicts[invariants.APPROVED_EXACTLY]
    assert not verdict.holds
    path = shortest_path(exploration, verdict.node or 0)
    at = next(i for i, step in enumerate(path.steps) if step.action is not None and step.action.kind == "crash")
    assert exploration.model.crash_point(path.steps[at - 1].state) == "marker comment_a: renamed"
    assert invariants.violation(invariants.APPROVED_EXACTLY, path.end, job) == (
        "comment_a@1 was applied with no approval that matches it"
    )
    durable = _explore(ATTEMPT_MARKERS, job, tracker, 1)  # the approval saved before the marker
    assert durable.verdicts[invariants.APPROVED_EXACTLY].holds


@pytest.mark.parametrize(("binding", "holds"), [("call", False), ("call-and-args", True)])
def test_changed_arguments_pass_an_approval_bound_to_the_call_alone(binding: ApprovalBinding, holds: bool) -> None:
    """An approval kept by a service outlives a reply never saved; the re-asked reply changes the refund.

    refund-approval under reply_save = "never": reply 1 arrives, the person approves refund (v1)
    at the service, crash at `approved refund` (the checkpoint holds the start only). The
    restart asks the model again; `changed-args` strikes at `reply 1 arrived`: refund now
    carries arguments v2. Bound to the call, the service's approval matches and refund v2 is
    applied under an approval given for v1 (2 moves). Bound to call and arguments, nothing
    matches: the person is asked for v2, whose approval it is redeemed against. Keys (keyed
    tracker) keep a resend from being applied twice, so no approval is redeemed twice.
    """
    job = load_job(EXAMPLES / "refund-approval.toml")
    policy = replace(
        SAVE_AFTER_REPLY, reply_save="never", keys="run-call", approval_storage="service", approval_binding=binding
    )
    exploration = _explore(policy, job, "keyed", 2, faults=("changed-args",))
    verdict = exploration.verdicts[invariants.APPROVED_EXACTLY]
    assert verdict.holds is holds
    if not holds:
        path = shortest_path(exploration, verdict.node or 0)
        assert path.steps[-1].crashes == 2
        assert invariants.violation(invariants.APPROVED_EXACTLY, path.end, job) == (
            "refund@2 was applied under approval #1, given for refund with arguments v1"
        )


@pytest.mark.parametrize(
    ("node", "policy", "tracker", "dups"),
    [
        ("file_and_approve", replace(SAVE_AFTER_REPLY, resume_granularity="node"), "keyless", 1),
        (None, replace(SAVE_AFTER_REPLY, resume_granularity="node"), "keyless", 0),
        ("file_and_approve", SAVE_AFTER_REPLY, "keyless", 0),
        ("file_and_approve", replace(SAVE_AFTER_REPLY, resume_granularity="node", keys="run-call"), "keyed", 0),
    ],
)
def test_a_node_resumed_from_its_start_files_the_issue_again_without_a_crash(
    node: str | None, policy: Policy, tracker: str, dups: int
) -> None:
    """approval-node: create_a, then the gated comment_a, in one node. The uninterrupted run alone:

    create_a is applied; comment_a's approval arrives; under `node` the resume re-runs the node,
    so create_a loses its result and is sent again: 1 duplicate with no crash. With create_a in
    a node of its own (no `node`), with `step`, or keyed on a keyed tracker: none.
    """
    job = load_job(EXAMPLES / "approval-node.toml")
    if node is None:
        turns = tuple(tuple(replace(c, node=None) if c.id == "create_a" else c for c in t) for t in job.turns)
        job = Job(job.name, turns)
    exploration = _explore(policy, job, tracker, 0)
    assert exploration.counts.scenarios == {0: 1}
    assert exploration.counts.measures[0]["dups"] == dups


@pytest.mark.parametrize(
    ("consume", "storage", "scenarios", "never"),
    [
        ("before-resume", "durable", 38, 2),
        ("after-resume-started", "durable", 38, 0),
        ("before-resume", "service", 36, 0),
    ],
)
def test_an_approval_consumed_before_the_resume_leaves_the_run_stuck(
    consume: str, storage: str, scenarios: int, never: int
) -> None:
    """save-after-reply on triage-approval, one crash (CONVERSATIONS.md 5).

    Triage's 34 points, plus comment_a's gate: `approval requested comment_a`, `approved
    comment_a`, `approval comment_a: tmp written` and `: renamed` (38; under `service` no
    approval save: 36). Consumed at the answer, the request cannot be answered again: a crash at
    `approved comment_a` or at `approval comment_a: tmp written` leaves a checkpoint without the
    approval, and the restart's gate is stuck: 2 scenarios never finish, each missing comment_a.
    Consumed with the save (after-resume-started), the restart asks again. Kept by the service
    with its mark, the restart holds it. The shortest counterexample is one crash, at `approved
    comment_a`.
    """
    job = load_job(EXAMPLES / "triage-approval.toml")
    policy = replace(SAVE_AFTER_REPLY, approval_consume=consume, approval_storage=storage)  # type: ignore[arg-type]
    exploration = _explore(policy, job, "keyless", 1)
    row = summarize(exploration, variant="consume", job=job.name, tracker="keyless")
    assert (row.scenarios, row.never_finish, row.missing) == ({1: scenarios}, never, never)
    verdict = exploration.verdicts[invariants.CAN_FINISH]
    assert verdict.holds is (never == 0)
    if never:
        path = shortest_path(exploration, verdict.node or 0)
        crashes = [i for i, step in enumerate(path.steps) if step.action is not None and step.action.kind == "crash"]
        assert len(crashes) == 1
        assert exploration.model.crash_point(path.steps[crashes[0] - 1].state) == "approved comment_a"
        assert invariants.violation(invariants.CAN_FINISH, path.end, job) == (
            "the run can never finish: the approval of comment_a (v1) was consumed before the resumed run kept it"
        )


@pytest.mark.parametrize(("granularity", "dups"), [("per-call", 0), ("per-batch", 33)])
def test_a_batch_persisted_as_one_unit_sends_its_applied_writes_again(granularity: str, dups: int) -> None:
    """attempt-markers on parallel-batch (one reply: create_a, create_b, create_c), keyless-lookup, one crash.

    Points: start (2), reply 1 arrived, reply 1 save (2), then per write X: `marker X: tmp
    written`, `: renamed`, `marker saved X`, `tracker accepted X`, `tool returned X`, `result X:
    tmp written`, `: renamed`, `result saved X` (8 x 3), turn 1 save (2), final reply arrived,
    final save (2): 34. Per call, a write applied has its marker saved: the ladder's lookup
    finds it, nothing is sent twice. Per batch, a restart whose checkpoint lacks a result of the
    batch forgets every result and marker of it and sends all three again: each write already
    applied is applied twice. By crash point (a at 6-13, b at 14-21, c at 22-29): a's
    `tracker accepted` to `result saved a` 5 x 1, b's marker points 3 x 1, b applied 5 x 2, c's
    marker points 3 x 2, c applied until `result c: renamed` 3 x 3 (from there the batch is
    complete on disk): 33 duplicates in 19 scenarios.
    """
    job = load_job(EXAMPLES / "parallel-batch.toml")
    policy = replace(ATTEMPT_MARKERS, persist_granularity=granularity)  # type: ignore[arg-type]
    exploration = _explore(policy, job, "keyless-lookup", 1)
    row = summarize(exploration, variant="batch", job=job.name, tracker="keyless-lookup")
    assert (row.scenarios, row.dups) == ({1: 34}, dups)
    assert exploration.verdicts[invariants.NO_DUPLICATE].holds is (dups == 0)


@pytest.mark.parametrize(("repair", "never"), [("none", 25), ("add-missing-results", 25), ("both-directions", 0)])
def test_context_trimmed_on_a_restart_leaves_results_without_their_calls(repair: str, never: int) -> None:
    """idempotency-keys on triage, keyed tracker, `trim-context`, two moves (CONVERSATIONS.md 7).

    A trim needs a restart whose checkpoint holds a turn with a result, in a run not done: after a
    crash at `result create_a: renamed` (9) up to `final: tmp written` (33): 25 points (the
    numbering of this module's docstring). The strike cuts reply 1; under `none` and
    `add-missing-results` the restart holds create_a's result without its call, and its first
    model call is refused: those 25 scenarios never finish, and `well-formed-transcript` fails.
    Under `both-directions` the result leaves the conversation at the load: nothing is stuck.
    """
    policy = replace(SAVE_AFTER_REPLY, keys="run-call", transcript_repair=repair)  # type: ignore[arg-type]
    exploration = _explore(policy, TRIAGE, "keyed", 2, faults=("trim-context",))
    row = summarize(exploration, variant="trim", job="triage", tracker="keyed")
    assert row.never_finish == never
    verdicts = {v.name: v.holds for v in row.invariants}
    assert verdicts[invariants.WELL_FORMED_TRANSCRIPT] is (never == 0)
    assert verdicts[invariants.CAN_FINISH] is (never == 0)
    if never:
        verdict = exploration.verdicts[invariants.WELL_FORMED_TRANSCRIPT]
        path = shortest_path(exploration, verdict.node or 0)
        moves = [s.action.kind for s in path.steps if s.action is not None and s.action.kind in ("crash", "fault")]
        assert moves == ["crash", "fault"]
