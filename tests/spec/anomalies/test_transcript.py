"""orphaned-call, result-without-call and duplicate-result over hand-written conversations."""

from __future__ import annotations

import pytest

from crashsweep.spec.anomalies import find, transcript
from tests.spec.anomalies.fixtures import FIXTURES, ask, asked, event, history, named, refused, saved, status, summary

NAMES = named("orphaned-call", "result-without-call", "duplicate-result")


@pytest.mark.parametrize("name", NAMES)
def test_find_gives_exactly_the_anomalies_counted_by_hand(name: str) -> None:
    found, expected = FIXTURES[name]
    assert summary(find(found)) == expected


def test_the_words_are_well_formed_transcripts() -> None:
    (refusal,) = transcript.orphaned_call(FIXTURES["orphaned-call"][0])
    assert refusal.why == "the model was sent a tool call without its result (tool_use without tool_result)"
    (alone,) = transcript.orphaned_call(history(ask(), asked("a"), ask(), expected=("a",)))
    assert alone.why == "the model was sent a tool call without its result (id-a has no result)"
    (result,) = transcript.result_without_call(FIXTURES["result-without-call"][0])
    assert result.why == "a result of id-a was saved with no call of it before"
    (twice,) = transcript.duplicate_result(FIXTURES["duplicate-result"][0])
    assert twice.why == "id-a has two results in the conversation"
    (unsure,) = transcript.orphaned_call(FIXTURES["orphaned-call-possible"][0])
    assert unsure.why == "id-a has no result and the run did not finish: a resumed run would send it to the model"


def test_an_orphan_is_found_once_at_the_first_model_call_it_was_sent_and_each_orphan_apart() -> None:
    h = history(ask(), asked("a"), asked("b"), ask(), ask(), status("stuck", "refused"), expected=("a", "b"))
    # a (2) and b (3) each sent by the model call 4 (not again by 5); 5 is no refusal of 4.
    assert summary(transcript.orphaned_call(h)) == (
        ("orphaned-call", True, "a", (2, 4)),
        ("orphaned-call", True, "b", (3, 4)),
    )


def test_a_refusal_is_the_next_model_call_only() -> None:
    h = history(ask(), asked("a"), ask(), ask(), refused("no"), expected=("a",))
    assert summary(transcript.orphaned_call(h)) == (("orphaned-call", True, "a", (2, 3)),)


def test_a_call_is_named_by_its_model_id_and_unjoined_ones_are_in_none() -> None:
    retried = event("tool_call", "invoke", "a", call_id="id-a2")  # a's second model ID: another tool call
    h = history(ask(), asked("a"), saved("a"), retried, event("tool_call", "invoke"), ask(), expected=("a",))
    assert summary(transcript.orphaned_call(h)) == (("orphaned-call", True, "a", (4, 6)),)


def test_a_result_saved_before_its_call_is_no_result_of_it() -> None:
    h = history(ask(), saved("a"), asked("a"), ask(), expected=("a",))
    assert summary(find(h)) == (("orphaned-call", True, "a", (3, 4)), ("result-without-call", True, "a", (2,)))


def test_three_results_are_one_anomaly_that_counts_them() -> None:
    h = history(ask(), asked("a"), saved("a"), saved("a"), saved("a"), expected=("a",))
    (found,) = transcript.duplicate_result(h)
    assert (found.why, [e.seq for e in found.witness]) == ("id-a has 3 results in the conversation", [3, 4])


def test_without_the_transcript_nothing_is_found() -> None:
    h = history(ask(), asked("a"), ask(), expected=("a",), facts=frozenset({"effects", "status", "approvals"}))
    assert find(h) == ()


def test_only_the_runs_last_conversation_can_end_with_a_possible_orphan() -> None:
    h = history(ask(), asked("a"), ask(1), asked("b", 1), expected=("a", "b"))
    # incarnation 0 ends with a, but the restart (incarnation 1) replaced it; b ends the last one.
    assert summary(find(h)) == (("orphaned-call", False, "b", (4,)),)
    other = history(ask(), asked("a"), event("model_call", "invoke", run="r2"), expected=("a",))
    assert summary(find(other)) == (("orphaned-call", False, "a", (2,)),)  # r2's conversation is not r1's
