"""The nemesis: the kinds a sweep enables, where they may strike together, what it refuses, a process's environment."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.faults import registry
from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis, NemesisError, process_env, restart_fault
from crashsweep.realsweep.faults.wrong_answer import WRONG_ANSWER
from crashsweep.realsweep.probe.faults_env import CALL_IDS, FAIL_ATTEMPT, LOSE_REPLY, retry_chance
from crashsweep.realsweep.probe.faults_env import WRONG_ANSWER as WRONG_ANSWER_ENV
from tests.realsweep.faults.points import PAUSES, POINTS


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
    with pytest.raises(
        NemesisError,
        match=r"^unknown fault 'flood' \(known: lost-reply, key-expiry, wrong-answer, power-loss, pause, "
        r"changed-args, trim-context\)$",
    ):
        Nemesis(("flood",)).check(1)


def test_a_model_kind_the_real_sweep_does_not_carry_out_is_refused_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "MODEL_ONLY", {"flood": "no real tracker floods"})
    monkeypatch.setattr("crashsweep.realsweep.faults.nemesis.MODEL_ONLY", registry.MODEL_ONLY)
    refusal = r"^the real sweep does not carry out fault 'flood': no real tracker floods$"
    with pytest.raises(NemesisError, match=refusal):
        Nemesis(("flood",)).check(1)


def test_the_call_id_mode_is_every_process_s_environment() -> None:
    assert Nemesis(fresh_ids=True).env() == {CALL_IDS: "fresh"}
    assert Nemesis().env() == {}


def test_chances_after_a_fault_come_later_in_the_process() -> None:
    """A process already suffering a fault at `after` is offered only what comes after it.

    Points 2, 4, 6 are `tracker accepted`; questions come after points 1 and 5. After the
    lost reply at point 2: the lost replies at 4 and 6, the question after 5. After the first
    question (position (1, 1)): everything from point 2 on, and the second question.
    """
    both = Nemesis(("lost-reply", "wrong-answer"))
    after_reply = both.chances(POINTS, PAUSES, after=(2, 0))
    assert [(f.name, f.index) for f in after_reply] == [("lost-reply", 4), ("wrong-answer", 5), ("lost-reply", 6)]
    after_question = both.chances(POINTS, PAUSES, after=(1, 1))
    assert [(f.name, f.index) for f in after_question] == [
        ("lost-reply", 2),
        ("lost-reply", 4),
        ("wrong-answer", 5),
        ("lost-reply", 6),
    ]
    assert both.chances(POINTS, PAUSES, after=(6, 0)) == []


def test_at_one_point_the_kinds_come_in_the_registry_s_order_whatever_the_order_asked() -> None:
    """lost-reply, then power-loss, then pause at the same point: the order the sweep submits them in."""
    points = ("start: tmp written", "tracker accepted create_a")
    found = Nemesis(("pause", "power-loss", "lost-reply")).chances(points)
    assert [(f.index, f.name) for f in found] == [
        (1, "power-loss"),
        (1, "pause"),
        (2, "lost-reply"),
        (2, "power-loss"),
        (2, "pause"),
    ]
    assert Nemesis(("pause", "lost-reply")).kinds == (LOST_REPLY, registry.BY_NAME["pause"])


def test_one_process_may_suffer_several_faults() -> None:
    reply, question, reply_again = (
        Fault(LOST_REPLY, 2, "tracker accepted create_a", 1),
        Fault(WRONG_ANSWER, 3, "person answers create_a", 1),
        Fault(LOST_REPLY, 4, "tracker accepted create_a", 2),
    )
    env = process_env((reply, question, reply_again))
    assert env == {LOSE_REPLY: "1:create_a\n2:create_a", WRONG_ANSWER_ENV: "1"}
    assert process_env(()) == {}


def test_key_expiry_strikes_between_processes_and_no_process_is_told() -> None:
    """It is the sweep's to carry out on the tracker (dedup/graph.py): a restart's move, no in-process chance."""
    expiry = restart_fault()
    assert (expiry.label, expiry.counter) == ("key-expiry at restart", "fault.key-expiry")
    assert Nemesis(("key-expiry",)).expires_keys
    assert not Nemesis(("lost-reply",)).expires_keys
    assert Nemesis(("key-expiry",)).chances(POINTS, PAUSES) == []


def test_a_lost_reply_needs_a_design_that_takes_a_tool_error() -> None:
    assert Nemesis(("lost-reply", "pause")).fails_tool_calls
    assert not Nemesis(("key-expiry", "wrong-answer", "power-loss", "pause")).fails_tool_calls


def test_a_pause_and_a_power_cut_are_swept_scenario_by_scenario_at_depth_one() -> None:
    """Not yet moves of the merging sweep: every scenario, depth 1 only; an unknown name changes nothing."""
    assert Nemesis(("pause",)).every_scenario
    assert Nemesis(("power-loss", "flood")).every_scenario
    assert not Nemesis(("lost-reply", "flood")).every_scenario
    Nemesis(("pause",)).check(1)
    with pytest.raises(NemesisError, match="the real sweep pauses a process in scenarios of one move: use depth 1"):
        Nemesis(("pause",)).check(2)
    with pytest.raises(NemesisError, match="cuts the power and pauses a process"):
        Nemesis(("power-loss", "pause")).check(3)
    with pytest.raises(NemesisError, match="pauses a process and cuts the power"):
        Nemesis(("pause", "power-loss")).check(3)  # in the order asked


def test_a_program_s_retry_layers_open_the_move_retry_beside_its_faults() -> None:
    """`retries` adds the move `retry` (not a fault of `--faults`): offered where the program marked a catch.

    With a lost reply enabled too, both may strike at a marked `tracker accepted` point, each
    told in its own variable, and a design must take a tool error under either.
    """
    marked = ((1, retry_chance("call x3 on error", "create_a")),)
    assert Nemesis(("lost-reply",)).chances(POINTS, marked) == LOST_REPLY.chances(POINTS, marked, (0, 0))
    both = Nemesis(("lost-reply",), retries=True)
    assert [(f.name, f.index) for f in both.chances(POINTS, marked)] == [
        ("lost-reply", 2),
        ("retry", 2),
        ("lost-reply", 4),
        ("lost-reply", 6),
    ]
    assert Nemesis(retries=True).fails_tool_calls
    assert not Nemesis().fails_tool_calls
    moves = both.chances(POINTS, marked)[:2]
    assert process_env(moves) == {LOSE_REPLY: "1:create_a", FAIL_ATTEMPT: "1:create_a"}


def test_retry_moves_beyond_one_move_need_merged_worlds() -> None:
    Nemesis(retries=True).check(1, dedup=False)
    Nemesis(retries=True).check(2)
    with pytest.raises(NemesisError, match="use depth 1, not 2"):
        Nemesis(retries=True).check(2, dedup=False)


def test_timeout_layers_are_swept_scenario_by_scenario_at_depth_one() -> None:
    """A timeout's new attempt beside the old one is a pause's scenario: not yet a move of the merging sweep."""
    timing = Nemesis(retries=True, timeouts=True)
    assert timing.every_scenario
    assert not Nemesis(retries=True).every_scenario
    timing.check(1)
    with pytest.raises(
        NemesisError, match=r"^the real sweep times out an attempt in scenarios of one move: use depth 1"
    ):
        timing.check(2)
