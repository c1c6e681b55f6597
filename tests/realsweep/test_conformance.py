"""Conformance: the real sweep's row equals the model's, for every design at depth 1 and one at depth 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep import variants
from crashsweep.realsweep import conformance
from crashsweep.realsweep.engine import SweepOptions
from crashsweep.spec.job import TRIAGE

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


DOCS = Path(__file__).resolve().parents[2] / "docs"
NOT_SWEPT_FOR_REAL: dict[str, str] = {}
"""Presets the reference loop cannot run, each with the reason (none: every preset runs for real)."""


def test_every_preset_has_a_design_file_or_a_named_exclusion() -> None:
    files = {path.stem for path in (DOCS / "designs").glob("*.toml")}
    assert set(variants.PRESETS) == files | set(NOT_SWEPT_FOR_REAL)
    assert not files & set(NOT_SWEPT_FOR_REAL)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(variants.PRESETS) - set(NOT_SWEPT_FOR_REAL)))
def test_every_preset_composed_for_real_conforms_at_depth_1(name: str) -> None:
    """The reference loop composed from the preset's design file: the same row as the composed model's."""
    result = conformance.conform(
        name, TRIAGE, None, "keyed", SweepOptions(depth=1), None, DOCS / "designs" / f"{name}.toml"
    )
    assert result.differences == []
    assert result.real.scenarios[1] == result.real.crash_points


@pytest.mark.parametrize("tracker", ["keyed", "keyless", "keyless-lookup"])
def test_the_example_design_file_is_swept_for_real(tracker: str) -> None:
    """docs/my-design.toml, crashed for real at every point: the same row as its model's."""
    result = conformance.conform(
        "my-design", TRIAGE, None, tracker, SweepOptions(depth=1), None, DOCS / "my-design.toml"
    )
    assert result.differences == []
    # Keys honoured: a resent write is harmless. Ignored, and no markers: a crash between the
    # tracker's accept and the result save resends the write, a duplicate.
    assert (result.real.with_dups == 0) == (tracker == "keyed")


@pytest.mark.parametrize("tracker", ["keyless", "keyless-lookup"])
def test_a_composed_ladder_conforms_for_real(tracker: str) -> None:
    """attempt-markers' design file (ladder: lookup, then a person) crashed for real: the model's row."""
    path = DOCS / "designs" / "attempt-markers.toml"
    result = conformance.conform("attempt-markers", TRIAGE, None, tracker, SweepOptions(depth=1), None, path)
    assert result.differences == []
    # A crash between a marker save and the result save leaves a marked write to settle: the
    # lookup rung does it where the tracker offers one, a person everywhere else.
    assert (result.real.lookups > 0, result.real.asks > 0) == (tracker == "keyless-lookup", tracker == "keyless")
