"""The merged search against the unprojected one on the benchmark's generated jobs (issue 44's independent check).

benchmarks/scaling.py measures the merged search (the state key, spec/key.py) on generated
jobs of up to 100,000 calls, where only the merged search finishes. Where the full graph
(`projection=False`, one node per world) still finishes, both must give the same figures:
scenarios per move count, summed measures and counters, and verdicts. Every shipped design,
at 40 calls (depths 1-3) and 200 calls (depths 1-2; at depth 3 the full graph of 200 calls
holds hundreds of millions of states and does not finish). This module holds the 40-call
cells at depths 1-2, quick enough for the fast tier; tests/at_scale/test_unprojected_agreement.py
the rest (minutes: the slow tier, by its place in tests/conftest.py's SLOW).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from crashsweep.explorer.search import Exploration, explore
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import DESIGNS, model

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
generated: Any = importlib.import_module("scaling").generated

QUICK = [(40, 1), (40, 2)]


def figures(exploration: Exploration[Any]) -> tuple[object, ...]:
    """What the two searches must share: the counts and each verdict (holds, and of which kind)."""
    verdicts = {name: (verdict.kind, verdict.holds) for name, verdict in exploration.verdicts.items()}
    counts = exploration.counts
    return counts.scenarios, counts.measures, counts.counters, counts.steps, verdicts


def agree(design: str, calls: int, depth: int) -> None:
    """The merged search gives the full search's figures, on at most as many states."""
    loop = model(design, generated(calls, 4), KEYED)
    merged = explore(loop, depth)
    full = explore(loop, depth, projection=False)
    assert figures(merged) == figures(full)
    assert merged.states <= full.states


@pytest.mark.parametrize(("calls", "depth"), QUICK, ids=[f"{c}-calls-depth-{d}" for c, d in QUICK])
@pytest.mark.parametrize("design", list(DESIGNS))
def test_merged_equals_unprojected_on_small_jobs(design: str, calls: int, depth: int) -> None:
    """40 calls at depths 1 and 2: the same figures (a fraction of a second each)."""
    agree(design, calls, depth)
