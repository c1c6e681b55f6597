"""Tests of crashsweep.realsweep.reference.approvals: where an approval is kept, what it matches."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from crashsweep.realsweep.reference import approvals
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
    assert turn["approved"] == ["w"]
    approvals.gate(loop, turn, W, POLICY)  # held now: nothing asked
    assert len(loop.passed) == 3


def test_bound_to_nothing_any_approval_passes_another_gated_call(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.gate(loop, turn, W, replace(POLICY, approval_binding="none"))
    approvals.gate(loop, turn, V, replace(POLICY, approval_binding="none"))
    assert loop.passed.count("approved v") == 0  # v went through on w's approval
    approvals.gate(loop, turn, V, POLICY)
    assert "approved v" in loop.passed  # bound to the call, v needs its own


def test_the_service_keeps_the_approval_in_a_file_of_the_world_at_once(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    approvals.gate(loop, turn, W, replace(POLICY, approval_storage="service"))
    assert "approved" not in turn
    assert json.loads((tmp_path / approvals.SERVICE_FILE).read_text()) == {"r": ["w"]}
    assert "save approval w" not in loop.passed
    loop.memory["turns"] = [{"index": 1, "results": {}, "marked": [], "complete": False}]  # a restart
    approvals.gate(loop, loop.memory["turns"][0], W, replace(POLICY, approval_storage="service"))
    assert loop.passed.count("approved w") == 1  # found at the service


def test_memory_approvals_are_not_loaded() -> None:
    memory = {"run": "r", "turns": [{"index": 1, "approved": ["w"]}]}
    approvals.forget(memory)
    assert memory["turns"] == [{"index": 1}]


def test_a_node_resume_forgets_the_earlier_calls_of_the_node_before_the_approved_point(tmp_path: Path) -> None:
    """CONVERSATIONS.md 3: at the approval's arrival, a's result and marker go; the save holds neither."""
    loop = _loop(tmp_path)
    turn = loop.memory["turns"][0]
    with pytest.raises(approvals.Replan):
        approvals.gate(loop, turn, W, replace(POLICY, resume_granularity="node"))
    assert (turn["results"], turn["marked"]) == ({}, [])
