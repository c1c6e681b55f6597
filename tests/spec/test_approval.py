"""Tests of crashsweep.spec.approval: the gate, what an approval matches, redeeming (CONVERSATIONS.md 2)."""

from __future__ import annotations

import pytest

from crashsweep.spec import approval
from crashsweep.spec.job import Call, Job
from crashsweep.spec.ops import Approve, Gate, Point, Replan
from crashsweep.spec.save import save
from crashsweep.spec.world import Snapshot, Turn, World

GATED = Call("w", "comment", True, approval=True)
JOB = Job("one", ((Call("a", "create_issue", True, node="n"), Call("w", "comment", True, approval=True, node="n")),))


def test_a_gated_call_passes_a_gate_an_ungated_one_none() -> None:
    """The plan puts the gate before a gated call; the process decides there whether to ask."""
    assert approval.gate(GATED, Snapshot("r", turns=(Turn(1),))) == (Gate("w"),)
    assert approval.gate(Call("w", "comment", True), Snapshot("r", turns=(Turn(1),))) == ()


@pytest.mark.parametrize(
    ("binding", "call", "version", "found"),
    [
        ("call-and-args", "w", 1, "w@1#1"),
        ("call-and-args", "w", 2, None),  # other arguments: no match
        ("call", "w", 2, "w@1#1"),  # the call alone: any arguments match
        ("call", "v", 1, None),
        ("none", "v", 5, "w@1#1"),  # a bare yes matches any gated call
    ],
)
def test_what_an_approval_matches_depends_on_its_binding(
    binding: str, call: str, version: int, found: str | None
) -> None:
    assert approval.matching(("w@1#1",), call, version, binding) == found


def test_the_latest_matching_approval_is_taken() -> None:
    assert approval.matching(("w@1#1", "w@1#2"), "w", 1, "call-and-args") == "w@1#2"


def test_durable_and_memory_keep_the_approval_in_memory_service_in_the_world() -> None:
    """The person's approval is always in the world's history; in memory unless `service` keeps it."""
    memory = Snapshot("run-1", turns=(Turn(1),))
    struck, kept = approval.approve("w", World(), memory, "durable")
    assert struck == ("approval 1 run-1 w@1",)
    assert kept.last is not None
    assert kept.last.approved == ("w@1#1",)
    struck, kept = approval.approve("w", World(struck=struck), memory, "service")
    assert struck == ("approval 1 run-1 w@1", "approval 2 run-1 w@1")
    assert kept is memory
    assert approval.held(World(struck=struck), memory, "service") == ("w@1#1", "w@1#2")
    assert approval.held(World(struck=struck), Snapshot("run-2"), "service") == ()  # another run's approvals


def test_the_request_saves_only_a_durable_approval_and_replans_a_node() -> None:
    asked = (Point("approval requested w"), Approve("w"), Point("approved w"))
    assert approval.request("w", JOB, "memory", "step") == asked
    assert approval.request("w", JOB, "durable", "step") == (*asked, *save("approval w"))
    assert approval.request("w", JOB, "service", "node") == (*asked, Replan())


def test_redeeming_notes_unapproved_misapproved_and_twice_redeemed_records() -> None:
    memory = Snapshot("run-1", turns=(Turn(1, approved=("w@1#1",), args=2),))
    job = Job("g", ((GATED,),))
    # Bound to the call: approval 1 (arguments v1) redeemed by the write with arguments v2.
    struck = approval.redeem("w", World(), memory, "call", "durable")
    assert struck == ("misapproved w@2 under w@1#1", "redeemed 1")
    assert approval.broken(World(struck=struck), job) == (
        "w@2 was applied under approval #1, given for w with arguments v1",
    )
    # Bound to call and arguments: nothing matches v2.
    assert approval.redeem("w", World(), memory, "call-and-args", "durable") == ("unapproved w@2",)
    twice = ("redeemed 1", "redeemed 1")
    assert approval.broken(World(struck=twice), job) == ("approval #1 was redeemed twice",)
    assert approval.broken(World(struck=("redeemed 1", "redeemed 2")), job) == ()
