"""The conversation's rules (spec/CONVERSATIONS.md): the explorer agrees with the replay oracle's own.

Per number of moves: scenarios, with_dups, dups, missing, model calls, approvals asked, the
scenarios that never finish, and the moves of each kind; and the verdicts of
well-formed-transcript, approved-exactly and can-finish. Every built-in design x tracker x
value of each conversation field that matters on the job (one field off its default at a
time, and none) x faults {none, changed-args}, at depth 1 on triage, triage-approval,
refund-approval and approval-node; at depth 2 the same on a rotating subset (one tracker and
one fault setting per design and value, turn about).
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
from tests.replay_oracle import DESIGNS, NAIVE, Environment, sweep
from tests.replay_oracle import TRACKERS as ORACLE_TRACKERS

ROOT = Path(__file__).resolve().parents[2]
JOBS: dict[str, Job] = {
    "triage": TRIAGE,
    **{
        name: load_job(ROOT / "examples" / f"{name}.toml")
        for name in ("triage-approval", "refund-approval", "approval-node")
    },
}
FAULT_SETTINGS = ((), ("changed-args",))
PROPERTIES = (invariants.WELL_FORMED_TRANSCRIPT, invariants.APPROVED_EXACTLY, invariants.CAN_FINISH)


Change = tuple[tuple[str, str], ...]
"""Conversation fields set off their defaults: (field, value) pairs."""
PAIRED = ("approval_binding", "approval_storage")
"""Crossed with each other: a binding matters only where an approval outlives a reply (service)."""


def _changes(job: Job) -> list[Change]:
    """Every field at its default; each value off its default of each field that matters; the approval pairs."""
    fields = conversation_fields(job)
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


@pytest.mark.parametrize(("job_name", "change"), [(j, c) for j in JOBS for c in _changes(JOBS[j])])
def test_a_rotating_subset_agrees_at_depth_2(job_name: str, change: Change) -> None:
    job = JOBS[job_name]
    turn = list(JOBS).index(job_name) + _changes(job).index(change)
    for i, name in enumerate(_policies()):
        policy = _with(_policies()[name], change)
        tracker = ORACLE_TRACKERS[(turn + i) % len(ORACLE_TRACKERS)]
        _agree(policy, job, tracker, FAULT_SETTINGS[(turn + i) % 2], 2)


def test_the_agreement_sees_each_property_fail_somewhere() -> None:
    """The product above is no walk in the park: each property is broken by some case (hand-picked here)."""
    as_is = replace(DESIGNS["save-after-reply"], transcript_on_restart="as-is")
    memory = replace(DESIGNS["attempt-markers"], approval_storage="memory")
    assert oracle_figures(as_is, TRIAGE, "keyed", (), 1)[1] == (False, True, False)
    assert oracle_figures(memory, JOBS["triage-approval"], "keyless", (), 1)[1] == (True, False, True)
