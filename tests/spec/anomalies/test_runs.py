"""stuck-run, replay-divergence and unknown-never-settled over hand-written histories."""

from __future__ import annotations

import pytest

from crashsweep.spec.anomalies import find, runs
from tests.spec.anomalies.fixtures import FIXTURES, attempt, effect, history, named, status, summary

NAMES = named("stuck-run", "replay-divergence", "unknown-never-settled")


@pytest.mark.parametrize("name", NAMES)
def test_find_gives_exactly_the_anomalies_counted_by_hand(name: str) -> None:
    found, expected = FIXTURES[name]
    assert summary(find(found)) == expected


def test_the_words() -> None:
    (stuck,) = runs.stuck_run(FIXTURES["stuck-run"][0])
    assert stuck.why == "the run can never finish: waits for a tool result"  # can-finish's words
    (diverged,) = runs.replay_divergence(FIXTURES["replay-divergence"][0])
    assert diverged.why == (
        "a replay of the run found other steps than its history: nondeterminism: activity create_issue where timer was"
    )
    (keyed,) = runs.unknown_never_settled(FIXTURES["unknown-never-settled"][0])
    assert keyed.why == (
        "an attempt of a has an unknown outcome and the run ended (finished): "
        "no later attempt with its key k1 completed"
    )
    (keyless,) = runs.unknown_never_settled(FIXTURES["unknown-never-settled-info"][0])
    assert keyless.why.endswith("(stuck): it sent no idempotency key a retry could settle it with")


def test_a_retry_settles_only_when_it_began_later_and_completed() -> None:
    h = history(
        attempt("a", "ok", 1, key="k1"),  # 1: completed, but began before the unknown one
        attempt("a", "invoke", key="k1"),  # 2: never completed
        attempt("a", "invoke", 2, key="k1"),  # 3: began later, but never completed either
        status("finished"),
        expected=("a",),
    )
    # 2 and 3 are each unknown and unsettled, each with the finishing event (4).
    assert summary(runs.unknown_never_settled(h)) == (
        ("unknown-never-settled", False, "a", (2, 4)),
        ("unknown-never-settled", False, "a", (3, 4)),
    )


def test_a_later_retry_that_failed_settles_it_too() -> None:
    h = history(
        attempt("a", "invoke", key="k1"),
        attempt("a", "invoke", 1, key="k1"),
        attempt("a", "fail", 1, key="k1"),
        status("stuck", "x"),
        expected=("a",),
    )
    assert [a.name for a in find(h)] == ["stuck-run"]


def test_the_status_must_be_of_its_run_or_of_none() -> None:
    h = history(attempt("a", "invoke"), status("finished", run="r2"), effect("a", "#1"), expected=("a",))
    assert runs.unknown_never_settled(h) == ()
    sweep = history(attempt("a", "invoke"), status("finished", run=""), effect("a", "#1"), expected=("a",))
    assert summary(runs.unknown_never_settled(sweep)) == (("unknown-never-settled", False, "a", (1, 2)),)


def test_without_the_status_fact_no_run_is_stuck() -> None:
    h = history(status("stuck", "x"), facts=frozenset({"effects", "transcript", "approvals"}))
    assert find(h) == ()
