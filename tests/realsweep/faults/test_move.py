"""A fault move: a frozen value that reads through its kind."""

from __future__ import annotations

import dataclasses

import pytest

from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.pause import PAUSE


def test_a_move_is_frozen_and_hashable() -> None:
    fault = Fault(LOST_REPLY, 2, "tracker accepted create_a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fault.index = 3  # type: ignore[misc]
    assert len({fault, Fault(LOST_REPLY, 2, "tracker accepted create_a"), Fault(PAUSE, 2, fault.point)}) == 2


def test_a_move_reads_through_its_kind() -> None:
    fault = Fault(LOST_REPLY, 4, "tracker accepted create_a", 2)
    assert fault.name == "lost-reply"
    assert (fault.label, fault.code, fault.counter) == (
        LOST_REPLY.label(fault),
        LOST_REPLY.code(fault),
        LOST_REPLY.counter(fault),
    )
    assert fault.position == LOST_REPLY.position(fault) == (4, 0)
    assert fault.crash_at == "2:tracker accepted create_a"
