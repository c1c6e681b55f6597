"""lost-reply for real: its chances at each pass of `tracker accepted`, the process's environment, its check."""

from __future__ import annotations

from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.probe.faults_env import LOSE_REPLY
from tests.realsweep.faults.points import PAUSES, POINTS


def test_a_lost_reply_may_strike_at_each_pass_of_tracker_accepted() -> None:
    """Three passes of a `tracker accepted` point (FAULTS.md 2): three chances, each named by its pass."""
    found = LOST_REPLY.chances(POINTS, PAUSES, (0, 0))
    assert found == [
        Fault(LOST_REPLY, 2, "tracker accepted create_a", 1),
        Fault(LOST_REPLY, 4, "tracker accepted create_a", 2),
        Fault(LOST_REPLY, 6, "tracker accepted comment_a", 1),
    ]
    assert [f.env() for f in found] == [
        {LOSE_REPLY: "1:create_a"},
        {LOSE_REPLY: "2:create_a"},
        {LOSE_REPLY: "1:comment_a"},
    ]
    assert found[0].label == "lost-reply at tracker accepted create_a"
    assert found[1].label == "lost-reply at tracker accepted create_a#2"
    assert (found[2].code, found[2].counter, found[2].position) == ("lost-reply-6", "fault.lost-reply", (6, 0))


def test_chances_come_after_the_last_fault() -> None:
    """A pass at or before `after` already lost its reply; a question at point 2 comes after point 2's pass."""
    assert [f.index for f in LOST_REPLY.chances(POINTS, (), (2, 0))] == [4, 6]
    assert [f.index for f in LOST_REPLY.chances(POINTS, (), (2, 1))] == [4, 6]
    assert LOST_REPLY.chances(POINTS, (), (6, 0)) == []


def test_several_lost_replies_are_one_line_each() -> None:
    both = (Fault(LOST_REPLY, 2, "tracker accepted create_a", 1), Fault(LOST_REPLY, 4, "tracker accepted create_a", 2))
    assert LOST_REPLY.env(both) == {LOSE_REPLY: "1:create_a\n2:create_a"}
    assert LOST_REPLY.env(()) == {}


def test_it_struck_when_the_tool_failed_right_after_the_point() -> None:
    lost = Fault(LOST_REPLY, 2, "tracker accepted create_a", 1)
    assert lost.struck(("start", "tracker accepted create_a", "tool failed create_a"), ())
    assert not lost.struck(("start", "tracker accepted create_a", "tool returned create_a"), ())
    assert not lost.struck(("start",), ())


def test_the_program_sees_a_failed_tool_call_told_in_its_environment() -> None:
    """A lost reply reaches the program as a tool error; it is a move of the merging sweep, told in the environment."""
    assert (LOST_REPLY.fails_tool_calls, LOST_REPLY.in_process) == (True, True)
    assert (LOST_REPLY.every_scenario, LOST_REPLY.at_restart) == (False, False)


def test_no_chance_where_the_tool_fails_anyway() -> None:
    """A job's `fails_after_accept`: its first request's answer is the error, so no reply is there to lose.

    In a process that suffered no fault, `tool failed` after a pass comes from the job alone
    (FAULTS.md 2: "not one that fails_after_accept already turned into a tool error").
    """
    failing = (
        "tracker accepted create_a",
        "tool failed create_a",
        "tracker accepted create_a",
        "tool returned create_a",
    )
    assert LOST_REPLY.chances(failing, (), (0, 0)) == [Fault(LOST_REPLY, 3, "tracker accepted create_a", 2)]
