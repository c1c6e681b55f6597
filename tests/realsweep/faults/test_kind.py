"""A real fault kind's defaults and its value semantics (a kind equals any value of its class)."""

from __future__ import annotations

import pickle
from pathlib import Path

from crashsweep.realsweep.faults.kind import AtPoint, Kind
from crashsweep.realsweep.faults.lost_reply import LOST_REPLY, LostReply
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.pause import PAUSE


class Flood(Kind):
    """A made-up kind with nothing but a name: every default shows."""

    name = "flood"


class Drip(AtPoint):
    """A made-up kind that strikes at a point."""

    name = "drip"


def test_a_kind_with_only_a_name_does_nothing_and_reads_as_the_model_names_it(tmp_path: Path) -> None:
    flood = Flood()
    fault = Fault(flood, 3, "person answers create_a", 2)
    assert flood.chances(("a",), ((1, "b"),), (0, 0)) == []
    assert fault.env() == {}
    flood.before_restart(tmp_path / "nothing.sqlite3")  # nothing to do, nothing touched
    assert fault.alone(object()) is None  # type: ignore[arg-type]  # a kind with no scenario of its own
    assert (fault.label, fault.code, fault.counter, fault.position) == (
        "flood at person answers create_a",
        "flood-3",
        "fault.flood",
        (3, 2),
    )
    assert fault.struck((), ((1, "x"), (3, "person answers create_a")))
    assert fault.next_moves(("a",)) == []
    assert (flood.every_scenario, flood.in_process, flood.at_restart, flood.fails_tool_calls) == (False,) * 4


def test_a_kind_at_a_point_strikes_before_the_pauses_there() -> None:
    drip = Fault(Drip(), 4, "x", 2)
    assert drip.position == (4, 0)
    assert Drip().pass_label(drip) == "x#2"


def test_kinds_are_values_equal_within_their_class_across_a_pickle() -> None:
    """The Ray engine ships moves to other machines: a move must come back equal, with an equal hash."""
    assert LostReply() == LOST_REPLY
    assert hash(LostReply()) == hash(LOST_REPLY)
    assert len({LOST_REPLY, PAUSE, LostReply()}) == 2  # one value per class
    fault = Fault(LOST_REPLY, 2, "tracker accepted create_a")
    again = pickle.loads(pickle.dumps(fault))
    assert again == fault
    assert hash(again) == hash(fault)
    assert {fault: 1}[again] == 1
