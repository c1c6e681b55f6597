"""The move `retry` for real: its chances where the program marks a layer's catch, its environment, its check."""

from __future__ import annotations

from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.retry import RETRY
from crashsweep.realsweep.probe.faults_env import FAIL_ATTEMPT, retry_chance
from crashsweep.spec.retries import MOVE_COUNTER
from tests.realsweep.faults.points import POINTS

CALL_X3 = "call x3 on error"


def test_a_retry_strikes_only_where_the_program_marked_a_layer_s_catch() -> None:
    """POINTS passes `tracker accepted` three times; the process marked a chance before the 1st and the 3rd.

    A pause passed after k points comes right before point k + 1: the move is at that point,
    named by its pass, as a lost reply there would be.
    """
    pauses = (
        (1, retry_chance(CALL_X3, "create_a")),
        (2, "person answers create_a"),
        (5, retry_chance("run x2 on error", "comment_a")),
    )
    found = RETRY.chances(POINTS, pauses, (0, 0))
    assert found == [Fault(RETRY, 2, "tracker accepted create_a", 1), Fault(RETRY, 6, "tracker accepted comment_a", 1)]
    assert [f.env() for f in found] == [{FAIL_ATTEMPT: "1:create_a"}, {FAIL_ATTEMPT: "1:comment_a"}]
    assert found[0].label == "retry at tracker accepted create_a"
    assert (found[1].code, found[1].counter, found[1].position) == ("retry-6", MOVE_COUNTER, (6, 0))


def test_a_mark_not_followed_by_its_write_s_accept_is_no_chance() -> None:
    """The write of another call, or none at all (the process stopped before it was applied)."""
    assert RETRY.chances(POINTS, ((1, retry_chance(CALL_X3, "comment_a")),), (0, 0)) == []
    assert RETRY.chances(POINTS, ((6, retry_chance(CALL_X3, "create_b")),), (0, 0)) == []
    assert RETRY.chances(POINTS, ((0, "person answers create_a"),), (0, 0)) == []


def test_no_retry_move_where_the_tool_fails_anyway_or_before_the_last_fault() -> None:
    """The job's own failure needs no move (RETRIES.md 1.4); a pass at or before `after` is done."""
    failing = (
        "tracker accepted create_a",
        "tool failed create_a",
        "tracker accepted create_a",
        "tool returned create_a",
    )
    pauses = ((0, retry_chance(CALL_X3, "create_a")), (2, retry_chance(CALL_X3, "create_a")))
    assert RETRY.chances(failing, pauses, (0, 0)) == [Fault(RETRY, 3, "tracker accepted create_a", 2)]
    assert RETRY.chances(failing, pauses, (3, 0)) == []


def test_it_is_carried_out_as_a_failed_attempt_and_seen_as_a_tool_failure() -> None:
    """Its own variable, so a lost reply and a retry in one process do not overwrite each other."""
    move = Fault(RETRY, 2, "tracker accepted create_a", 1)
    assert move.struck(("start", "tracker accepted create_a", "tool failed create_a"), ())
    assert not move.struck(("start", "tracker accepted create_a", "tool returned create_a"), ())
    lost = Fault(LOST_REPLY, 2, "tracker accepted create_a", 1)
    assert set(move.env()) != set(lost.env())
    assert RETRY.env(()) == {}
    assert (RETRY.fails_tool_calls, RETRY.in_process, RETRY.every_scenario) == (True, True, False)
    assert move != lost
