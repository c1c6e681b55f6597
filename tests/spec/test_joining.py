"""Merging sources, splitting by run and joining calls (spec/HISTORY.md 7), on small hand-made histories."""

from __future__ import annotations

from crashsweep.spec.history import Event, History
from crashsweep.spec.joining import by_run, join, merge


def ev(run: str, seq: int, f: str, **fields: object) -> Event:
    """An `ok` event of `run` (type given as type=... when another)."""
    kind = str(fields.pop("type", "ok"))
    return Event(run, 0, seq, kind, f, **fields)  # type: ignore[arg-type]


SESSION = History(
    (
        ev("r", 1, "tool_call", type="invoke", call_id="c1", tool="pay", time=10.0),
        ev("r", 2, "result_saved", call_id="c1", time=30.0),
    ),
    facts=frozenset({"transcript"}),
    unseen={"effects": "a session holds no effects", "status": "a session says not how the run ended"},
)
LEDGER = History(
    (ev("", 1, "effect", call="c1", effect_id="#1", time=20.0), ev("", 2, "effect", call="c1", effect_id="#2")),
    facts=frozenset({"effects"}),
    unseen={"status": "a ledger says not how the run ended"},
)


def test_one_source_is_kept_as_it_is() -> None:
    assert merge([SESSION]) is SESSION


def test_sources_merge_by_time_keeping_each_ones_order_and_number_again() -> None:
    merged = merge([SESSION, LEDGER])
    # By time: call (10), effect #1 (20), effect #2 (no time: 20, after #1 in its ledger), result (30).
    assert [(e.seq, e.f, e.effect_id) for e in merged.events] == [
        (1, "tool_call", ""),
        (2, "effect", "#1"),
        (3, "effect", "#2"),
        (4, "result_saved", ""),
    ]
    assert merged.facts == {"transcript", "effects"}
    # Each family seen by neither keeps the first source's reason; one seen by some source is no longer unseen.
    assert merged.unseen == {"status": "a session says not how the run ended"}


def test_no_sources_give_an_empty_history_that_claims_no_facts() -> None:
    assert merge([]) == History(facts=frozenset())


def test_events_with_no_run_go_to_the_one_run_there_is() -> None:
    merged = merge([SESSION, LEDGER])
    assert by_run(merged) == (merged,)


def test_with_several_runs_an_event_with_no_run_goes_to_the_run_that_holds_its_call() -> None:
    history = History(
        (
            ev("r1", 1, "tool_call", type="invoke", call_id="a"),
            ev("r2", 2, "tool_call", type="invoke", call_id="b"),
            ev("", 3, "effect", call="b", effect_id="#1"),
            ev("", 4, "effect", call="z", effect_id="#2"),  # no run holds z: kept apart, run ""
            ev("r1", 5, "tool_run", type="invoke", tool="pay", args_digest="d1"),
            ev("", 6, "effect", tool="pay", args_digest="d1", effect_id="#3"),  # r1 holds pay(d1)
        )
    )
    runs = by_run(history)
    assert [[e.seq for e in h.events] for h in runs] == [[1, 5, 6], [2, 3], [4]]


def test_a_call_two_runs_hold_owns_no_event_of_no_run() -> None:
    history = History(
        (
            ev("r1", 1, "tool_call", type="invoke", call_id="a"),
            ev("r2", 2, "tool_call", type="invoke", call_id="a"),
            ev("", 3, "effect", call="a", effect_id="#1"),
        )
    )
    assert [[e.seq for e in h.events] for h in by_run(history)] == [[1], [2], [3]]


def test_join_takes_the_runtime_key_then_the_call_id_then_tool_and_arguments() -> None:
    history = History(
        (
            ev("r", 1, "tool_run", type="invoke", call="wf:1", call_id="m1", tool="pay", args_digest="d"),
            ev("r", 2, "result_saved", call_id="m1"),  # rule 2: m1 is wf:1's call ID
            ev("r", 3, "tool_call", type="invoke", call_id="m9"),  # rule 2: no event names m9's call
            ev("r", 4, "effect", tool="pay", args_digest="d", effect_id="#1"),  # rule 3: pay(d) is wf:1
            ev("r", 5, "effect", tool="mail", args_digest="e", effect_id="#2"),  # rule 3: a call of its own
            ev("r", 6, "effect", effect_id="#3"),  # nothing names it
            ev("r", 7, "model_call", type="invoke"),  # about no call: not counted
        )
    )
    joined = join(history)
    assert [e.call for e in joined.history.events] == ["wf:1", "wf:1", "m9", "wf:1", "mail(e)", "", ""]
    assert joined.joined == (1, 2, 2)
    assert [e.seq for e in joined.unjoined] == [6]


def test_tool_and_arguments_naming_two_calls_make_a_call_of_their_own() -> None:
    history = History(
        (
            ev("r", 1, "tool_run", type="invoke", call="a", tool="pay", args_digest="d"),
            ev("r", 2, "tool_run", type="invoke", call="b", tool="pay", args_digest="d"),
            ev("r", 3, "effect", tool="pay", args_digest="d", effect_id="#1"),
        )
    )
    assert join(history).history.events[2].call == "pay(d)"
