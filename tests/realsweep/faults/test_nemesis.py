"""The nemesis: where each fault may strike in a process, and how a process is told to suffer it."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.faults.nemesis import (
    CALL_IDS,
    KINDS,
    LOSE_REPLY,
    WRONG_ANSWER,
    Fault,
    Nemesis,
    NemesisError,
    fresh_ids,
    lost_replies,
    lost_reply,
    process_env,
    restart_fault,
    wrong_answers,
)
from crashsweep.spec.faults import FAULTS

POINTS = (
    "start: tmp written",
    "tracker accepted create_a",
    "tool returned create_a",
    "tracker accepted create_a",
    "tool returned create_a",
    "tracker accepted comment_a",
)


def test_a_lost_reply_may_strike_at_each_pass_of_tracker_accepted() -> None:
    """Three passes of a `tracker accepted` point (FAULTS.md 2): three chances, each named by its pass."""
    found = Nemesis(("lost-reply",)).chances(POINTS)
    assert found == [
        Fault("lost-reply", 2, "tracker accepted create_a", 1),
        Fault("lost-reply", 4, "tracker accepted create_a", 2),
        Fault("lost-reply", 6, "tracker accepted comment_a", 1),
    ]
    assert [f.env() for f in found] == [
        {LOSE_REPLY: "1:create_a"},
        {LOSE_REPLY: "2:create_a"},
        {LOSE_REPLY: "1:comment_a"},
    ]
    assert found[1].label == "lost-reply at tracker accepted create_a#2"
    assert found[2].code == "lost-reply-6"


@pytest.mark.parametrize("kinds", [(), ("key-expiry",), ("wrong-answer",), ("key-expiry", "wrong-answer")])
def test_key_expiry_and_wrong_answer_have_no_chance_in_one_process(kinds: tuple[str, ...]) -> None:
    """A restart (key-expiry) and a person's answer (wrong-answer) never come before the first move."""
    assert Nemesis(kinds).chances(POINTS) == []


def test_faults_are_refused_beyond_one_move_without_merged_worlds_and_unknown_kinds_always() -> None:
    """A sweep of every scenario injects faults at depth 1 only; the merging sweep at any depth."""
    Nemesis(("lost-reply",)).check(1, dedup=False)
    Nemesis((), fresh_ids=True).check(3, dedup=False)  # fresh IDs are not a move
    Nemesis(("lost-reply", "key-expiry", "wrong-answer")).check(3)
    with pytest.raises(NemesisError, match="use depth 1, not 2"):
        Nemesis(("lost-reply",)).check(2, dedup=False)
    with pytest.raises(NemesisError, match="unknown fault 'flood'"):
        Nemesis(("flood",)).check(1)


def test_the_process_reads_its_faults_from_the_environment() -> None:
    assert Nemesis(fresh_ids=True).env() == {CALL_IDS: "fresh"}
    assert Nemesis().env() == {}
    assert lost_reply({LOSE_REPLY: "2:comment_a"}) == ("comment_a", 2)
    assert lost_reply({}) is None
    assert fresh_ids({CALL_IDS: "fresh"})
    assert not fresh_ids({CALL_IDS: "stable"})
    assert not fresh_ids({})
    with pytest.raises(ValueError, match="expected K:CALL"):
        lost_reply({LOSE_REPLY: "create_a"})


def test_a_power_cut_may_strike_where_something_is_not_durable() -> None:
    """spec/FAULTS.md 6.3: under fsync none every point from the first save's write on; its process dies there."""
    points = ("lock: tmp written", "lock: renamed", "start: tmp written", "start: renamed", "reply 1 arrived")
    found = Nemesis(("power-loss",)).chances(points)
    assert [f.point for f in found] == ["start: tmp written", "start: renamed", "reply 1 arrived"]
    assert found[0].crash_at == "1:start: tmp written"
    assert found[0].env() == {}
    assert found[2].label == "power-loss at reply 1 arrived"


PAUSES = ((1, "person answers create_a"), (5, "person answers create_a"))
"""Two questions to a person: after the first point, and after the fifth."""


def test_a_wrong_answer_may_strike_at_each_question_named_by_its_number() -> None:
    """FAULTS.md 4: each question is a chance (a pause, no crash point), in the order of the work."""
    found = Nemesis(("wrong-answer",)).chances(POINTS, PAUSES)
    assert found == [
        Fault("wrong-answer", 1, "person answers create_a", 1),
        Fault("wrong-answer", 5, "person answers create_a", 2),
    ]
    assert [f.env() for f in found] == [{WRONG_ANSWER: "1"}, {WRONG_ANSWER: "2"}]
    assert found[1].label == "wrong-answer at person answers create_a"
    assert found[1].position == (5, 2)


def test_chances_after_a_fault_come_later_in_the_process() -> None:
    """A process already suffering a fault at `after` is offered only what comes after it.

    Points 2, 4, 6 are `tracker accepted`; questions come after points 1 and 5. After the
    lost reply at point 2: the lost replies at 4 and 6, the question after 5. After the first
    question (position (1, 1)): everything from point 2 on, and the second question.
    """
    both = Nemesis(("lost-reply", "wrong-answer"))
    after_reply = both.chances(POINTS, PAUSES, after=(2, 0))
    assert [(f.kind, f.index) for f in after_reply] == [("lost-reply", 4), ("wrong-answer", 5), ("lost-reply", 6)]
    after_question = both.chances(POINTS, PAUSES, after=(1, 1))
    assert [(f.kind, f.index) for f in after_question] == [
        ("lost-reply", 2),
        ("lost-reply", 4),
        ("wrong-answer", 5),
        ("lost-reply", 6),
    ]
    assert both.chances(POINTS, PAUSES, after=(6, 0)) == []


def test_one_process_may_suffer_several_faults() -> None:
    reply, question, reply_again = (
        Fault("lost-reply", 2, "tracker accepted create_a", 1),
        Fault("wrong-answer", 3, "person answers create_a", 1),
        Fault("lost-reply", 4, "tracker accepted create_a", 2),
    )
    env = process_env((reply, question, reply_again))
    assert env == {LOSE_REPLY: "1:create_a\n2:create_a", WRONG_ANSWER: "1"}
    assert lost_replies(env) == {("create_a", 1), ("create_a", 2)}
    assert wrong_answers(env) == {1}
    assert wrong_answers({}) == set()
    with pytest.raises(ValueError, match="the number of a pause"):
        wrong_answers({WRONG_ANSWER: "first"})


def test_key_expiry_strikes_between_processes_and_no_process_is_told() -> None:
    """It is the sweep's to carry out on the tracker (graph.py): a restart's move, no in-process chance."""
    expiry = restart_fault()
    assert (expiry.label, expiry.counter) == ("key-expiry at restart", "fault.key-expiry")
    assert Nemesis(("key-expiry",)).expires_keys
    assert not Nemesis(("lost-reply",)).expires_keys
    assert Nemesis(("key-expiry",)).chances(POINTS, PAUSES) == []


def test_a_pause_may_strike_at_every_crash_point_and_wakes_at_a_point_of_the_restart() -> None:
    """FAULTS.md 7: a chance at each crash point (not at a person's pause); waking is named by the restart's point."""
    found = Nemesis(("pause",)).chances(POINTS, PAUSES)
    assert [(f.index, f.point, f.occurrence) for f in found] == [
        (i, point, POINTS[:i].count(point)) for i, point in enumerate(POINTS, start=1)
    ]
    fourth = found[3]
    assert fourth.env() == {}  # the process is told nothing: the sweep holds it
    assert fourth.label == "pause at tracker accepted create_a#2, wake at p2 stopped"
    woken = fourth.waking_at(4, POINTS)
    assert (woken.wake, woken.wake_at) == (4, "tracker accepted create_a#2")
    assert woken.label == "pause at tracker accepted create_a#2, wake at tracker accepted create_a#2"
    assert (fourth.code, woken.code) == ("pause-4-0", "pause-4-4")


def test_a_pause_is_swept_scenario_by_scenario_at_depth_one() -> None:
    """Like a power cut, a pause is no move of the merging sweep yet: every scenario, depth 1 only."""
    assert Nemesis(("pause",)).every_scenario
    assert not Nemesis(("lost-reply",)).every_scenario
    Nemesis(("pause",)).check(1)
    with pytest.raises(NemesisError, match="the real sweep pauses a process in scenarios of one move: use depth 1"):
        Nemesis(("pause",)).check(2)
    with pytest.raises(NemesisError, match="cuts the power and pauses a process"):
        Nemesis(("power-loss", "pause")).check(3)


def test_the_real_sweep_carries_out_every_fault_of_the_registry() -> None:
    """Every kind of spec/faults.py is one the nemesis knows, in the registry's order.

    And a sweep of each at depth 1 passes the nemesis's check (no kind is the model's alone).
    """
    assert tuple(FAULTS) == KINDS
    for kind in FAULTS:
        Nemesis((kind,)).check(1)  # raises NemesisError for a kind it cannot carry out
