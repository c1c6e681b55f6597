"""A real sweep's results as the explorer's row: columns, verdicts and counterexamples."""

from __future__ import annotations

import json
from dataclasses import replace

from crashsweep.realsweep import rows
from crashsweep.realsweep.probe.crashpoint import MALFORMED
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepResult
from crashsweep.realsweep.values import CANNOT_RECOVER
from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import APPROVED_EXACTLY, CAN_FINISH, WELL_FORMED_TRANSCRIPT
from crashsweep.spec.retries import Layer


def scenario(crashes: tuple[int, ...], dups: int = 0, calls: int = 3, asks: int = 0) -> ScenarioResult:
    """A scenario result with the given crash indices and figures."""
    crash = tuple(Crash(i, f"point {i}") for i in crashes)
    return ScenarioResult(crash, Outcome(dups=dups, applied=1), {"model_calls": calls, "asks": asks}, ())


RESULT = SweepResult(
    depth=2,
    baseline=ScenarioResult((), Outcome(applied=1), {"model_calls": 3}, ("point 1", "point 2")),
    scenarios=(scenario((1,)), scenario((2,), dups=2, calls=4), scenario((1, 1), asks=1), scenario((2, 1), dups=1)),
    processes=11,
    seconds=1.5,
)


def test_the_row_has_the_explorers_columns() -> None:
    """Scenarios per crash count, with_dups, dups, asks and calls+ over the scenarios."""
    row = rows.summary(RESULT, variant="v", job="triage", tracker="keyed")
    assert (row.crash_points, row.scenarios) == (2, {1: 2, 2: 2})
    assert (row.with_dups, row.dups, row.missing, row.asks, row.calls_plus) == (2, 3, 0, 1, 1)
    assert not row.holds


def test_the_first_violating_scenario_is_the_counterexample() -> None:
    """Scenarios are ordered by crash count, so the first duplicate is a shortest one."""
    row = rows.summary(RESULT, variant="v", job="triage", tracker="keyed")
    duplicate = row.invariants[0]
    assert (duplicate.name, duplicate.holds, duplicate.counterexample, duplicate.crashes) == (
        "no-duplicate",
        False,
        "2",
        1,
    )
    text = rows.row_text(row, RESULT, rows.counterexamples(RESULT))
    assert (
        "VIOLATED  first in scenario 2: crash at point 2 'point 2', restart to the end: "
        "counted 1 has 2 records: #1 and #2" in text
    )
    assert "processes     11 in 1.5 s" in text


def test_json_reports_processes_instead_of_a_graph() -> None:
    """The JSON row has processes and seconds, not states and edges."""
    data = json.loads(rows.to_json(rows.summary(RESULT, variant="v", job="t", tracker="keyed"), RESULT))
    assert data["processes"] == 11
    assert "states" not in data
    assert data["scenarios"] == {"1": 2, "2": 2}


def test_a_program_with_retry_layers_gets_the_retry_figures_of_its_scenarios() -> None:
    """A sweep of every scenario: retries per scope summed, the retry moves in the tally, the worst scenario.

    RETRIED: the baseline (1 run retry, 3 calls); scenario 1 (a crash: 1 run retry, 4 calls);
    scenario 2 (a retry move, then the layer's run retry: 2 duplicates, 5 calls). Worst: 2
    duplicates, 5 model calls, against the run's 3.
    """
    moved = ScenarioResult(
        (), Outcome(dups=2, applied=3), {"model_calls": 5, "retry.run": 1}, (), faults=("retry at p",)
    )
    retried = SweepResult(
        depth=1,
        baseline=ScenarioResult((), Outcome(applied=1), {"model_calls": 3, "retry.run": 1}, ("p",)),
        scenarios=(scenario((1,), calls=4), moved),
        processes=4,
        seconds=0.5,
    )
    stack = (Layer("run", "error", 3),)
    row = rows.summary(retried, variant="v", job="t", tracker="keyed", retries=stack)
    assert row.retries == "run x3 on error"
    assert row.moves == {1: {"crash": 1, "retry": 1}}
    assert row.retried == {"retry.call": 0, "retry.turn": 0, "retry.run": 1}
    assert (row.worst_dups, row.worst_calls, row.run_calls) == (2, 5, 3)
    text = rows.row_text(row, retried, rows.counterexamples(retried))
    assert text.startswith("v  (real sweep; job t, tracker keyed, depth 1, retries run x3 on error)\n")
    assert (
        "retries       retry.call 0   retry.turn 0   retry.run 1   worst scenario: dups 2, model calls 5 (+2)" in text
    )
    assert rows.summary(retried, variant="v", job="t", tracker="keyed").retries == ""


def conversation(*steps: str, run: str = "r") -> tuple[Event, ...]:
    """Conversation events: "ask" a model call, "call X" a tool call, "result X" its saved result."""
    found = []
    for step in steps:
        what, _, call = step.partition(" ")
        f, kind = {"ask": ("model_call", "invoke"), "call": ("tool_call", "invoke"), "result": ("result_saved", "ok")}[
            what
        ]
        found.append(Event(run, 0, 0, kind, f, call=call))
    return tuple(found)


SEEN_ALL = History(conversation("ask", "call a", "call b", "result a"), ("a", "b"), ())
STUCK = ScenarioResult(
    (Crash(2, "point 2"),),
    replace(
        Outcome.of(["a"], ["a", "b"], SEEN_ALL),
        stuck="stuck: the provider refuses the conversation (HTTP 400): b has no result",
    ),
    {"model_calls": 2, MALFORMED: 1},
    (),
)
GATED = History((Event("r", 0, 1, "ok", "effect", call="w", effect_id="#1", args_digest="v1"),), ("w",), ("w",))
UNAPPROVED = ScenarioResult((Crash(1, "point 1"),), Outcome(applied=1, history=GATED), {"model_calls": 3}, ())
APPROVED = replace(
    GATED, events=(replace(GATED.events[0], approval="w@1#1"), *conversation("ask", "call w", "result w", "ask"))
)


def test_a_stuck_scenario_never_finishes_and_is_no_loss() -> None:
    """A scenario that ends stuck counts among `never_finish`; its missing write is measured, not a loss."""
    baseline = ScenarioResult(
        (),
        Outcome.of(
            ["a", "b"],
            ["a", "b"],
            replace(SEEN_ALL, events=conversation("ask", "call a", "call b", "result a", "result b", "ask")),
        ),
        {},
        ("point 1", "point 2"),
    )
    result = SweepResult(1, baseline, (scenario((1,)), STUCK), 4, 0.1)
    row = rows.summary(result, variant="v", job="t", tracker="keyed")
    verdicts = {v.name: (v.decided, v.holds, v.counterexample) for v in row.invariants}
    assert (row.never_finish, row.missing) == (1, 1)
    assert verdicts == {
        "no-duplicate": (True, True, None),
        "no-loss": (True, True, None),
        WELL_FORMED_TRANSCRIPT: (False, True, None),  # scenario 1 gave counts alone: no conversation
        APPROVED_EXACTLY: (False, True, None),
        CAN_FINISH: (True, False, "2"),
    }
    words = rows.counterexamples(result)
    assert words[CAN_FINISH].endswith(
        "the run can never finish: stuck: the provider refuses the conversation (HTTP 400): b has no result"
    )
    assert words[WELL_FORMED_TRANSCRIPT].endswith(
        "the model was sent a tool call without its result "
        "(stuck: the provider refuses the conversation (HTTP 400): b has no result)"
    )
    text = rows.row_text(row, result, words)
    assert f"  {WELL_FORMED_TRANSCRIPT} not decided (the check gave counts alone" in text


def test_the_histories_verdict_on_approvals_is_the_rows() -> None:
    """approved-exactly fails at the first scenario whose history shows a gated write without its approval."""
    approved = ScenarioResult((Crash(2, "point 2"),), Outcome(applied=1, history=APPROVED), {}, ())
    result = SweepResult(1, approved, (UNAPPROVED, approved), 4, 0.1)
    row = rows.summary(result, variant="v", job="t", tracker="keyed")
    verdict = next(v for v in row.invariants if v.name == APPROVED_EXACTLY)
    assert (verdict.decided, verdict.holds, verdict.witnessed, verdict.counterexample) == (True, False, True, "1")
    assert rows.counterexamples(result)[APPROVED_EXACTLY].endswith("w@1 was applied with no approval that matches it")
    assert rows.violates(UNAPPROVED, APPROVED_EXACTLY)
    assert not rows.violates(approved, APPROVED_EXACTLY)


def test_a_witness_no_scenario_saw_is_reported_unseen() -> None:
    """One model call per run: no request held a tool result; no gated write had an effect."""
    once = ScenarioResult((), Outcome(history=History(conversation("ask"), ("w",), ("w",))), {"model_calls": 1}, ())
    row = rows.summary(SweepResult(1, once, (), 1, 0.1), variant="v", job="t", tracker="keyed")
    seen = {v.name: (v.decided, v.holds, v.witnessed) for v in row.invariants}
    assert seen[WELL_FORMED_TRANSCRIPT] == seen[APPROVED_EXACTLY] == (True, True, False)


def test_restarts_that_cannot_recover_are_counted_and_the_first_is_named_in_the_row() -> None:
    """spec/POINTS.md 5: the row counts them (the sweep's cannot_recover counter) and names the first, text and JSON."""
    said = "the restart exited with status 1: json.decoder.JSONDecodeError: Extra data"
    failed = ScenarioResult(
        (Crash(2, "point 2"),), Outcome(missing=1, stuck=said, exit_status=1), {CANNOT_RECOVER: 1}, ()
    )
    result = SweepResult(
        1, RESULT.baseline, (scenario((1,)), failed, replace(failed, crashes=(Crash(3, "p"),))), 4, 0.1
    )
    row = rows.summary(result, variant="v", job="t", tracker="keyed")
    assert row.never_finish == 2
    text = rows.row_text(row, result, rows.counterexamples(result))
    assert f"  unrecovered   2 scenario(s) end in a restart that cannot recover (first 2: {said})\n" in text
    assert "can-finish    VIOLATED  first in scenario 2: crash at point 2 'point 2', restart, which cannot" in text
    data = json.loads(rows.to_json(row, result))
    assert data["cannot_recover"] == {"scenarios": 2, "first": "2", "exit_status": 1, "detail": said}
    assert "cannot_recover" not in json.loads(
        rows.to_json(rows.summary(RESULT, variant="v", job="t", tracker="k"), RESULT)
    )
