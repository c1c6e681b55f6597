"""A real scenario's History: the check's events and how it ended, kept with `--keep`, judged by the registry."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from crashsweep.realsweep import histories
from crashsweep.realsweep.probe.crashpoint import MALFORMED
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepOptions
from crashsweep.spec import invariants
from crashsweep.spec.history import FINISHED, STUCK, Event, History, read
from crashsweep.spec.job import load_job
from tests.paths import ROOT


def test_every_kept_scenario_has_its_history_read_back_equal(tmp_path: Path) -> None:
    """The sweep of every scenario keeps each scenario's folder: its history.jsonl is the History the row judged."""
    path = ROOT / "examples" / "one-write.toml"
    options = SweepOptions(depth=1, workers=2, keep=True, root=tmp_path / "kept")
    result = reference.run("save-after-reply", load_job(path), path, "keyless", options)
    kept = sorted((tmp_path / "kept").rglob(histories.FILE))
    assert len(kept) == len(result.scenarios) + 1  # the baseline too
    judged = {histories.scenario_history(s) for s in (result.baseline, *result.scenarios)}
    assert {read(file) for file in kept} == judged
    duplicated = [s for s in result.scenarios if s.outcome.dups]
    assert duplicated  # save-after-reply on a keyless tracker duplicates create_a after some crash
    for scenario in duplicated:
        verdict = invariants.by_name(invariants.NO_DUPLICATE).judge(histories.scenario_history(scenario))
        assert verdict.violation is not None
        assert verdict.violation.why == "create_a has 2 records: #1 and #2"


def test_a_finished_scenario_ends_finished_and_a_stuck_one_with_the_refused_request() -> None:
    seen = History((Event("r", 0, 1, "invoke", "tool_call", call="a"),), ("a",), ())
    done = ScenarioResult((), Outcome.of(["a"], ["a"], seen), {}, ())
    stuck = ScenarioResult((Crash(1, "p"),), Outcome(history=seen, stuck="refused: a"), {MALFORMED: 1}, ())
    finished = histories.scenario_history(done)
    assert [(e.seq, e.f, e.status) for e in finished.events] == [
        (1, "effect", ""),
        (2, "tool_call", ""),
        (3, "run_status", FINISHED),
    ]
    ended = histories.scenario_history(stuck).events
    assert [(e.f, e.type, e.detail) for e in ended[1:]] == [
        ("model_call", "invoke", ""),
        ("model_call", "fail", "refused: a"),
        ("run_status", "fail", "refused: a"),
    ]
    assert ended[-1].status == STUCK
    names = {v.name: v for v in histories.judge(stuck)}
    assert not names[invariants.WELL_FORMED_TRANSCRIPT].holds
    assert not names[invariants.CAN_FINISH].holds


def test_counts_alone_decide_duplicates_and_losses_and_nothing_else() -> None:
    counted = histories.counted(Outcome(dups=1, missing=1, applied=3))
    assert [e.call for e in counted.events] == ["counted 1", "counted 1", "counted 2"]
    assert counted.expected == ("counted 1", "counted 2", "counted 3")
    verdicts = {v.name: v for v in histories.judge(ScenarioResult((), Outcome(dups=1, missing=1, applied=3), {}, ()))}
    assert not verdicts[invariants.NO_DUPLICATE].holds
    assert not verdicts[invariants.NO_LOSS].holds
    assert not verdicts[invariants.WELL_FORMED_TRANSCRIPT].decided
    assert verdicts[invariants.APPROVED_EXACTLY].why == histories.NO_HISTORY


def test_a_restart_that_cannot_recover_ends_its_history_stuck_with_its_status_and_no_refused_request() -> None:
    """spec/POINTS.md 5: a run_status stuck, detail the status and what it said; can-finish fails there.

    A malformed request counted before the failure is no refusal by the model: no model_call is added.
    """
    failed = "the restart exited with status 1: json.decoder.JSONDecodeError: Extra data"
    outcome = Outcome.of(["a"], ["a", "b"])
    scenario = ScenarioResult(
        (Crash(4, "saved", 2),), replace(outcome, stuck=failed, exit_status=1), {MALFORMED: 1}, ()
    )
    events = histories.scenario_history(scenario).events
    assert [(e.f, e.type, e.status, e.detail) for e in events] == [
        ("effect", "ok", "", ""),
        ("run_status", "fail", STUCK, failed),
    ]
    verdicts = {v.name: v for v in histories.judge(scenario)}
    violation = verdicts[invariants.CAN_FINISH].violation
    assert violation is not None
    assert violation.why == f"the run can never finish: {failed}"
    assert verdicts[invariants.NO_LOSS].holds  # the run never finished: nothing is lost yet
