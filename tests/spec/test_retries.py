"""Retry layers as values (spec/retries.py): a design file's `retries`, checked, and which layer catches."""

from __future__ import annotations

import pytest

from crashsweep.spec.retries import (
    FRONTIER_STACKS,
    Layer,
    RetryError,
    catching,
    check_stack,
    failed_for_good,
    instance,
    lost_attempt,
    parse_stack,
    spent_entry,
    stack_label,
    timed_out,
    timed_out_call,
)

CALL3 = Layer("call", "error", 3)
RUN2 = Layer("run", "error", 2)
FAILURE = frozenset({"error", "unknown-outcome"})


def test_a_stack_reads_innermost_first_and_writes_back_the_same() -> None:
    stack = parse_stack(
        [{"scope": "call", "on": "error", "attempts": 3}, {"scope": "run", "on": "timeout", "attempts": "unbounded"}]
    )
    assert stack == (CALL3, Layer("run", "timeout", None))
    assert parse_stack([layer.as_mapping() for layer in stack]) == stack
    assert stack_label(stack) == "call x3 on error > run xN on timeout"
    assert stack_label(()) == "no retries"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"scope": "call"}, "retries: expected a list of tables"),
        (["call"], "retries[1]: expected a table"),
        ([{"scope": "step", "on": "error", "attempts": 2}], "retries[1].scope: expected one of 'call', 'turn', 'run'"),
        ([{"scope": "call", "on": "crash", "attempts": 2}], "retries[1].on: expected one of"),
        ([{"scope": "call", "on": "error", "attempts": 1}], "retries[1].attempts: expected an integer from 2"),
        ([{"scope": "call", "on": "error", "attempts": True}], "retries[1].attempts: expected an integer from 2"),
        ([{"scope": "call", "on": "error", "attempts": 2, "delay": 5}], "retries[1]: unknown key 'delay'"),
        (
            [{"scope": "run", "on": "error", "attempts": 2}, {"scope": "call", "on": "error", "attempts": 2}],
            "'call' cannot come after 'run'",
        ),
        ([{"scope": "call", "on": "error", "attempts": 2}] * 5, "at most 4 layers"),
        ([{"scope": "call", "on": "error", "retry_policy": "default"}], 'retries[1].retry_policy: expected "unset"'),
        (
            [{"scope": "call", "on": "error", "retry_policy": "unset", "attempts": 3}],
            'retries[1]: give attempts or retry_policy = "unset", not both',
        ),
        (
            [{"scope": "call", "on": "error", "attempts": 3, "schedule_to_close": "10s"}],
            'retries[1].schedule_to_close: expected "one-attempt"',
        ),
        (
            [{"scope": "run", "on": "error", "attempts": 3, "schedule_to_close": "one-attempt"}],
            "retries[1].schedule_to_close: an activity's option",
        ),
        (
            [{"scope": "call", "on": "timeout", "attempts": 3, "schedule_to_close": "one-attempt"}],
            "retries[1].schedule_to_close: an activity's option",
        ),
    ],
)
def test_a_bad_stack_is_refused_naming_the_layer_and_key(value: object, message: str) -> None:
    with pytest.raises(RetryError) as caught:
        parse_stack(value)
    assert message in str(caught.value)


def test_scopes_may_repeat_but_never_narrow() -> None:
    check_stack((CALL3, Layer("call", "timeout", 2), Layer("turn", "error", 2), RUN2))
    with pytest.raises(RetryError):
        check_stack((Layer("turn", "error", 2), CALL3))


def test_an_instance_is_the_call_the_turn_or_the_scenario() -> None:
    assert instance("call", "run-1", "create_a", 1) == "run-1/create_a"
    assert instance("turn", "run-2", "create_a", 2) == "run-2/turn 2"
    assert instance("run", "run-3", None, None) == "run"
    assert instance("call", "run-1", None, 1) is None
    assert instance("turn", "run-1", "create_a", None) is None


def test_the_innermost_layer_with_an_attempt_left_catches() -> None:
    """call x3 takes two failures of create_a, then the run layer the third, then nobody."""
    stack = (CALL3, RUN2)
    struck: list[str] = []
    caught = []
    for _ in range(4):
        found = catching(stack, FAILURE, struck, "run-1", "create_a", 1)
        caught.append(None if found is None else found[1].scope)
        if found is not None:
            struck.append(spent_entry(found[0], found[2]))
    assert caught == ["call", "call", "run", None]
    # Another call's instance is new to the call layer; the run layer is spent for the scenario.
    found = catching(stack, FAILURE, struck, "run-1", "create_b", 1)
    assert found is not None
    assert found[1] == CALL3


def test_a_layer_catches_only_its_trigger_and_unbounded_never_runs_out() -> None:
    stack = (Layer("call", "timeout", None),)
    assert catching(stack, FAILURE, [], "run-1", "create_a", 1) is None
    struck = [spent_entry(0, "run-1/create_a")] * 50
    assert catching(stack, frozenset({"timeout"}), struck, "run-1", "create_a", 1) is not None


def test_the_frontier_stacks_are_the_issue_s_and_valid() -> None:
    """None, call x3, turn x2, run x2, and two nested (RETRIES.md 1.5)."""
    labels = [stack_label(stack) for stack in FRONTIER_STACKS]
    assert labels == [
        "no retries",
        "call x3 on error",
        "turn x2 on error",
        "run x2 on error",
        "call x3 on error > turn x2 on error",
        "call x3 on error > run x2 on error",
    ]
    for stack in FRONTIER_STACKS:
        check_stack(stack)


def test_budget_keys_read_and_write_back_and_name_themselves() -> None:
    """RETRIES.md 1.8: unset is unbounded by another name; a one-attempt budget is a call layer's."""
    stack = parse_stack([{"scope": "call", "on": "error", "retry_policy": "unset", "schedule_to_close": "one-attempt"}])
    assert stack == (Layer("call", "error", None, unset=True, one_attempt=True),)
    assert parse_stack([layer.as_mapping() for layer in stack]) == stack
    assert stack_label(stack) == "call x(unset) on error, 1-attempt budget"
    assert catching(stack, FAILURE, (), "run-1", "a", 1) is not None  # a quick error is still retried


def test_a_death_at_a_call_s_site_under_a_budget_times_its_attempt_out() -> None:
    budget = (Layer("call", "error", 3, one_attempt=True),)
    assert timed_out(budget, "tracker accepted create_a", "run-1") == "attempt timed out run-1 create_a"
    assert timed_out(budget, "tool returned search", "run-1") == "attempt timed out run-1 search"
    assert timed_out(budget, "result create_a: renamed", "run-1") is None  # the attempt has answered
    assert timed_out((CALL3,), "tracker accepted create_a", "run-1") is None  # time left: the server retries
    assert failed_for_good(("attempt timed out run-1 create_a",), "run-1")
    assert not failed_for_good(("attempt timed out run-1 create_a",), "run-2")
    assert lost_attempt("attempt timed out run-1 create_a") == ("run-1", "create_a")
    assert lost_attempt("retry 0 run-1/create_a") is None
    assert timed_out_call(("approval 1 run-1 c@1", "attempt timed out run-1 search"), "run-1") == "search"
