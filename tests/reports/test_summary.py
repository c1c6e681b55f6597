"""Tests of crashsweep.reports.summary: a design's row computed from an exploration."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crashsweep.cli.runs import costed
from crashsweep.explorer.model import Action
from crashsweep.explorer.search import explore
from crashsweep.reports.summary import summarize
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.retries import Layer
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import PRESETS, model
from crashsweep.variants.composed import compose
from tests.explorer.toys import Points


def test_row_of_a_violating_design_carries_its_shortest_counterexample() -> None:
    """save-after-reply: the no-duplicate counterexample has one crash and replays from its code."""
    row = summarize(explore(model("save-after-reply", TRIAGE, KEYED), 2), variant="v", job="triage", tracker="keyed")
    verdict = {v.name: v for v in row.invariants}["no-duplicate"]
    assert not verdict.holds
    assert verdict.crashes == 1
    assert verdict.counterexample is not None
    assert verdict.counterexample.startswith(f"{verdict.steps}:")
    assert not row.holds


def test_json_has_the_documented_keys() -> None:
    """The JSON object carries every key the CLI documents, with crash counts as strings."""
    row = summarize(explore(model("keys-and-markers", TRIAGE, KEYED), 1), variant="v", job="triage", tracker="keyed")
    data = row.to_json()
    for key in ("variant", "job", "depth", "tracker", "crash_points", "scenarios", "with_dups", "dups", "missing"):
        assert key in data
    for key in ("asks", "calls_plus", "states", "edges", "invariants"):
        assert key in data
    assert data["scenarios"] == {"1": 43}
    assert data["invariants"]["no-duplicate"]["holds"] is True


def test_nondeterministic_models_are_refused() -> None:
    """A model whose uninterrupted run is not unique has no calls+ baseline."""

    class Forking(Points):
        def actions(self, state: tuple[str, int, int]) -> tuple[Action, ...]:
            return (
                (*super().actions(state), *super().actions(state))
                if state[0] == "init"
                else tuple(super().actions(state))
            )

    exploration = explore(Forking(2), 1)
    with pytest.raises(ValueError, match="one uninterrupted run"):
        summarize(exploration, variant="f", job="j", tracker="t")


def test_cost_json_run_scenarios_and_extra() -> None:
    """A costed row's JSON `cost` holds run, scenarios and extra; extra = scenarios - run x scenarios."""
    loop = costed(model("save-after-reply", TRIAGE, KEYED), TRIAGE)
    row = summarize(explore(loop, 1), variant="v", job="triage", tracker="keyed")
    cost = row.to_json()["cost"]
    assert set(cost) == {"run", "scenarios", "extra"}
    assert list(cost["run"]) == ["saves", "requests", "model_calls", "questions", "lookups"]
    assert cost["run"]["saves"] == 10  # SEMANTICS.md section 7: 34 points, 10 of them `renamed`
    for part, summed in cost["scenarios"].items():
        assert cost["extra"][part] == summed - 34 * cost["run"][part]
    # calls+ is the extra model calls by its own definition.
    assert cost["extra"]["model_calls"] == row.calls_plus


def test_uncosted_rows_have_no_cost() -> None:
    """A model explored without its costs tallied has cost null, not zeros."""
    row = summarize(explore(model("save-after-reply", TRIAGE, KEYED), 1), variant="v", job="triage", tracker="keyed")
    assert row.to_json()["cost"] is None
    assert row.extra_cost is None


def test_a_design_with_retry_layers_tallies_retry_moves_in_its_json() -> None:
    """RETRIES.md 1.5: `moves` counts retries beside crashes; `retries` gives the stack, the count, the worst scenario.

    idempotency-keys with call x3 on triage at depth 1: 34 crash points, and a retry move at each
    write's `tracker accepted` point (create_a, create_b, comment_a): 37 one-move scenarios. The
    call is sent again under its key, so nothing is duplicated; each retry is one call retry.
    """
    policy = replace(PRESETS["idempotency-keys"].policy, retries=(Layer("call", "error", 3),))
    row = summarize(
        explore(model(compose("keys-call", "x", policy), TRIAGE, KEYED), 1), variant="x", job="triage", tracker="keyed"
    )
    data = row.to_json()
    assert data["moves"] == {"1": {"crash": 34, "retry": 3}}
    assert data["retries"]["stack"] == "call x3 on error"
    assert data["retries"]["retried"] == {"retry.call": 3, "retry.turn": 0, "retry.run": 0}
    assert data["retries"]["worst"]["dups"] == 0
    assert "faults" not in data


def test_a_design_without_layers_keeps_its_json() -> None:
    row = summarize(explore(model("idempotency-keys", TRIAGE, KEYED), 1), variant="x", job="triage", tracker="keyed")
    assert not row.moving
    assert "moves" not in row.to_json()
    assert "retries" not in row.to_json()
