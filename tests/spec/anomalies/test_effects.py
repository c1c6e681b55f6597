"""duplicate-effect, lost-effect, effect-after-failure and key-reused over hand-written histories."""

from __future__ import annotations

import pytest

from crashsweep.spec.anomalies import effects, find
from tests.spec.anomalies.fixtures import FIXTURES, attempt, effect, history, named, status, summary

NAMES = named("duplicate-effect", "lost-effect", "effect-after-failure", "key-reused")


@pytest.mark.parametrize("name", NAMES)
def test_find_gives_exactly_the_anomalies_counted_by_hand(name: str) -> None:
    found, expected = FIXTURES[name]
    assert summary(find(found)) == expected


def test_a_duplicate_names_every_record_of_its_call_and_shows_the_first_two() -> None:
    h = history(effect("a", "#1"), effect("a", "#2"), effect("a", "#5"), expected=("a",))
    (found,) = effects.duplicate_effect(h)
    assert found.why == "a has 3 records: #1 and #2 and #5"  # no-duplicate's words
    assert [e.seq for e in found.witness] == [1, 2]
    (unsure,) = effects.duplicate_effect(FIXTURES["duplicate-effect-possible"][0])
    assert unsure.why == "a has a record #1 and 1 of unknown outcome"


def test_two_effects_of_unknown_outcome_are_no_duplicate() -> None:
    h = history(effect("a", type_="info"), effect("a", type_="info"), expected=("a",))
    assert effects.duplicate_effect(h) == ()


def test_a_lost_write_in_no_losss_words_and_the_last_finishing_event() -> None:
    h = history(status("finished"), effect("a", "#1"), status("finished"), expected=("a", "b"))
    (found,) = effects.lost_effect(h)
    assert found.why == "b has no record though the run is done"
    assert [e.seq for e in found.witness] == [3]  # b is never named: the finish alone, the last one
    (unsure,) = effects.lost_effect(FIXTURES["lost-effect-possible"][0])
    assert unsure.why == "a has no record though the run is done (an effect or attempt of it has an unknown outcome)"


def test_an_expected_write_with_an_effect_of_unknown_outcome_is_possibly_lost() -> None:
    h = history(effect("a", type_="info"), status("finished"), expected=("a",))
    assert summary(effects.lost_effect(h)) == (("lost-effect", False, "a", (1, 2)),)


def test_an_effect_after_failure_says_what_and_when() -> None:
    (found,) = effects.effect_after_failure(FIXTURES["effect-after-failure"][0])
    assert found.why == "a (#1) was applied after the run was failed"
    h = history(status("cancelled"), effect("", "#4"))
    (unjoined,) = effects.effect_after_failure(h)  # about the run, not a call: found with no call
    assert (unjoined.call, unjoined.why) == ("", "an effect with no call (#4) was applied after the run was cancelled")
    (unsure,) = effects.effect_after_failure(FIXTURES["effect-after-failure-possible"][0])
    assert unsure.why == "a (event 2) may have been applied after the run was cancelled"


def test_a_reused_key_is_one_anomaly_a_key_in_words_that_name_the_conflict() -> None:
    (calls,) = effects.key_reused(FIXTURES["key-reused-calls"][0])
    assert calls.why == "key k1 was sent by a and by b"
    (args,) = effects.key_reused(FIXTURES["key-reused-arguments"][0])
    assert args.why == "key k1 was sent with arguments v1 and v2 (a)"
    h = history(
        attempt("a", "ok", key="k"),
        attempt("b", "ok", key="k"),  # 2: the first conflict, with 1
        attempt("c", "ok", key="k"),  # the same key: no second anomaly
        attempt("c", "ok", key="j"),
        expected=("a", "b", "c"),
    )
    assert summary(effects.key_reused(h)) == (("key-reused", True, "a", (1, 2)),)


def test_a_key_conflict_is_with_the_earliest_event_that_shows_it() -> None:
    h = history(
        attempt("a", "ok", key="k"),  # no digest: agrees with every other
        attempt("a", "ok", key="k", args_digest="v1"),
        attempt("a", "ok", key="k", args_digest="v1"),
        attempt("a", "ok", key="k", args_digest="v2"),  # 4: conflicts with 2 first
        attempt("", "ok", key="k", args_digest="v1"),  # unjoined: its digest still counts, but it comes later
        expected=("a",),
    )
    assert summary(effects.key_reused(h)) == (("key-reused", True, "a", (2, 4)),)
