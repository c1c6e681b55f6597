"""The anomaly oracle (tests/audit_oracle.py) on small hand-made histories: one with each anomaly, one near miss.

Each history is written event by event; `history` numbers them from seq 1 in the order given,
so the witness seqs below are counted by hand from the lines of each test. Every test compares
the whole list the oracle finds, so a rule that fires where it should not fails it too.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from crashsweep.spec.history import Event, History
from tests.audit_oracle import anomalies, attempts, uncertain, writes


def ev(f: str, type_: str, call: str = "", run: str = "r1", incarnation: int = 0, **fields: str) -> Event:
    """An event of `run` (seq set by `history`)."""
    return Event(run, incarnation, 0, type_, f, call=call, **fields)  # type: ignore[arg-type]


def history(*events: Event, expected: tuple[str, ...] = (), gated: tuple[str, ...] = ()) -> History:
    """The events numbered 1, 2, ... in the order given."""
    return History(tuple(replace(e, seq=n) for n, e in enumerate(events, 1)), expected, gated)


FINISHED = ev("run_status", "ok", status="finished")


def test_duplicate_effect_two_oks_definite_and_ok_with_info_possible() -> None:
    h = history(
        ev("effect", "ok", "a"),
        ev("effect", "ok", "a"),
        ev("effect", "info", "b"),
        ev("effect", "ok", "b"),
        ev("effect", "ok", "c", run="r2"),
        ev("effect", "ok", "c"),
    )
    # a: oks 1 and 2; b: info 3 and ok 4 (possible: an info in the witness); c: one call in
    # two runs, its first effect in r2
    assert anomalies(h) == [
        ("duplicate-effect", False, "r1", "b", (3, 4)),
        ("duplicate-effect", True, "r1", "a", (1, 2)),
        ("duplicate-effect", True, "r2", "c", (5, 6)),
    ]


def test_no_duplicate_effect_for_a_fail_unjoined_effects_or_infos_alone() -> None:
    h = history(
        ev("effect", "ok", "a"),
        ev("effect", "fail", "a"),
        ev("effect", "ok", ""),
        ev("effect", "ok", ""),
        ev("effect", "info", "b"),
        ev("effect", "info", "b"),
    )
    assert anomalies(h) == []


def test_lost_effect_expected_never_named_and_granted_write() -> None:
    h = history(
        ev("effect", "ok", "a"),
        ev("tool_call", "invoke", "b"),
        ev("approval_grant", "ok", "g", approval="g@1#1"),
        ev("tool_call", "invoke", "g"),
        FINISHED,
        expected=("a", "b", "c"),
        gated=("g",),
    )
    # b: last event 2; c: never named (witness the finish alone); g: gated, granted, last event 4
    assert anomalies(h) == [
        ("lost-effect", True, "r1", "b", (2, 5)),
        ("lost-effect", True, "r1", "c", (5,)),
        ("lost-effect", True, "r1", "g", (4, 5)),
    ]


def test_lost_effect_is_possible_with_an_attempt_of_unknown_outcome() -> None:
    h = history(ev("tool_run", "invoke", "a"), FINISHED, expected=("a",))
    # the invoke (1) never completed: the loss is possible, and the attempt never settled
    assert anomalies(h) == [
        ("lost-effect", False, "r1", "a", (1, 2)),
        ("unknown-never-settled", False, "r1", "a", (1, 2)),
    ]


def test_no_lost_effect_for_a_returned_call_that_is_no_write() -> None:
    h = history(ev("effect", "ok", "a", tool="t"), ev("tool_run", "ok", "b", tool="u"), FINISHED, expected=("a",))
    # b returned ok with no effect, but the history names writes (a) and b is none of them (tool u)
    assert anomalies(h) == []


def test_orphaned_call_sent_with_its_refusal_and_left_at_the_end() -> None:
    h = history(
        ev("model_call", "invoke"),
        ev("tool_call", "invoke", "a"),
        ev("model_call", "invoke"),
        ev("model_call", "fail", detail="no result for a"),
        ev("tool_call", "invoke", "b", incarnation=1),
    )
    # a was sent at 3 and refused at 4; b ends incarnation 1's conversation in a run not finished
    assert anomalies(h) == [("orphaned-call", False, "r1", "b", (5,)), ("orphaned-call", True, "r1", "a", (2, 3, 4))]


def test_no_orphaned_call_left_in_a_conversation_a_restart_followed() -> None:
    h = history(ev("tool_call", "invoke", "a"), ev("model_call", "ok", incarnation=1))
    # incarnation 0 ends with a's call, but the run went on in incarnation 1 (its last conversation)
    assert anomalies(h) == []


def test_no_orphaned_call_when_answered_or_the_run_finished() -> None:
    h = history(
        ev("tool_call", "invoke", "a"),
        ev("result_saved", "ok", "a"),
        ev("model_call", "invoke"),
        ev("tool_call", "invoke", "b", incarnation=1),
        FINISHED,
    )
    assert anomalies(h) == []


def test_result_without_call_in_its_own_conversation() -> None:
    h = history(ev("tool_call", "invoke", "a"), ev("result_saved", "ok", "a", incarnation=1), FINISHED)
    # the call is in incarnation 0's conversation, the result (2) in incarnation 1's
    assert anomalies(h) == [("result-without-call", True, "r1", "a", (2,))]


def test_no_result_without_call_when_its_call_id_was_asked() -> None:
    h = history(ev("tool_call", "invoke", "a", call_id="x"), ev("result_saved", "ok", "a", call_id="x"), FINISHED)
    assert anomalies(h) == []


def test_duplicate_result() -> None:
    h = history(ev("tool_call", "invoke", "a"), ev("result_saved", "ok", "a"), ev("result_saved", "ok", "a"), FINISHED)
    assert anomalies(h) == [("duplicate-result", True, "r1", "a", (2, 3))]


def test_no_duplicate_result_across_conversations() -> None:
    h = history(
        ev("tool_call", "invoke", "a"),
        ev("result_saved", "ok", "a"),
        ev("tool_call", "invoke", "a", incarnation=1),
        ev("result_saved", "ok", "a", incarnation=1),
        FINISHED,
    )
    assert anomalies(h) == []


def test_unapproved_effect() -> None:
    h = history(ev("effect", "ok", "a"), gated=("a",))
    assert anomalies(h) == [("unapproved-effect", True, "r1", "a", (1,))]


def test_no_unapproved_effect_for_an_info_effect_or_an_ungated_call() -> None:
    h = history(ev("effect", "info", "a"), ev("effect", "ok", "b"), gated=("a",))
    assert anomalies(h) == []


def test_approval_other_arguments_names_the_grant() -> None:
    h = history(
        ev("approval_grant", "ok", "a", args_digest="v1", approval="a@1#1"),
        ev("effect", "ok", "a", args_digest="v2", approval="a@1#1"),
        gated=("a",),
    )
    # the effect (2) was sent with v2 under the approval of v1, given at 1
    assert anomalies(h) == [("approval-other-arguments", True, "r1", "a", (1, 2))]


def test_no_approval_other_arguments_for_v1_when_no_digest() -> None:
    h = history(ev("effect", "ok", "a", approval="a@1#1"), ev("effect", "ok", "b", approval="b@2#2", args_digest="v2"))
    assert anomalies(replace(h, gated=("a", "b"))) == []


def test_approval_redeemed_twice() -> None:
    h = history(ev("effect", "ok", "a", approval="a@1#1"), ev("effect", "ok", "a", approval="a@1#1"), gated=("a",))
    # two records of a (a duplicate too), both carrying approval #1
    assert anomalies(h) == [
        ("approval-redeemed-twice", True, "r1", "a", (1, 2)),
        ("duplicate-effect", True, "r1", "a", (1, 2)),
    ]


def test_no_approval_redeemed_twice_for_two_numbers() -> None:
    h = history(ev("effect", "ok", "a", approval="a@1#1"), ev("effect", "ok", "b", approval="b@1#2"), gated=("a", "b"))
    assert anomalies(h) == []


def test_stuck_run() -> None:
    h = history(ev("model_call", "fail", detail="refused"), ev("run_status", "fail", run="", status="stuck"))
    assert anomalies(h) == [("stuck-run", True, "", "", (2,))]


def test_no_stuck_run_for_a_failed_run() -> None:
    assert anomalies(history(ev("model_call", "fail"), ev("run_status", "fail", status="failed"))) == []


def test_effect_after_failure_ok_definite_info_possible() -> None:
    h = history(ev("run_status", "fail", status="failed"), ev("effect", "ok", "a"), ev("effect", "info", "b"))
    assert anomalies(h) == [
        ("effect-after-failure", False, "r1", "b", (1, 3)),
        ("effect-after-failure", True, "r1", "a", (1, 2)),
    ]


def test_no_effect_after_another_runs_failure_or_before_its_own() -> None:
    h = history(
        ev("effect", "ok", "a"),
        ev("run_status", "fail", run="r2", status="failed"),
        ev("effect", "ok", "b"),
        ev("run_status", "fail", status="cancelled"),
    )
    assert anomalies(h) == []


def test_key_reused_for_other_arguments_and_another_call() -> None:
    h = history(
        ev("tool_run", "ok", "a", key="k", args_digest="v1"),
        ev("tool_run", "ok", "a", key="k", args_digest="v2"),
        ev("effect", "ok", "b", key="k2"),
        ev("effect", "ok", "c", key="k2"),
    )
    assert anomalies(h) == [("key-reused", True, "r1", "a", (1, 2)), ("key-reused", True, "r1", "b", (3, 4))]


def test_no_key_reused_by_one_call_with_a_digest_left_out() -> None:
    h = history(
        ev("tool_run", "invoke", "a", key="k", args_digest="v1"),
        ev("tool_run", "ok", "a", key="k"),
        ev("effect", "ok", "a", key="k", args_digest="v1"),
        ev("effect", "ok", "", key="k", args_digest="v1"),
    )
    assert anomalies(h) == []


def test_unknown_never_settled() -> None:
    h = history(ev("tool_run", "invoke", "a", key="k"), ev("run_status", "fail", status="stuck"), expected=("a",))
    assert anomalies(h) == [("stuck-run", True, "r1", "", (2,)), ("unknown-never-settled", False, "r1", "a", (1, 2))]


def test_unknown_settled_by_a_later_keyed_attempt() -> None:
    h = history(
        ev("tool_run", "info", "a", key="k"),
        ev("tool_run", "invoke", "a", incarnation=1, key="k"),
        ev("tool_run", "ok", "a", incarnation=1, key="k"),
        ev("effect", "ok", "a"),
        FINISHED,
        expected=("a",),
    )
    assert anomalies(h) == []


def test_approval_not_resumed_ended_and_record_ends() -> None:
    h = history(ev("approval_grant", "ok", "a"), FINISHED, ev("approval_grant", "ok", "b", run="r2"))
    # a's run finished after the grant (definite); r2's record ends after b's grant (possible);
    # a run finished (2) and the granted writes a and b have no effect: both lost
    assert anomalies(h) == [
        ("approval-not-resumed", False, "r2", "b", (3,)),
        ("approval-not-resumed", True, "r1", "a", (1, 2)),
        ("lost-effect", True, "r1", "a", (1, 2)),
        ("lost-effect", True, "r1", "b", (2, 3)),
    ]


def test_no_approval_not_resumed_when_the_run_goes_on() -> None:
    h = history(ev("approval_grant", "ok", "a"), ev("effect", "ok", "a", approval="a@1#1"), FINISHED)
    assert anomalies(h) == []


def test_replay_divergence() -> None:
    assert anomalies(history(ev("run_status", "fail", status="diverged"))) == [
        ("replay-divergence", True, "r1", "", (1,))
    ]


def test_no_replay_divergence_for_a_refused_model_call() -> None:
    assert anomalies(history(ev("model_call", "fail", detail="diverged"), FINISHED)) == []


def test_attempts_pair_invokes_with_the_next_completion_of_their_process_and_call() -> None:
    h = history(
        ev("tool_run", "invoke", "a"),
        ev("tool_run", "invoke", "b"),
        ev("tool_run", "ok", "a", incarnation=1),
        ev("tool_run", "ok", "b"),
        ev("tool_run", "invoke", "c"),
        ev("tool_run", "info", "c"),
    )
    # a's invoke (1) is not completed by incarnation 1's ok (3), a standalone attempt
    assert [(a.first.seq, a.end.seq if a.end else None) for a in attempts(h)] == [(1, None), (2, 4), (3, 3), (5, 6)]
    assert uncertain(h) == {1, 5, 6}


def test_a_call_is_a_write_by_its_tool_or_when_none_is_named() -> None:
    h = history(ev("effect", "ok", "a", tool="t"), ev("tool_run", "ok", "b", tool="t"), ev("tool_run", "ok", "c"))
    assert writes(h) == {"a", "b"}
    assert writes(history(ev("tool_run", "ok", "b"), ev("effect", "ok", ""))) == {"b"}


def test_definite_needs_a_witness_without_uncertain_events() -> None:
    h = history(ev("approval_grant", "ok", "g"), ev("tool_run", "info", "g"), FINISHED, gated=("g",))
    # g's last event (2) is info: the loss of a granted write is only possible; the unknown
    # attempt (2) never settled before the finish (3); the grant was followed by its attempt
    assert anomalies(h) == [
        ("lost-effect", False, "r1", "g", (2, 3)),
        ("unknown-never-settled", False, "r1", "g", (2, 3)),
    ]


def test_duplicate_effect_possible_witness_is_the_first_ok_and_the_first_info() -> None:
    # info 1, info 2, ok 3: the first ok (3) and the first info (1), in history order
    h = history(ev("effect", "info", "a"), ev("effect", "info", "a"), ev("effect", "ok", "a"))
    assert anomalies(h) == [("duplicate-effect", False, "r1", "a", (1, 3))]


def test_a_later_grant_is_not_the_run_going_on() -> None:
    h = history(ev("approval_grant", "ok", "b"), ev("approval_grant", "fail", "a"), ev("approval_grant", "ok", "a"))
    # after b's grant (1) the run has only grants (2, 3): both ok grants are left unused, the record ends
    assert anomalies(h) == [
        ("approval-not-resumed", False, "r1", "a", (3,)),
        ("approval-not-resumed", False, "r1", "b", (1,)),
    ]


def test_a_status_of_run_empty_ends_every_runs_grant() -> None:
    h = history(
        ev("approval_grant", "ok", "a"),
        ev("approval_grant", "ok", "b", run="r2"),
        ev("approval_request", "invoke", "b", run="r2"),
        ev("run_status", "fail", run="", status="stuck"),
    )
    # r1's grant (1) is followed by the sweep's status (4): definite; r2 went on (3) after b's grant
    assert anomalies(h) == [("approval-not-resumed", True, "r1", "a", (1, 4)), ("stuck-run", True, "", "", (4,))]


def test_key_reused_compares_digests_of_one_f_and_calls_of_any() -> None:
    h = history(
        ev("tool_run", "ok", "a", key="k", args_digest="v1"),
        ev("effect", "ok", "a", key="k", args_digest="v2"),
        ev("effect", "ok", "", key="k", args_digest="v1"),
        ev("tool_run", "ok", "a", key="j", args_digest="v1"),
        ev("effect", "ok", "b", key="j"),
    )
    # key k: the attempt's v1 (1) and the effect's v2 (2) are digests of two producers, not
    # compared; the unjoined effect (3) is the first later event in conflict, with the effect 2
    # (one f, v2 and v1). Key j: the attempt of a (4) and the effect of b (5), two joined calls.
    assert anomalies(h) == [("key-reused", True, "r1", "a", (2, 3)), ("key-reused", True, "r1", "a", (4, 5))]


def test_an_approval_that_is_no_entry_names_no_grant_and_no_number() -> None:
    h = history(
        ev("approval_grant", "ok", "a", approval="a@v1#1"),
        ev("effect", "ok", "a", approval="a@v1#1"),
        ev("effect", "ok", "b", approval="x"),
        ev("effect", "ok", "b", approval="x"),
        gated=("a", "b"),
    )
    # "a@v1#1" and "x" are no entry `call@N#M`: each effect (2, 3, 4) is approval-other-arguments
    # alone (no number, so no grant named and no approval redeemed twice); b has two records
    assert anomalies(h) == [
        ("approval-other-arguments", True, "r1", "a", (2,)),
        ("approval-other-arguments", True, "r1", "b", (3,)),
        ("approval-other-arguments", True, "r1", "b", (4,)),
        ("duplicate-effect", True, "r1", "b", (3, 4)),
    ]


def test_a_digest_that_is_no_version_is_version_1() -> None:
    h = history(
        ev("effect", "ok", "a", approval="a@1#1", args_digest="sha256:0f"),
        ev("approval_grant", "ok", "b", approval="b@2#2"),
        ev("effect", "ok", "b", approval="b@2#2", args_digest="sha256:0f"),
        gated=("a", "b"),
    )
    # a: approved as version 1, sent with a digest read as v1; b: approved as version 2, sent as
    # v1, and the grant of number 2 (2) is named
    assert anomalies(h) == [("approval-other-arguments", True, "r1", "b", (2, 3))]


def test_an_orphaned_call_is_one_across_the_history() -> None:
    again = history(
        ev("tool_call", "invoke", "a"),
        ev("model_call", "invoke"),
        ev("tool_call", "invoke", "a", incarnation=1),
        ev("model_call", "invoke", incarnation=1),
        ev("tool_call", "invoke", "a", incarnation=2),
    )
    # a is sent without its result at 2, again after a restart at 4, and left at the end of the
    # last conversation (5): one anomaly, at the first model call it is sent to
    assert anomalies(again) == [("orphaned-call", True, "r1", "a", (1, 2))]
    ids = history(ev("tool_call", "invoke", "a", call_id="a-1"), ev("tool_call", "invoke", "a", call_id="a-2"))
    # two IDs of one call left unanswered: one possible orphan, its first tool call
    assert anomalies(ids) == [("orphaned-call", False, "r1", "a", (1,))]


EVERY_ROW = (
    ev("effect", "ok", "a"),
    ev("effect", "ok", "a"),
    ev("tool_call", "invoke", "b"),
    ev("model_call", "invoke"),
    ev("effect", "ok", "g"),
    FINISHED,
    ev("run_status", "fail", status="diverged"),
    ev("run_status", "fail", run="r2", status="stuck"),
)
"""A history with an anomaly of each invariant's rows, and one of a row with no invariant."""
FOUND = {
    "no-duplicate": ("duplicate-effect", True, "r1", "a", (1, 2)),
    "no-loss": ("lost-effect", True, "r1", "c", (6,)),
    "well-formed-transcript": ("orphaned-call", True, "r1", "b", (3, 4)),
    "approved-exactly": ("unapproved-effect", True, "r1", "g", (5,)),
    "can-finish": ("stuck-run", True, "r2", "", (8,)),
}
"""By hand: a has records 1 and 2; c is expected, never named, and r1 finished at 6 (a and g have
records, b is no write); b's call (3) is sent at 4 unanswered; g is gated and recorded (5) with
no approval; r2 is stuck at 8. The divergence (7) names no invariant."""
NEEDED = {
    "no-duplicate": {"effects"},
    "no-loss": {"effects", "status"},
    "well-formed-transcript": {"transcript"},
    "approved-exactly": {"effects", "approvals"},
    "can-finish": {"status"},
}


@pytest.mark.parametrize(
    "facts",
    [
        set(),
        {"effects"},
        {"status"},
        {"transcript"},
        {"approvals"},
        {"effects", "approvals"},
        {"effects", "status"},
        {"transcript", "approvals", "status"},
        {"effects", "transcript", "approvals", "status"},
    ],
)
def test_a_row_of_an_invariant_finds_nothing_without_a_fact_it_needs(facts: set[str]) -> None:
    h = replace(history(*EVERY_ROW, expected=("a", "c"), gated=("g",)), facts=frozenset(facts))
    kept = [FOUND[name] for name, needs in NEEDED.items() if needs <= facts]
    assert anomalies(h) == sorted([*kept, ("replay-divergence", True, "r1", "", (7,))])
