"""The dbos importer on the system databases a real sweep of the built-in DBOS agent left (slow: a sweep).

`crashsweep sweep --framework dbos --depth 1 --keys off --no-determinism --keep DIR` runs the
agent (realsweep/adapters/dbos_agent.py: workflow "triage", its system database work/dbos.sqlite)
once per crash point and restarts it; DIR keeps each finished scenario's work folder
(processes/p*/) and each world a crash left (worlds/*/files/). `--no-determinism`: the
determinism check DBOS's depth-1 sweep makes first runs the sweep's options again, --keep
included, and stops at the folder the sweep itself filled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.importers import dbos_db
from crashsweep.spec.history import Event
from tests.importers.real.kept import swept

STEPS = [("ask_model", 1), ("run_tool", 2), ("run_tool", 3), ("ask_model", 4), ("run_tool", 5), ("run_tool", 6)]
STEPS += [("ask_model", 7)]
"""The triage workflow's steps, by hand from its code and TRIAGE's two turns of two calls: ask the
model, run each call of the turn, twice, then the ask whose answer ends it."""
DONE = [*(("tool_run", "ok", f"triage:{n}", tool, "") for tool, n in STEPS), ("run_status", "ok", "", "", "finished")]


def shape(events: tuple[Event, ...]) -> list[tuple[str, str, str, str, str]]:
    """Each event's f, type, call, tool and status."""
    return [(e.f, e.type, e.call, e.tool, e.status) for e in events]


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a depth-1 sweep of the DBOS agent kept."""
    return swept(tmp_path_factory, "--framework", "dbos", "--keys", "off", "--no-determinism")


def test_each_finished_scenario_is_its_seven_steps_and_success(kept: Path) -> None:
    """Every kept process's database: workflow "triage", its seven steps recorded once each, SUCCESS.

    A step a crash interrupted ran again after the restart, and only its last attempt has a row.
    """
    processes = sorted(kept.glob("processes/p*"))
    assert processes
    for process in processes:
        (history,) = dbos_db.read(process / "work" / "dbos.sqlite")
        assert shape(history.events) == DONE, process


def test_every_world_a_crash_left_is_a_prefix_of_the_steps_and_no_status_until_the_end(kept: Path) -> None:
    """Each crashed world's database reads as the steps recorded before the crash, in order.

    A workflow left PENDING has no status; some crash left the workflow unfinished.
    """
    worlds = sorted(kept.glob("worlds/*/files/dbos.sqlite"))
    assert worlds
    unfinished = 0
    for world in worlds:
        for history in dbos_db.read(world):
            shapes = shape(history.events)
            assert shapes == DONE[: len(shapes)], world
            unfinished += not history.of("run_status")
    assert unfinished > 0
