"""Tests of crashsweep.realsweep.reference.approvals: where an approval is kept, what it matches."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crashsweep.realsweep.reference import approvals
from crashsweep.realsweep.reference.parts import StuckError
from crashsweep.spec.job import Call, Job
from crashsweep.spec.policy import Policy

A = Call("a", "create_issue", True, node="n")
W = Call("w", "comment", True, approval=True, node="n")
V = Call("v", "comment", True, approval=True)
JOB = Job("j", ((A, W, V),))
POLICY = Policy(
    startup_save=True,
    reply_save="before-first-send",
    result_saves="each-call",
    markers="none",
    keys="none",
    lock="none",
)


class _Loop(SimpleNamespace):
    """The parts of a Loop the gate uses: points and saves are noted, not made."""

    def point(self, name: str) -> None:
        self.passed.append(name)

    def save(self, what: str) -> None:
        self.passed.append(f"save {what}")


def _loop(tmp_path: Path) -> Any:
    turn = {"index": 1, "results": {"a": "#1"}, "marked": ["a"], "complete": False}
    return _Loop(workdir=tmp_path, job=JOB, memory={"run": "r", "turns": [turn]}, passed=[])


def test_a_durable_approval_is_asked_noted_and_saved_then_matches(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.gate(loop, turn, W, POLICY)
    assert loop.passed == ["approval requested w", "approved w", "save approval w"]
    assert turn["approved"] == ["w@1#1"]  # the call, its arguments' version, the first approval given
    approvals.gate(loop, turn, W, POLICY)  # held now: nothing asked
    assert len(loop.passed) == 3
    assert json.loads((tmp_path / approvals.LEDGER_FILE).read_text()) == [["r", "w@1#1"]]


def test_each_approval_given_gets_the_next_number_of_the_world(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.gate(loop, turn, W, POLICY)
    approvals.gate(loop, turn, V, POLICY)
    approvals.forget(loop.memory)  # a restart under `memory`: the loop has none, the ledger keeps both
    approvals.gate(loop, turn, W, POLICY)
    assert turn["approved"] == ["w@1#3"]
    given = json.loads((tmp_path / approvals.LEDGER_FILE).read_text())
    assert [kept for _, kept in given] == ["w@1#1", "v@1#2", "w@1#3"]


def test_a_gated_write_is_sent_under_the_latest_matching_approval(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.redeeming(loop, POLICY)
    assert loop.approval_of(W) is None  # nothing held: the record will say so
    approvals.gate(loop, turn, W, POLICY)
    turn["approved"].append("w@1#7")  # a later approval of the same call
    assert (loop.approval_of(W), loop.approval_of(V), loop.approval_of(A)) == ("w@1#7", None, None)
    approvals.redeeming(loop, replace(POLICY, approval_binding="none"))
    assert loop.approval_of(V) == "w@1#7"  # a bare yes matches any gated call


@pytest.mark.parametrize(
    ("kept", "words"),
    [
        ([("w", "w@1#1"), ("v", "v@1#2")], []),
        ([("w", None), ("v", "v@1#2")], ["w@1 was applied with no approval that matches it"]),
        ([("w", "v@1#2"), ("v", "v@1#3")], ["w@1 was applied under approval #2, given for v with arguments v1"]),
        ([("w", "w@1#1"), ("w", "w@1#1")], ["approval #1 was redeemed twice"]),
    ],
)
def test_the_records_break_approved_exactly_by_the_rules(kept: list[tuple[str, str | None]], words: list[str]) -> None:
    """CONVERSATIONS.md 2: unapproved, misapproved, redeemed twice; a write with no gate is not read."""
    records = [{"call": "a", "approval": None}] + [{"call": call, "approval": k} for call, k in kept]
    assert list(approvals.broken(records, JOB)) == words


def test_the_service_keeps_the_approval_in_a_file_of_the_world_at_once(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.gate(loop, turn, W, replace(POLICY, approval_storage="service"))
    assert "approved" not in turn
    assert json.loads((tmp_path / approvals.LEDGER_FILE).read_text()) == [["r", "w@1#1"]]
    assert "save approval w" not in loop.passed
    loop.memory["turns"] = [{"index": 1, "results": {}, "marked": [], "complete": False}]  # a restart
    approvals.gate(loop, loop.memory["turns"][0], W, replace(POLICY, approval_storage="service"))
    assert loop.passed.count("approved w") == 1  # found at the service


def test_memory_approvals_are_not_loaded() -> None:
    memory = {"run": "r", "turns": [{"index": 1, "approved": ["w@1#1"]}]}
    approvals.forget(memory)
    assert memory["turns"] == [{"index": 1}]


def test_a_node_resume_forgets_the_earlier_calls_of_the_node_before_the_approved_point(tmp_path: Path) -> None:
    """CONVERSATIONS.md 3: at the approval's arrival, a's result and marker go; the save holds neither."""
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    with pytest.raises(approvals.Replan):
        approvals.gate(loop, turn, W, replace(POLICY, resume_granularity="node"))
    assert (turn["results"], turn["marked"]) == ({}, [])


def test_an_approval_is_of_the_arguments_the_turn_holds_and_binds_by_the_design(tmp_path: Path) -> None:
    """changed-args (CONVERSATIONS.md 2.3): v2 in the turn; call-and-args needs a new approval, call does not."""
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.gate(loop, turn, W, POLICY)
    turn["args"] = 2  # the re-asked reply's calls carry arguments v2
    approvals.redeeming(loop, replace(POLICY, approval_binding="call"))
    assert loop.approval_of(W) == "w@1#1"  # bound to the call alone: v1's approval passes v2
    approvals.gate(loop, turn, W, POLICY)
    assert turn["approved"] == ["w@1#1", "w@2#2"]  # bound to call and arguments: the person is asked for v2


def test_a_records_arguments_are_read_from_its_body() -> None:
    """The write's body says a later version; a record that says none was sent with v1."""
    records = [
        {"call": "w", "body": "j: w (arguments v2)", "approval": "w@1#1"},
        {"call": "v", "body": "(arguments v3)", "approval": "v@3#2"},
    ]
    assert list(approvals.broken(records, JOB)) == ["w@2 was applied under approval #1, given for w with arguments v1"]


def _restarted(loop: Any) -> dict[str, Any]:
    """A restart whose checkpoint lacks the approval (a crash at `approved w`): the same run, no approval held."""
    turn: dict[str, Any] = {"index": 1, "results": {}, "marked": [], "complete": False}
    loop.memory["turns"] = [turn]
    return turn


def test_before_resume_a_gate_that_must_ask_again_is_stuck(tmp_path: Path) -> None:
    """CONVERSATIONS.md 5: the answer consumed the request (its ledger entry); the person cannot answer it again."""
    loop = _loop(tmp_path)
    consuming = replace(POLICY, approval_consume="before-resume")
    approvals.gate(loop, loop.memory["turns"][0], W, consuming)
    assert approvals.consumed(loop, W)
    assert not approvals.consumed(loop, V)
    turn = _restarted(loop)
    with pytest.raises(StuckError, match=r"^the approval of w \(v1\) was consumed before the resumed run kept it$"):
        approvals.gate(loop, turn, W, consuming)
    assert loop.passed.count("approval requested w") == 1  # it could not ask
    approvals.gate(loop, turn, W, POLICY)  # after-resume-started: the person is asked again
    assert turn["approved"] == ["w@1#2"]


def test_before_resume_another_request_can_be_answered(tmp_path: Path) -> None:
    """Other arguments, or a new run, make another request (CONVERSATIONS.md 5); an approval held is no request."""
    loop = _loop(tmp_path)
    consuming = replace(POLICY, approval_consume="before-resume")
    approvals.gate(loop, loop.memory["turns"][0], W, consuming)
    turn = _restarted(loop)
    turn["args"] = 2  # changed-args: the request for (w, 2)
    approvals.gate(loop, turn, W, consuming)
    loop.memory["run"] = "r2"
    turn = _restarted(loop)
    approvals.gate(loop, turn, W, consuming)
    given = json.loads((tmp_path / approvals.LEDGER_FILE).read_text())
    assert given == [["r", "w@1#1"], ["r", "w@2#2"], ["r2", "w@1#3"]]
    approvals.gate(loop, turn, W, consuming)  # held now: no request, nothing consumed checked


def test_before_resume_the_service_keeps_the_approval_with_its_mark(tmp_path: Path) -> None:
    """The restart finds the approval at the service, so its gate never asks: the same as after-resume-started."""
    loop = _loop(tmp_path)
    service = replace(POLICY, approval_consume="before-resume", approval_storage="service")
    approvals.gate(loop, loop.memory["turns"][0], W, service)
    approvals.gate(loop, _restarted(loop), W, service)
    assert loop.passed == ["approval requested w", "approved w"]
