"""key-expiry for real: a restart's move, no process is told, the saved world's tracker forgets its keys."""

from __future__ import annotations

from pathlib import Path

from crashsweep.realsweep.faults.key_expiry import KEY_EXPIRY, RESTART
from crashsweep.realsweep.tracker.store import Store
from tests.realsweep.faults.points import PAUSES, POINTS


def test_the_move_at_a_restart_is_named_as_the_model_names_it() -> None:
    expiry = KEY_EXPIRY.restart()
    assert (expiry.point, expiry.label, expiry.counter, expiry.code) == (
        RESTART,
        "key-expiry at restart",
        "fault.key-expiry",
        "key-expiry-0",
    )
    assert expiry.env() == {}  # no process is told anything


def test_it_has_no_chance_inside_a_process() -> None:
    """It strikes between processes (dedup/graph.py makes it a move), never at a point or pause."""
    assert KEY_EXPIRY.chances(POINTS, PAUSES, (0, 0)) == []
    assert (KEY_EXPIRY.at_restart, KEY_EXPIRY.in_process) == (True, False)


def test_before_a_restart_the_tracker_forgets_every_key_and_keeps_its_records(tmp_path: Path) -> None:
    path = tmp_path / "space.sqlite3"
    store = Store(path, honours_keys=True)
    store.create_issue("a", "", "run-1", "create_a", "k1")
    store.close()
    KEY_EXPIRY.restart().before_restart(path)
    store = Store(path, honours_keys=True)
    try:
        assert [r["call"] for r in store.records()] == ["create_a"]
        again = store.create_issue("a", "", "run-1", "create_a", "k1")
        assert again == (201, {"number": 2, "kind": "issue", "title": "a"})  # the key was forgotten
    finally:
        store.close()
