"""An anomaly's witness holds 1 to 3 events."""

from __future__ import annotations

import pytest

from crashsweep.spec.anomalies import Anomaly
from crashsweep.spec.anomalies.value import WITNESS_MAX
from tests.spec.anomalies.fixtures import status


@pytest.mark.parametrize("size", [0, WITNESS_MAX + 1])
def test_a_witness_of_no_event_or_too_many_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="a witness holds 1 to 3 events"):
        Anomaly("stuck-run", True, "r1", "", "why", (status("stuck"),) * size)


def test_a_witness_of_one_to_three_events_is_kept() -> None:
    witness = (status("stuck"),) * WITNESS_MAX
    assert Anomaly("stuck-run", True, "r1", "", "why", witness).witness == witness
