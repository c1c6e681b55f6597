"""unapproved-effect, approval-other-arguments, approval-redeemed-twice and approval-not-resumed."""

from __future__ import annotations

import pytest

from crashsweep.spec.anomalies import approvals, find
from tests.spec.anomalies.fixtures import FIXTURES, ask, effect, event, grant, history, named, status, summary

NAMES = named("unapproved-effect", "approval-")


@pytest.mark.parametrize("name", NAMES)
def test_find_gives_exactly_the_anomalies_counted_by_hand(name: str) -> None:
    found, expected = FIXTURES[name]
    assert summary(find(found)) == expected


def test_the_words_are_approved_exactlys() -> None:
    (unapproved,) = approvals.unapproved_effect(FIXTURES["unapproved-effect"][0])
    assert unapproved.why == "a@1 was applied with no approval that matches it"
    (other,) = approvals.approval_other_arguments(FIXTURES["approval-other-arguments"][0])
    assert other.why == "a@2 was applied under approval #1, given for a with arguments v1"
    (malformed,) = approvals.approval_other_arguments(FIXTURES["approval-other-arguments-malformed"][0])
    assert malformed.why == "b@1 was applied under approval yes, which names no call and version"
    (twice,) = approvals.approval_redeemed_twice(FIXTURES["approval-redeemed-twice"][0])
    assert twice.why == "approval #1 was redeemed twice"


def test_an_approval_carried_three_times_is_one_anomaly() -> None:
    h = history(*(effect("a", f"#{n}", approval="a@1#1") for n in (1, 2, 3)), expected=("a",), gated=("a",))
    (found,) = approvals.approval_redeemed_twice(h)
    assert (found.why, [e.seq for e in found.witness]) == ("approval #1 was redeemed 3 times", [1, 2])


def test_the_grant_an_effect_names_is_found_by_its_number() -> None:
    h = history(
        grant("a", "a@1#1"),
        grant("a", "a@2#2", "v2"),
        effect("a", "#1", approval="a@2#2", args_digest="v3"),
        expected=("a",),
        gated=("a",),
    )
    assert summary(approvals.approval_other_arguments(h)) == (("approval-other-arguments", True, "a", (2, 3)),)


def test_an_effect_with_no_arguments_version_is_of_version_1() -> None:
    h = history(effect("a", "#1", approval="a@1#1"), expected=("a",), gated=("a",))
    assert find(h) == ()


def test_the_words_of_an_approval_never_used() -> None:
    (ended,) = approvals.approval_not_resumed(FIXTURES["approval-not-resumed"][0])
    assert ended.why == "approval a@1#1 of a was never used: the run ended (stuck)"
    (_, unsure) = find(FIXTURES["approval-not-resumed-possible"][0])
    assert unsure.why == "approval a@1#1 of a was not used before the record ends"


def test_a_grant_is_resumed_by_any_event_of_its_run_and_not_by_anothers() -> None:
    going_on = history(grant("a", "a@1#1"), ask(), status("stuck", "x"), expected=("a",), gated=("a",))
    assert summary(approvals.approval_not_resumed(going_on)) == ()
    elsewhere = history(
        grant("a", "a@1#1"), event("model_call", "invoke", run="r2"), status("finished", run=""), gated=("a",)
    )
    # r2's model call is not r1 going on; the sweep's status (run "") ends every run.
    assert summary(approvals.approval_not_resumed(elsewhere)) == (("approval-not-resumed", True, "a", (1, 3)),)


def test_a_grant_that_is_no_approval_given_is_never_unresumed() -> None:
    refused = event("approval_grant", "fail", "a", approval="a@1#1")
    assert approvals.approval_not_resumed(history(refused, status("stuck", "x"), gated=("a",))) == ()


def test_without_the_approvals_fact_no_effect_is_judged() -> None:
    facts = frozenset({"effects", "status", "transcript"})
    h = history(effect("a", "#1", approval="b@1#1"), effect("a", "#2", approval="b@1#1"), gated=("a",), facts=facts)
    assert [a.name for a in find(h)] == ["duplicate-effect"]
