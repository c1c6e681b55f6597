"""A deploy without markers meeting a marked call, for real: the reference loop's row beside the model's.

spec/RETRIES.md section 2, rule 5: the upgraded restart (save-after-reply, no markers) sends a
call the old design (attempt-markers) marked and left without a result, as any call without a
result; it climbs no ladder. The hand count of the figures is in tests/test_settled_upgrade.py
(the fast tier); here the real loop, killed at each of its points and restarted as the other
design, must give the same row.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.sweep import SweepOptions
from crashsweep.spec.job import load_job
from tests.test_settled_upgrade import APPLIED_UNSAVED, ONE_WRITE_TOML, POINTS


@pytest.mark.parametrize("tracker", ["keyed", "keyless-lookup"])
def test_an_upgrade_without_markers_sends_a_marked_call_again_for_real(tmp_path: Path, tracker: str) -> None:
    """Depth 1 on one-write: 18 scenarios, 3 with one duplicate, no question, no lookup, on both sides."""
    job_path = tmp_path / "one-write.toml"
    job_path.write_text(ONE_WRITE_TOML, encoding="utf-8")
    upgrade = ("save-after-reply", None)
    result = conformance.conform(
        "attempt-markers", load_job(job_path), job_path, tracker, SweepOptions(depth=1), upgrade=upgrade
    )
    assert result.differences == []
    real = result.real
    assert (real.crash_points, real.scenarios) == (len(POINTS), {1: len(POINTS)})
    assert (real.with_dups, real.dups, real.missing) == (len(APPLIED_UNSAVED), len(APPLIED_UNSAVED), 0)
    assert (real.asks, real.lookups, real.reruns) == (0, 0, 0)
    assert real.upgrade == "save-after-reply"
