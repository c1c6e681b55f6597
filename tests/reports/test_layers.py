"""Each retry layer's share of a stack's worst case: the worst scenario without it, derived by hand.

idempotency-keys on triage-fails (create_a's tool fails after accept), keyed tracker, depth 1,
under `call x2 > run x2` (the tool's own retries inside a whole-run retry):

- With both layers: the call layer catches the job's failure and resends create_a under the
  same key (no duplicate); its one retry of run-1/create_a is then spent. The move `retry` at
  the resend's `tracker accepted create_a` reaches the run layer: run-2 sends create_a under a
  new key, 1 duplicate, and asks the model for turn 1 again: 4 model calls against the run's 3.
  No scenario of one move does worse: a crash loses at most one unsaved reply (+1 call) and no
  resend of a crash goes out under another key. Worst: dups 1, model calls 4 (+1).
- Without layer 1 (the call layer): the stack is keys-run-retry, whose worst scenario
  tests/spec/test_retrying.py derives: dups 1, model calls 5, the run's own 4 (the run retry
  fires in the uninterrupted run).
- Without layer 2 (the run layer): a call retry alone never changes the key: no duplicate;
  the run makes 3 model calls, a crash adds at most 1: dups 0, model calls 4 (+1).

So the call layer saves a model call in the worst case, and the run layer costs its duplicate.
"""

from __future__ import annotations

import json
from dataclasses import replace

from crashsweep.cli import runs
from crashsweep.reports import table
from crashsweep.reports.layers import Without, without_each
from crashsweep.spec.job import load_job
from crashsweep.spec.retries import Layer
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import PRESETS
from crashsweep.variants.composed import compose
from tests.paths import ROOT

STACK = (Layer("call", "error", 2), Layer("run", "error", 2))


def _explored() -> runs.Choices:
    job = load_job(ROOT / "examples" / "triage-fails.toml")
    return runs.Choices(job, "triage-fails", KEYED, 1, 100_000)


def test_each_layer_s_worst_case_without_it_is_the_hand_derived_one() -> None:
    """The module docstring's three worst scenarios: the stack's, and one per layer removed."""
    design = compose(
        "keys-call-run", "keys under call x2 > run x2", replace(PRESETS["idempotency-keys"].policy, retries=STACK)
    )
    _, row = runs.run(design, _explored(), layers=True)
    assert (row.worst_dups, row.worst_calls, row.run_calls) == (1, 4, 3)
    assert row.per_layer == (
        Without(1, "call x2 on error", 1, 5, 4),
        Without(2, "run x2 on error", 0, 4, 3),
    )
    assert runs.run(design, _explored())[1].per_layer == ()  # asked for by explore only


def test_a_design_without_layers_has_no_share_to_give() -> None:
    assert without_each(PRESETS["idempotency-keys"].design, lambda d: runs.run(d, _explored())[1]) == ()


def test_the_shares_in_words_and_in_json() -> None:
    """Text: one line per layer under the retries line; JSON: under retries.per_layer."""
    design = compose(
        "keys-call-run", "keys under call x2 > run x2", replace(PRESETS["idempotency-keys"].policy, retries=STACK)
    )
    _, row = runs.run(design, _explored(), layers=True)
    text = table.row_text(row)
    assert "  per layer     without layer 1 (call x2 on error): worst dups 1, model calls 5 (+1)\n" in text
    assert "                without layer 2 (run x2 on error): worst dups 0, model calls 4 (+1)\n" in text
    shares = json.loads(json.dumps(row.to_json()))["retries"]["per_layer"]
    assert shares[1] == {
        "layer": 2,
        "label": "run x2 on error",
        "without": {"dups": 0, "model_calls": 4, "run_model_calls": 3},
    }
