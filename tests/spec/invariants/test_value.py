"""An invariant's verdict on a History: not decided without the facts it needs, else its check and witness."""

from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import no_duplicate


def test_a_history_without_effects_leaves_no_duplicate_not_decided() -> None:
    blind = History((), ("a",), (), frozenset({"status"}), {"effects": "the receiver keeps no records"})
    verdict = no_duplicate.INVARIANT.judge(blind)
    assert (verdict.decided, verdict.holds, verdict.why) == (False, False, "the receiver keeps no records")


def test_a_decided_verdict_carries_its_violation_and_witness() -> None:
    twice = History(tuple(Event("r", 0, n, "ok", "effect", call="a", effect_id=f"#{n}") for n in (1, 2)), ("a",))
    verdict = no_duplicate.INVARIANT.judge(twice)
    assert verdict.decided
    assert verdict.witnessed
    assert verdict.violation is not None
    assert not verdict.holds
