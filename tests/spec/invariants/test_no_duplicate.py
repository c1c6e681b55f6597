"""no-duplicate over a History: two effects of one call, shown by those effects."""

from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import no_duplicate


def effect(call: str, n: int) -> Event:
    return Event("r", 0, n, "ok", "effect", call=call, effect_id=f"#{n}")


def test_two_effects_of_one_call_break_it_and_are_its_evidence() -> None:
    history = History((effect("a", 1), effect("b", 2), effect("a", 3)), ("a", "b"))
    found = no_duplicate.check(history)
    assert found is not None
    assert found.why == "a has 2 records: #1 and #3"
    assert found.evidence == (history.events[0], history.events[2])


def test_one_effect_each_holds_and_is_witnessed() -> None:
    history = History((effect("a", 1), effect("b", 2)), ("a", "b"))
    assert no_duplicate.check(history) is None
    assert no_duplicate.seen(history)
    assert not no_duplicate.seen(History((), ("a",)))
