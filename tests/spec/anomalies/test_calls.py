"""The reading every rule shares: each call's events, the writes, the attempts and their outcomes, certainty."""

from __future__ import annotations

import pytest

from crashsweep.spec.anomalies.calls import UNKNOWN, Calls, label, statuses_of
from tests.spec.anomalies.fixtures import attempt, effect, grant, history, status


def test_an_outcome_completes_the_earliest_open_attempt_of_its_call_in_its_incarnation() -> None:
    h = history(
        attempt("a", "invoke", key="k1"),  # 1: completed by 3 (a's first open attempt)
        attempt("b", "invoke"),  # 2: completed by 6
        attempt("a", "ok"),  # 3
        attempt("a", "invoke", key="k2"),  # 4: another incarnation's outcome (5) does not complete it
        attempt("a", "fail", 1),  # 5: nothing of a open in incarnation 1: an attempt of its own
        attempt("b", "info"),  # 6
        attempt("", "invoke"),  # 7: unjoined: an attempt of no call, never completed
    )
    calls = Calls.of(h)
    seen = [(a.call, [e.seq for e in a.events], a.outcome, a.key) for a in calls.attempts]
    assert seen == [
        ("a", [1, 3], "ok", "k1"),
        ("b", [2, 6], UNKNOWN, ""),
        ("a", [4], UNKNOWN, "k2"),
        ("a", [5], "fail", ""),
        ("", [7], UNKNOWN, ""),
    ]
    assert [a.last.seq for a in calls.attempts_of("a")] == [3, 4, 5]
    assert calls.attempts_of("") == ()  # no rule about calls reads an unjoined attempt
    assert not calls.certain(h.events[6:])


def test_a_call_is_a_write_when_expected_gated_applied_or_sharing_such_a_calls_tool() -> None:
    calls = Calls.of(
        history(
            attempt("read", "ok", tool="get_issue"),
            attempt("b", "ok", tool="create_issue"),  # a's tool: a write
            grant("g", "g@1#1"),
            effect("c", "#1"),  # an effect: a write
            effect("", "#2", tool="comment"),  # an effect with no call names no write, nor its tool
            attempt("d", "ok", tool="comment"),
            attempt("a", "invoke", tool="create_issue"),
            expected=("a",),
            gated=("g",),
        )
    )
    assert calls.writes == ("a", "g", "c", "b")


def test_a_history_that_names_no_write_counts_every_call_as_one() -> None:
    h = history(attempt("read", "ok", tool="get_issue"), effect("", "#1"), attempt("x", "ok", tool="get_issue"))
    assert Calls.of(h).writes == ("read", "x")  # the effect has no call: it names no write
    assert Calls.of(history(attempt("read", "ok"), effect("x", "#1"))).writes == ("x",)


def test_each_calls_events_leave_out_the_unjoined() -> None:
    calls = Calls.of(history(effect("a", "#1"), effect("", "#2"), attempt("a", "ok"), effect("a", type_="info")))
    assert list(calls.by_call) == ["a"]
    assert [e.seq for e in calls.events("a", "effect")] == [1, 4]
    assert [e.seq for e in calls.events("a", "effect", "ok")] == [1]


def test_a_witness_is_certain_without_info_or_an_attempt_of_unknown_outcome() -> None:
    h = history(attempt("a", "invoke"), attempt("b", "invoke"), attempt("b", "ok"), effect("a", type_="info"))
    calls = Calls.of(h)
    first, second, returned, unsure = h.events
    assert calls.certain((second, returned))
    assert not calls.certain((first,))  # never completed
    assert not calls.certain((returned, unsure))  # an info event


@pytest.mark.parametrize("definite", [True, False])
def test_an_anomaly_found_has_its_witness_in_history_order_and_its_first_events_run(definite: bool) -> None:
    h = history(status("failed", run="r2"), effect("a", "#1", run="r2"), attempt("a", "invoke", run="r3"))
    calls = Calls.of(h)
    found = calls.found("x", "a", "why", (h.events[1], h.events[0]), definite)
    assert [e.seq for e in found.witness] == [1, 2]
    assert (found.run, found.definite) == ("r2", definite)
    assert not calls.found("x", "a", "why", (h.events[2],)).definite  # its attempt's outcome is unknown
    later = calls.found("y", "a", "why", (h.events[2],))
    assert [a.name for a in calls.ordered((later, found))] == ["x", "y"]


def test_the_words_name_an_effect_by_its_id_else_its_place_and_statuses_of_run_blank_are_everyones() -> None:
    h = history(effect("a", "#7"), effect("a"), status("stuck", run=""), status("finished", run="r2"))
    assert [label(e) for e in h.events[:2]] == ["#7", "event 2"]
    assert [e.seq for e in statuses_of("r1", h.events)] == [3]
    assert [e.seq for e in statuses_of("r2", h.events)] == [3, 4]
