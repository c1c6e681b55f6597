"""Tests of crashsweep.spec.ops: what a stuck process's reason says."""

from __future__ import annotations

from crashsweep.spec.ops import REFUSED, refused


def test_a_refusal_is_told_from_the_other_ways_to_be_stuck() -> None:
    """The provider's refusal (CONVERSATIONS.md 1, 7) sent a request; a consumed approval (5) sent none."""
    assert refused(f"{REFUSED}create_a has no result")
    assert not refused("the approval of comment_a (v1) was consumed before the resumed run kept it")
    assert not refused(None)
