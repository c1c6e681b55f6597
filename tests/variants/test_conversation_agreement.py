"""The conversation's rules (spec/CONVERSATIONS.md): the explorer agrees with the replay oracle's own.

Per number of moves: scenarios, with_dups, dups, missing, model calls, approvals asked, the
scenarios that never finish, and the moves of each kind; and the verdicts of
well-formed-transcript, approved-exactly and can-finish. Every built-in design x tracker x
value of each conversation field that matters on the job (one field off its default at a
time, and none) x faults {none, changed-args}, at depth 1 on triage, triage-approval,
refund-approval, approval-node and parallel-batch; at depth 2 the same on a rotating subset
(one tracker and one fault setting of {none, changed-args, trim-context} per design and
value, turn about), where `transcript_repair`, which matters only under trim-context, always
has it. trim-context is not tried at depth 1: its chance is a restart, which needs a crash
first (two moves).

Last, the oracle alone on the new rules' figures, each derived by hand in its docstring.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product
from pathlib import Path

import pytest

from crashsweep.explorer import explore
from crashsweep.spec import invariants, metrics
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import CONVERSATION, Policy, conversation_fields
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import NEVER_FINISH, LoopModel
from tests.replay_oracle import DESIGNS, NAIVE, Environment, replay, sweep
from tests.replay_oracle import TRACKERS as ORACLE_TRACKERS

ROOT = Path(__file__).resolve().parents[2]
JOBS: dict[str, Job] = {
    "triage": TRIAGE,
    **{
        name: load_job(ROOT / "examples" / f"{name}.toml")
        for name in ("triage-approval", "refund-approval", "approval-node", "parallel-batch")
    },
}
TRIM = ("trim-context",)
FAULT_SETTINGS = ((), ("changed-args",))
"""At depth 1: trim-context has no chance there."""
FAULT_SETTINGS_2 = (*FAULT_SETTINGS, TRIM)
PROPERTIES = (invariants.WELL_FORMED_TRANSCRIPT, invariants.APPROVED_EXACTLY, invariants.CAN_FINISH)


Change = tuple[tuple[str, str], ...]
"""Conversation fields set off their defaults: (field, value) pairs."""
PAIRED = ("approval_binding", "approval_storage")
"""Crossed with each other: a binding matters only where an approval outlives a reply (service)."""


def _changes(job: Job, faults: tuple[str, ...] = ()) -> list[Change]:
    """Every field at its default; each value off its default of each field that matters; the approval pairs."""
    fields = conversation_fields(job, faults)
    found: list[Change] = [()]
    for name in fields:
        if name not in PAIRED:
            found.extend(((name, str(value)),) for value in CONVERSATION[name][1:])
    if all(name in fields for name in PAIRED):
        pairs = product(*(CONVERSATION[name] for name in PAIRED))
        found.extend(
            tuple(zip(PAIRED, map(str, pair), strict=True))
            for pair in pairs
            if pair != (CONVERSATION[PAIRED[0]][0], CONVERSATION[PAIRED[1]][0])
        )
    return found


def _with(policy: Policy, change: Change) -> Policy:
    """`policy` with conversation fields set (values of CONVERSATION, checked by Policy itself)."""
    return replace(policy, **dict(change))  # type: ignore[arg-type]


def _policies() -> dict[str, Policy]:
    return {**DESIGNS, **NAIVE}


def explorer_figures(policy: Policy, job: Job, tracker: str, faults: tuple[str, ...], depth: int) -> tuple[object, ...]:
    """Per number of moves the figures, then the three verdicts, from the explorer."""
    model = LoopModel(compose("p", "p", policy), Env(job, TRACKERS[tracker], faults))
    ex = explore(model, depth)
    counts = ex.counts
    per_k = {}
    for k in range(1, depth + 1):
        measures, counters = counts.measures.get(k, {}), counts.counters.get(k, {})
        per_k[k] = (
            counts.scenarios.get(k, 0),
            *(measures.get(name, 0) for name in ("with_dups", "dups", "missing", NEVER_FINISH)),
            counters.get(metrics.MODEL_CALLS, 0),
            counters.get(metrics.APPROVALS, 0),
            *(counters.get(fault_counter(kind), 0) for kind in faults),
        )
    return per_k, tuple(ex.verdicts[name].holds for name in PROPERTIES)


def oracle_figures(policy: Policy, job: Job, tracker: str, faults: tuple[str, ...], depth: int) -> tuple[object, ...]:
    """The same, from the replay oracle."""
    result = sweep(policy, job, tracker, depth, Environment(faults))
    per_k = {}
    for k, t in result.by_crashes.items():
        per_k[k] = (
            t.scenarios, t.with_dups, t.dups, t.missing, t.never_finish, t.model_calls, t.approvals,
            *(t.moves[kind] for kind in faults),
        )  # fmt: skip
    verdicts = result.verdicts()
    return per_k, tuple(verdicts[name] for name in PROPERTIES)


def _agree(policy: Policy, job: Job, tracker: str, faults: tuple[str, ...], depth: int) -> None:
    mine, theirs = (
        explorer_figures(policy, job, tracker, faults, depth),
        oracle_figures(policy, job, tracker, faults, depth),
    )
    assert mine == theirs, f"{policy.label} on {job.name}@{tracker}, faults {faults}, depth {depth}"


@pytest.mark.parametrize(("job_name", "change"), [(j, c) for j in JOBS for c in _changes(JOBS[j])])
def test_every_design_agrees_at_depth_1(job_name: str, change: Change) -> None:
    job = JOBS[job_name]
    for name, tracker, faults in product(_policies(), ORACLE_TRACKERS, FAULT_SETTINGS):
        _agree(_with(_policies()[name], change), job, tracker, faults, 1)


@pytest.mark.parametrize(("job_name", "change"), [(j, c) for j in JOBS for c in _changes(JOBS[j], TRIM)])
def test_a_rotating_subset_agrees_at_depth_2(job_name: str, change: Change) -> None:
    job = JOBS[job_name]
    turn = list(JOBS).index(job_name) + _changes(job, TRIM).index(change)
    for i, name in enumerate(_policies()):
        policy = _with(_policies()[name], change)
        tracker = ORACLE_TRACKERS[(turn + i) % len(ORACLE_TRACKERS)]
        # Another stride than the tracker's, so that each tracker meets each fault setting over the cases.
        faults = FAULT_SETTINGS_2[(turn + 2 * i) % len(FAULT_SETTINGS_2)]
        if any(field == "transcript_repair" for field, _ in change):
            faults = TRIM
        _agree(policy, job, tracker, faults, 2)


def test_the_agreement_sees_each_property_fail_somewhere() -> None:
    """The product above is no walk in the park: each property is broken by some case (hand-picked here)."""
    as_is = replace(DESIGNS["save-after-reply"], transcript_on_restart="as-is")
    memory = replace(DESIGNS["attempt-markers"], approval_storage="memory")
    assert oracle_figures(as_is, TRIAGE, "keyed", (), 1)[1] == (False, True, False)
    assert oracle_figures(memory, JOBS["triage-approval"], "keyless", (), 1)[1] == (True, False, True)


def _stuck_after_one_crash(policy: Policy, job: Job, tracker: str) -> list[str]:
    """The crash points of the uninterrupted run at which one crash leaves the run stuck for good."""
    base = replay(policy, job, tracker, ())
    assert base is not None
    stuck = []
    for index, name in enumerate(base.last_points, start=1):
        done = replay(policy, job, tracker, (index,))
        assert done is not None
        if done.world.stuck is not None:
            stuck.append(name)
    return stuck


@pytest.mark.parametrize(
    ("storage", "expected"),
    [
        ("durable", ["approved comment_a", "approval comment_a: tmp written"]),
        ("memory", [
            "approved comment_a", "tracker accepted comment_a", "tool returned comment_a",
            "result comment_a: tmp written",
        ]),
        ("service", []),
    ],
)  # fmt: skip
def test_the_oracle_consumes_a_request_before_the_resume(storage: str, expected: list[str]) -> None:
    """save-after-reply on triage-approval, `before-resume`, one crash (CONVERSATIONS.md 5), by hand.

    The request (run-1, comment_a, v1) is consumed at the person's answer, before `approved
    comment_a`. durable: a crash at `approved comment_a` or `approval comment_a: tmp written`
    leaves a checkpoint without the approval; the restart's gate must ask: stuck. From `approval
    comment_a: renamed` on, the saved approval passes the gate (a crash at `tracker accepted` or
    `tool returned` resends under it). memory (no approval save): every crash from `approved` up
    to the result save's `tmp written` restarts at the gate with no approval: stuck; from the
    result's rename on, comment_a has its result and meets no gate. service: the service keeps
    the approval with its mark, so no restart must ask. `after-resume-started` is never stuck.
    """
    policy = replace(DESIGNS["save-after-reply"], approval_storage=storage)  # type: ignore[arg-type]
    job = JOBS["triage-approval"]
    assert _stuck_after_one_crash(replace(policy, approval_consume="before-resume"), job, "keyed") == expected
    assert _stuck_after_one_crash(policy, job, "keyed") == []


def test_the_oracle_runs_a_half_done_batch_again() -> None:
    """attempt-markers on parallel-batch, tracker keyless-lookup, one crash (CONVERSATIONS.md 6), by hand.

    34 crash points: start (2), reply 1 arrived, reply 1 (2), per write marker (3), tracker
    accepted, tool returned, result (3), then turn 1 (2), final reply arrived, final (2). Under
    per-call a restart finds each applied write's marker or result: no duplicate. Under
    per-batch a restart that loads turn 1 with a call lacking its result drops every result and
    marker and sends the three writes again: each write applied before the crash is a duplicate.
    1 applied: create_a's 5 points from `tracker accepted` on and create_b's 3 marker points (8);
    2 applied: create_b's 5 and create_c's 3 marker points (8); 3 applied: `tracker accepted
    create_c`, `tool returned create_c`, `result create_c: tmp written` (3); from the last result's
    rename on nothing is dropped. 19 scenarios with duplicates: 8 + 16 + 9 = 33 duplicates.
    """
    policy = DESIGNS["attempt-markers"]
    job = JOBS["parallel-batch"]
    per_call = sweep(policy, job, "keyless-lookup", 1)
    per_batch = sweep(replace(policy, persist_granularity="per-batch"), job, "keyless-lookup", 1)
    assert (per_call.crash_points, per_call.total("scenarios"), per_call.total("dups")) == (34, 34, 0)
    assert (per_batch.total("scenarios"), per_batch.total("with_dups"), per_batch.total("dups")) == (34, 19, 33)


@pytest.mark.parametrize(
    ("repair", "stuck", "verdicts"),
    [
        ("none", 25, (False, True, False)),
        ("add-missing-results", 25, (False, True, False)),
        ("both-directions", 0, (True, True, True)),
    ],
)
def test_the_oracle_trims_the_context_at_a_restart(repair: str, stuck: int, verdicts: tuple[bool, ...]) -> None:
    """save-after-reply on triage, keyed, trim-context (CONVERSATIONS.md 7), by hand.

    At one move there is no restart without a crash, so no trim: 34 scenarios, as without the
    fault. At two, a crash then a trim: the restart's checkpoint must hold a result, so the crash
    is at one of the 25 points from `result create_a: renamed` to `final: tmp written` (at
    `final: renamed` the run is done). Each trims reply 1 (the oldest turn with a result):
    under none and add-missing-results the process holds create_a's result without its call
    and its next model call is refused (stuck, well-formed-transcript broken); under
    both-directions turn 1's results leave the conversation at the load and the run finishes.
    """
    policy = replace(DESIGNS["save-after-reply"], transcript_repair=repair)  # type: ignore[arg-type]
    result = sweep(policy, TRIAGE, "keyed", 2, Environment(TRIM))
    one, two = result.by_crashes[1], result.by_crashes[2]
    assert (one.scenarios, one.moves["trim-context"], one.never_finish) == (34, 0, 0)
    assert (two.moves["trim-context"], two.never_finish, two.malformed) == (25, stuck, stuck)
    assert tuple(result.verdicts()[name] for name in PROPERTIES) == verdicts
