"""approved-exactly over a History: each gated effect carries a matching approval, each approval used once."""

from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import approved_exactly


def effect(call: str, n: int, approval: str = "", version: str = "v1") -> Event:
    return Event("r", 0, n, "ok", "effect", call=call, effect_id=f"#{n}", approval=approval, args_digest=version)


def test_unapproved_misapproved_and_twice_redeemed_effects_break_it_in_order() -> None:
    history = History(
        (
            effect("a", 1, "a@1#1"),
            effect("b", 2),
            effect("a", 3, "a@1#1"),
            effect("a", 4, "a@1#2", "v2"),
            effect("c", 5),  # not gated
        ),
        ("a", "b", "c"),
        ("a", "b"),
    )
    found = approved_exactly.check(history)
    assert found is not None
    assert found.why.split("; ") == [
        "b@1 was applied with no approval that matches it",
        "approval #1 was redeemed twice",
        "a@2 was applied under approval #2, given for a with arguments v1",
    ]
    assert [e.effect_id for e in found.evidence] == ["#2", "#3", "#4"]


def test_a_matching_approval_each_holds_and_an_ungated_job_is_trivially_witnessed() -> None:
    history = History((effect("a", 1, "a@1#1"), effect("b", 2, "b@1#2")), ("a", "b"), ("a", "b"))
    assert approved_exactly.check(history) is None
    assert approved_exactly.seen(history)
    assert approved_exactly.seen(History((), ("a",)))
    assert not approved_exactly.seen(History((), ("a",), ("a",)))
