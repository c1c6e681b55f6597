"""changed-args for real: its chances at each re-asked reply's arrival, the environment, its check."""

from __future__ import annotations

from crashsweep.realsweep.faults.changed_args import CHANGED_ARGS
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.probe import faults_env

POINTS = ("start: renamed", "reply 1 arrived", "reply 1: renamed", "reply 2 arrived")
PAUSES = ((2, "reply 1 asked again"), (2, "person answers refund"), (4, "reply 2 asked again"))


def test_each_reply_asked_again_is_a_chance_named_by_its_number() -> None:
    """CONVERSATIONS.md 2.3: the arrival of a reply handed out before (a pause, no crash point)."""
    found = CHANGED_ARGS.chances(POINTS, PAUSES, (0, 0))
    assert found == [Fault(CHANGED_ARGS, 2, "reply 1 asked again", 1), Fault(CHANGED_ARGS, 4, "reply 2 asked again", 3)]
    assert [f.env() for f in found] == [{faults_env.CHANGED_ARGS: "1"}, {faults_env.CHANGED_ARGS: "3"}]
    assert found[0].label == "changed-args at reply 1 asked again"
    assert (found[1].position, found[1].counter) == ((4, 3), "fault.changed-args")


def test_chances_come_after_the_last_fault() -> None:
    assert [f.occurrence for f in CHANGED_ARGS.chances(POINTS, PAUSES, (2, 1))] == [3]
    assert CHANGED_ARGS.chances(POINTS, ((1, "person answers refund"),), (0, 0)) == []


def test_every_process_of_a_sweep_with_it_counts_its_replies_and_struck_ones_are_one_line_each() -> None:
    """The scripted model counts hand-outs only where the fault may strike: other worlds stay as they were."""
    assert Nemesis(("changed-args",)).env() == {faults_env.ARGS_MAY_CHANGE: "1"}
    assert faults_env.ARGS_MAY_CHANGE not in Nemesis(("lost-reply",)).env()
    both = (Fault(CHANGED_ARGS, 2, "reply 1 asked again", 1), Fault(CHANGED_ARGS, 4, "reply 2 asked again", 3))
    assert CHANGED_ARGS.env(both) == {faults_env.CHANGED_ARGS: "1\n3"}


def test_it_struck_when_the_process_paused_at_the_same_arrival() -> None:
    changed = Fault(CHANGED_ARGS, 2, "reply 1 asked again", 1)
    assert changed.struck((), ((2, "reply 1 asked again"),))
    assert not changed.struck((), ((3, "reply 1 asked again"),))
