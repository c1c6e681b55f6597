"""can-finish over one History: it does not end stuck."""

from crashsweep.spec.history import FINISHED, STUCK, Event, History
from crashsweep.spec.invariants import can_finish


def test_a_stuck_run_can_never_finish() -> None:
    stuck = Event("", 0, 1, "fail", "run_status", status=STUCK, detail="the provider refuses")
    found = can_finish.check(History((stuck,)))
    assert found is not None
    assert found.why == "the run can never finish: the provider refuses"
    assert can_finish.check(History((Event("", 0, 1, "ok", "run_status", status=FINISHED),))) is None
