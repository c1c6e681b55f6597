"""The explorer's incremental checks agree with the invariants' checks over a History, in every state.

For a few explored graphs (seed designs, transcripts left as they are or repaired, approvals
bound and stored every way, changed arguments, power loss and pauses), every state's world is
projected to a History (spec/projection.py) and judged by each registered invariant's check;
its model check (the explorer's fast form) must give the same verdict, the same witness and the
same words.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from crashsweep.explorer import Exploration, explore
from crashsweep.spec import invariants, projection
from crashsweep.spec.design import Env
from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.policy import Policy
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel
from tests.replay_oracle import DESIGNS

ROOT = Path(__file__).resolve().parents[2]


TWO_GATES = Job(
    "two-gates",
    (
        (
            Call("create_a", "create_issue", writes=True, approval=True),
            Call("create_b", "create_issue", writes=True, approval=True),
        ),
        (Call("comment_a", "comment", writes=True),),
    ),
)
"""Two gated writes in one turn: under approval_binding = "none" the second redeems the first's approval."""


def _job(name: str) -> Job:
    if name == TWO_GATES.name:
        return TWO_GATES
    return TRIAGE if name == "triage" else load_job(ROOT / "examples" / f"{name}.toml")


Case = tuple[str, tuple[tuple[str, str], ...], str, str, tuple[str, ...]]
CASES: list[Case] = [
    ("save-after-reply", (), "triage", "keyless", ()),
    ("idempotency-keys", (), "triage", "keyed", ("lost-reply",)),
    ("save-after-reply", (("transcript_on_restart", "as-is"),), "triage", "keyless", ()),
    ("save-after-reply", (("transcript_on_restart", "repair"),), "one-write", "keyless", ()),
    ("attempt-markers", (), "triage-approval", "keyless-lookup", ()),
    (
        "attempt-markers",
        (("approval_storage", "service"), ("approval_binding", "call")),
        "refund-approval",
        "keyless",
        ("changed-args",),
    ),
    (
        "attempt-markers",
        (("approval_storage", "service"), ("approval_binding", "none")),
        "refund-approval",
        "keyless",
        (),
    ),
    ("idempotency-keys", (("approval_storage", "memory"),), "triage-approval", "keyed", ()),
    ("attempt-markers", (("approval_storage", "service"), ("approval_binding", "none")), "two-gates", "keyless", ()),
    ("save-after-reply", (("approval_storage", "service"), ("approval_binding", "none")), "two-gates", "keyless", ()),
    ("save-after-reply", (("resume_granularity", "node"),), "approval-node", "keyless", ()),
]


def _model(
    design: str, change: tuple[tuple[str, str], ...], job: str, tracker: str, faults: tuple[str, ...]
) -> LoopModel:
    policy: Policy = replace(DESIGNS[design], **dict(change))  # type: ignore[arg-type]
    return LoopModel(compose("p", "p", policy), Env(_job(job), TRACKERS[tracker], faults))


def _agree(world: World, job: Job, finished: bool) -> None:
    history = projection.history(world, job)
    for invariant in invariants.registered():
        model = invariant.model
        assert model is not None
        if invariant.kind != "at_end" or finished:
            found = invariant.check(history)
            assert model.holds(world, job) == (found is None), (invariant.name, world)
            if found is not None:
                assert model.explain(world, job) == found.why
                assert found.evidence, invariant.name
        assert model.seen(world, job) == invariant.seen(history), (invariant.witness, world)


@cache
def _explored(case: Case) -> tuple[LoopModel, Exploration[World]]:
    """The case's model and its graph at depth 2, explored once for this module's tests."""
    model = _model(*case)
    return model, explore(model, 2)


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}-{case[2]}-{case[3]}")
def test_model_checks_agree_with_history_checks(case: Case) -> None:
    model, ex = _explored(case)
    assert ex.states > 10
    for node in range(ex.states):
        _agree(ex.state(node), model.env.job, ex.finished(node))


def test_the_cases_break_every_invariant() -> None:
    """The agreement is not vacuous: each built-in invariant is violated in some state of some case."""
    violated: set[str] = set()
    for case in CASES:
        model, ex = _explored(case)
        for node in range(ex.states):
            history = projection.history(ex.state(node), model.env.job)
            violated.update(i.name for i in invariants.INVARIANTS if i.check(history) is not None)
    assert violated == {i.name for i in invariants.INVARIANTS}
