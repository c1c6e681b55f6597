"""Tests of crashsweep.spec.approval: when a call must pass the approval gate."""

from __future__ import annotations

from crashsweep.spec.approval import gate
from crashsweep.spec.job import Call
from crashsweep.spec.ops import RequestApproval
from crashsweep.spec.world import Snapshot, Turn

GATED = Call("w", "comment", True, approval=True)


def test_gated_call_asks_then_saves_the_decision() -> None:
    """An unapproved gated call: ask, then Save(approval <call>)."""
    ops = gate(GATED, Snapshot("r", turns=(Turn(1),)))
    assert ops[0] == RequestApproval("w")
    assert len(ops) == 5


def test_approved_or_ungated_calls_pass() -> None:
    """An approved call, or a call without a gate, passes at once."""
    assert gate(GATED, Snapshot("r", turns=(Turn(1, approved=("w",)),))) == ()
    assert gate(Call("w", "comment", True), Snapshot("r", turns=(Turn(1),))) == ()
