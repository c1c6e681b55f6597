"""The merged search against the unprojected one where the full graph still finishes (issue 44's check).

test_unprojected_agreement.py says what is compared and runs the 40-call cells at depths 1-2;
here 40 calls at depth 3 and 200 calls at depths 1 and 2, every shipped design, but for two
cells: save-after-reply and save-once-per-turn at 200 calls, depth 2, whose full graphs hold
millions of worlds (a minute of CPU each), are benchmarks/unprojected.py's (its run is quoted
in docs/performance.md).
"""

from __future__ import annotations

import pytest

from crashsweep.variants import DESIGNS
from tests.explorer.test_unprojected_agreement import agree

HEAVY = {("save-after-reply", 200, 2), ("save-once-per-turn", 200, 2)}
"""The cells left to benchmarks/unprojected.py."""
CELLS = [
    (design, calls, depth)
    for calls, depth in ((40, 3), (200, 1), (200, 2))
    for design in DESIGNS
    if (design, calls, depth) not in HEAVY
]


@pytest.mark.parametrize(("design", "calls", "depth"), CELLS, ids=[f"{d}-{c}-calls-depth-{k}" for d, c, k in CELLS])
def test_merged_equals_unprojected_where_the_full_graph_finishes(design: str, calls: int, depth: int) -> None:
    """40 calls at depth 3, 200 calls at depths 1 and 2: the same figures."""
    agree(design, calls, depth)
