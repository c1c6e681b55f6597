"""The nemesis: where each fault may strike in a process, and how a process is told to suffer it."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.nemesis import CALL_IDS, LOSE_REPLY, Fault, Nemesis, NemesisError, fresh_ids, lost_reply

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


def test_faults_are_refused_beyond_one_move_and_unknown_kinds_always() -> None:
    Nemesis(("lost-reply",)).check(1)
    Nemesis((), fresh_ids=True).check(3)  # fresh IDs are not a move
    with pytest.raises(NemesisError, match="use depth 1, not 2"):
        Nemesis(("lost-reply",)).check(2)
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
