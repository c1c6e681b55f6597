"""What a swept process reads of its faults: lost replies, failed attempts, wrong answers, the call-ID mode."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.probe.faults_env import (
    ARGS_MAY_CHANGE,
    CALL_IDS,
    CHANGED_ARGS,
    FAIL_ATTEMPT,
    LOSE_REPLY,
    TIMED_OUT,
    WRONG_ANSWER,
    args_chance,
    args_may_change,
    changed_args,
    failed_attempts,
    fresh_ids,
    is_args_chance,
    lost_replies,
    lost_reply,
    retry_call,
    retry_chance,
    timed_out,
    timeout_chance,
    timeout_detail,
    wrong_answers,
)


def test_the_process_reads_its_lost_replies() -> None:
    assert lost_reply({LOSE_REPLY: "2:comment_a"}) == ("comment_a", 2)
    assert lost_reply({LOSE_REPLY: "3:create_a\n1:comment_a"}) == ("comment_a", 1)  # the earliest
    assert lost_reply({}) is None
    assert lost_replies({LOSE_REPLY: "1:create_a\n2:create_a\n"}) == {("create_a", 1), ("create_a", 2)}
    with pytest.raises(ValueError, match="expected K:CALL"):
        lost_reply({LOSE_REPLY: "create_a"})
    with pytest.raises(ValueError, match="expected K:CALL"):
        lost_replies({LOSE_REPLY: "2:"})


def test_the_process_reads_its_failed_attempts_apart_from_its_lost_replies() -> None:
    environ = {FAIL_ATTEMPT: "2:create_a\n1:comment_a", LOSE_REPLY: "1:create_a"}
    assert failed_attempts(environ) == {("create_a", 2), ("comment_a", 1)}
    assert lost_replies(environ) == {("create_a", 1)}
    with pytest.raises(ValueError, match=f"{FAIL_ATTEMPT}='create_a': expected K:CALL"):
        failed_attempts({FAIL_ATTEMPT: "create_a"})


def test_a_retry_chance_names_its_layer_and_its_call() -> None:
    """The pause's call is read back; a person's question or a bare word is no retry chance."""
    pause = retry_chance("call x3 on error", "create_a")
    assert pause == "retry call x3 on error at create_a"
    assert retry_call(pause) == "create_a"
    assert retry_call("person answers create_a") is None
    assert retry_call("retry") is None


def test_a_timeout_chance_tells_the_new_attempt_its_layer_scope_and_instance() -> None:
    """The pause's words after its prefix are the new attempt's CRASHSWEEP_TIMED_OUT, read back whole."""
    pause = timeout_chance(1, "turn", "3f2a/turn 2")
    assert pause == "timeout 1 turn 3f2a/turn 2"
    detail = timeout_detail(pause)
    assert detail == "1 turn 3f2a/turn 2"
    assert timed_out({TIMED_OUT: detail}) == (1, "turn", "3f2a/turn 2")
    assert timeout_detail("retry call x3 on error at create_a") is None
    assert timed_out({}) is None
    with pytest.raises(ValueError, match="expected INDEX SCOPE WHERE"):
        timed_out({TIMED_OUT: "turn"})


def test_the_process_reads_its_wrong_answers() -> None:
    assert wrong_answers({WRONG_ANSWER: "1\n3"}) == {1, 3}
    assert wrong_answers({}) == set()
    with pytest.raises(ValueError, match="the number of a pause"):
        wrong_answers({WRONG_ANSWER: "first"})


def test_the_process_reads_whether_and_where_arguments_change() -> None:
    """changed-args: the sweep-wide flag, and the pauses (re-asked replies arriving) that strike."""
    assert args_may_change({ARGS_MAY_CHANGE: "1"})
    assert not args_may_change({})
    assert changed_args({CHANGED_ARGS: "2\n5"}) == {2, 5}
    with pytest.raises(ValueError, match="the number of a pause"):
        changed_args({CHANGED_ARGS: "reply 1"})
    assert args_chance(2) == "reply 2 asked again"
    assert is_args_chance(args_chance(12))
    assert not is_args_chance("reply 2 arrived")


def test_the_process_reads_its_call_id_mode() -> None:
    assert fresh_ids({CALL_IDS: "fresh"})
    assert not fresh_ids({CALL_IDS: "stable"})
    assert not fresh_ids({})


def test_the_names_are_the_ones_the_sweep_documents() -> None:
    """spec/FAULTS.md and docs/ARCHITECTURE.md name these variables; the nemesis writes them from here."""
    assert (LOSE_REPLY, FAIL_ATTEMPT, TIMED_OUT, WRONG_ANSWER, CALL_IDS, ARGS_MAY_CHANGE, CHANGED_ARGS) == (
        "CRASHSWEEP_LOSE_REPLY",
        "CRASHSWEEP_FAIL_ATTEMPT",
        "CRASHSWEEP_TIMED_OUT",
        "CRASHSWEEP_WRONG_ANSWER",
        "CRASHSWEEP_CALL_IDS",
        "CRASHSWEEP_ARGS_MAY_CHANGE",
        "CRASHSWEEP_CHANGED_ARGS",
    )
