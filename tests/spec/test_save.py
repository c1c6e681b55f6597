"""Tests of crashsweep.spec.save: the two-step save's instructions and crash point names."""

from __future__ import annotations

from crashsweep.spec.ops import LOCK, Point, Rename, WriteTmp
from crashsweep.spec.save import save, save_marker, save_result, take_lock


def test_save_writes_tmp_then_renames() -> None:
    """Save(what): temp file, `what: tmp written`, rename, `what: renamed`."""
    assert save("turn 1") == (WriteTmp(), Point("turn 1: tmp written"), Rename(), Point("turn 1: renamed"))


def test_marker_and_result_saves_have_a_point_of_their_own() -> None:
    """Marker and result saves end with `marker saved <call>` / `result saved <call>`."""
    assert [op.name for op in save_marker("a") if isinstance(op, Point)] == [
        "marker a: tmp written",
        "marker a: renamed",
        "marker saved a",
    ]
    assert save_result("a")[-1] == Point("result saved a")


def test_lock_is_its_own_file() -> None:
    """The lock is written by temp file and rename of the lock file."""
    assert take_lock() == (WriteTmp(LOCK), Point("lock: tmp written"), Rename(LOCK), Point("lock: renamed"))


def test_equal_saves_are_one_shared_tuple() -> None:
    """A save's instructions are made once: asked again, the same tuple, equal to one made afresh."""
    assert save("turn 2") is save("turn 2")
    assert save("turn 2") == (WriteTmp(), Point("turn 2: tmp written"), Rename(), Point("turn 2: renamed"))
    assert save_result("b") is save_result("b")
