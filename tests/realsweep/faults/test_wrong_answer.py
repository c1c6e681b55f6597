"""wrong-answer for real: its chances at each question to a person, the environment, its check."""

from __future__ import annotations

from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.wrong_answer import WRONG_ANSWER
from crashsweep.realsweep.probe import faults_env
from tests.realsweep.faults.points import PAUSES, POINTS


def test_a_wrong_answer_may_strike_at_each_question_named_by_its_number() -> None:
    """FAULTS.md 4: each question is a chance (a pause, no crash point), in the order of the work."""
    found = WRONG_ANSWER.chances(POINTS, PAUSES, (0, 0))
    assert found == [
        Fault(WRONG_ANSWER, 1, "person answers create_a", 1),
        Fault(WRONG_ANSWER, 5, "person answers create_a", 2),
    ]
    assert [f.env() for f in found] == [{faults_env.WRONG_ANSWER: "1"}, {faults_env.WRONG_ANSWER: "2"}]
    assert found[1].label == "wrong-answer at person answers create_a"
    assert (found[1].position, found[1].code, found[1].counter) == ((5, 2), "wrong-answer-5", "fault.wrong-answer")


def test_chances_come_after_the_last_fault_and_only_at_a_person() -> None:
    """A question at (1, 1) is not after itself; a pause that is no person's question is no chance."""
    assert [f.occurrence for f in WRONG_ANSWER.chances(POINTS, PAUSES, (1, 1))] == [2]
    assert [f.occurrence for f in WRONG_ANSWER.chances(POINTS, PAUSES, (1, 0))] == [1, 2]
    assert WRONG_ANSWER.chances(POINTS, ((1, "model waits"),), (0, 0)) == []
    assert WRONG_ANSWER.chances(POINTS, (), (0, 0)) == []


def test_several_wrong_answers_are_one_line_each() -> None:
    both = (Fault(WRONG_ANSWER, 1, "person answers create_a", 1), Fault(WRONG_ANSWER, 5, "person answers create_a", 2))
    assert WRONG_ANSWER.env(both) == {faults_env.WRONG_ANSWER: "1\n2"}


def test_it_struck_when_the_process_paused_at_the_same_question() -> None:
    wrong = Fault(WRONG_ANSWER, 3, "person answers create_b", 1)
    assert wrong.struck((), ((3, "person answers create_b"),))
    assert not wrong.struck((), ((1, "person answers create_b"),))
    assert not wrong.struck((), ())
