"""no-loss over a History: once a run finished, every expected write has an effect."""

from crashsweep.spec.history import FINISHED, Event, History
from crashsweep.spec.invariants import no_loss

DONE = Event("", 0, 9, "ok", "run_status", status=FINISHED)
A = Event("r", 0, 1, "ok", "effect", call="a", effect_id="#1")


def test_a_finished_run_without_an_expected_effect_loses_it() -> None:
    found = no_loss.check(History((A, DONE), ("a", "b")))
    assert found is not None
    assert found.why == "b has no record though the run is done"
    assert found.evidence == (DONE,)


def test_an_unfinished_run_loses_nothing_yet() -> None:
    assert no_loss.check(History((A,), ("a", "b"))) is None
    assert not no_loss.finished(History((A,), ("a", "b")))
    assert no_loss.finished(History((A, DONE), ("a",)))
