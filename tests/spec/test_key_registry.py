"""The state key over the whole registry (slow tier): tests/spec/test_key.py's check, wider and deeper.

Every design x tracker x fault kind (and fresh call IDs) on one write at depths 1-3; every
design and fault on the situation jobs (triage, a tool failing after accept, an approval
gate); every composed policy at depth 2, and under power loss (with the fsync fields) at
depth 1. Each merged search must give the full search's figures (`both`).
"""

from __future__ import annotations

import pytest

from crashsweep.spec.job import TRIAGE
from crashsweep.spec.policy import all_policies
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import names
from crashsweep.variants.composed import compose
from tests.spec.test_key import APPROVAL, ENVIRONMENTS, FAILS, ONE_WRITE, both, environment_id


@pytest.mark.parametrize(("faults", "fresh"), ENVIRONMENTS, ids=environment_id)
@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("design", names())
def test_every_design_tracker_and_fault_on_one_write_to_depth_three(
    design: str, tracker: str, faults: tuple[str, ...], fresh: bool
) -> None:
    """One write, depths 1-3: the merged search's figures are the full one's."""
    for depth in (1, 2, 3):
        both(design, ONE_WRITE, tracker, depth, faults, fresh)


@pytest.mark.parametrize(("faults", "fresh"), ENVIRONMENTS, ids=environment_id)
@pytest.mark.parametrize("design", names())
def test_every_design_and_fault_on_the_situation_jobs(design: str, faults: tuple[str, ...], fresh: bool) -> None:
    """Triage, a tool failing after accept and an approval gate, at depth 1, keyless (every rung of the ladder)."""
    for job in (TRIAGE, FAILS, APPROVAL):
        both(design, job, "keyless", 1, faults, fresh)


def test_every_composed_policy_at_depth_two_and_under_power_loss() -> None:
    """The policy space: its 512 designs at depth 2; its designs with fsync fields under power loss at depth 1."""
    for policy in all_policies():
        both(compose(policy.label, "composed", policy), ONE_WRITE, "keyed", 2, (), False)
    for policy in all_policies(power_loss=True):
        both(compose(policy.label, "composed", policy), ONE_WRITE, "keyless", 1, ("power-loss",), False)
