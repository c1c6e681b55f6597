"""Conformance: the real sweep's row equals the model's, for every design at depth 1 and one at depth 2."""

from __future__ import annotations

import pytest

from realsweep import conformance
from realsweep.engine import SweepOptions
from spec.job import TRIAGE

DEPTH_1 = [
    ("save-once-per-turn", "keyed"),
    ("save-after-reply", "keyed"),
    ("idempotency-keys", "keyed"),
    ("attempt-markers", "keyed"),
    ("keys-and-markers", "keyed"),
    ("agent-loop", "keyed"),
    ("agent-loop", "keyless"),
    ("agent-loop", "keyless-lookup"),
]


@pytest.mark.parametrize(("variant", "tracker"), DEPTH_1)
def test_every_design_conforms_at_depth_1(variant: str, tracker: str) -> None:
    """One crash at every point of the real loop: the same row as the model's."""
    result = conformance.conform(variant, TRIAGE, None, tracker, SweepOptions(depth=1))
    assert result.differences == []
    assert result.real.scenarios[1] == result.real.crash_points


@pytest.mark.slow
def test_save_once_per_turn_conforms_at_depth_2() -> None:
    """Two crashes deep: 18 and 225 scenarios, 164 with duplicates, 294 duplicates, calls+ 338, as the seed."""
    result = conformance.conform("save-once-per-turn", TRIAGE, None, "keyed", SweepOptions(depth=2))
    assert result.differences == []
    real = result.real
    assert (real.crash_points, real.scenarios[1], real.scenarios[2]) == (18, 18, 225)
    assert (real.with_dups, real.dups, real.missing, real.asks, real.calls_plus) == (164, 294, 0, 0, 338)
    assert "no difference" in conformance.render([result])


def test_started_processes_conform_like_forked_ones() -> None:
    """--spawn exec (a new interpreter per process, no zygote): the same row as the model's."""
    result = conformance.conform("save-after-reply", TRIAGE, None, "keyed", SweepOptions(depth=1, spawn="exec"))
    assert result.differences == []
