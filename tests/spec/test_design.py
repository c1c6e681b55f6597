"""Tests of crashsweep.spec.design: the shared pieces of every loop body."""

from __future__ import annotations

from crashsweep.spec.design import end_turn, needs_model, next_call, reply_save
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.ops import CompleteTurn, Point
from crashsweep.spec.world import Snapshot, Turn


def test_needs_model_before_first_turn_and_after_a_complete_one() -> None:
    """The model is asked with no turn, or when the last turn is complete."""
    assert needs_model(Snapshot("r"))
    assert needs_model(Snapshot("r", turns=(Turn(1, complete=True),)))
    assert not needs_model(Snapshot("r", turns=(Turn(1),)))


def test_next_call_skips_calls_with_results() -> None:
    """The next call is the first of the last turn without a result."""
    memory = Snapshot("r", turns=(Turn(1, results=(("create_a", "#1"),)),))
    call = next_call(memory, TRIAGE)
    assert call is not None
    assert call.id == "create_b"
    done = Snapshot("r", turns=(Turn(1, results=(("create_a", "#1"), ("create_b", "#2"))),))
    assert next_call(done, TRIAGE) is None


def test_reply_save_and_turn_end_are_numbered() -> None:
    """The reply save names the turn it will become; the turn save names the last turn."""
    memory = Snapshot("r", turns=(Turn(1, complete=True),))
    assert reply_save(memory)[1] == Point("reply 2: tmp written")
    ops = end_turn(Snapshot("r", turns=(Turn(1),)))
    assert ops[0] == CompleteTurn()
    assert ops[2] == Point("turn 1: tmp written")
