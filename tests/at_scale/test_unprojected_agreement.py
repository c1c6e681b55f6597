"""The merged search against the unprojected one where the full graph still finishes (issue 44's check).

test_unprojected_agreement.py says what is compared and runs the 40-call cells at depths 1-2;
here the rest: 40 calls at depth 3, 200 calls at depths 1 and 2, every shipped design (up to
about a minute a cell: the full graph of 200 calls at depth 2 holds 1.7 to 4 million states).
"""

from __future__ import annotations

import pytest

from crashsweep.variants import DESIGNS
from tests.explorer.test_unprojected_agreement import agree

CELLS = [(40, 3), (200, 1), (200, 2)]


@pytest.mark.parametrize(("calls", "depth"), CELLS, ids=[f"{c}-calls-depth-{d}" for c, d in CELLS])
@pytest.mark.parametrize("design", list(DESIGNS))
def test_merged_equals_unprojected_where_the_full_graph_finishes(design: str, calls: int, depth: int) -> None:
    """40 calls at depth 3, 200 calls at depths 1 and 2: the same figures."""
    agree(design, calls, depth)
