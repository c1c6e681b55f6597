"""The reference importer on the checkpoints a real sweep of the reference loop left (slow: a sweep).

`crashsweep sweep --variant save-after-reply --job examples/one-write.toml --tracker keyless
--depth 1 --keep DIR` runs the reference loop once per crash point and restarts it; DIR keeps
each finished scenario's process folder (processes/pN/: the sweep's own history.jsonl, and the
loop's work/checkpoint.json) and its tracker's database (tracker/pN.sqlite3), and each world a
crash left (worlds/*/files/checkpoint.json). `audit DIR` reads each kept process as one unit
(importers/units.py): its checkpoint and its tracker's database.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from crashsweep.importers import reference_checkpoint
from crashsweep.importers.units import units
from crashsweep.spec.auditing import audit
from crashsweep.spec.history import FINISHED, History, read
from tests.importers.real.kept import swept

SWEEP = ["--variant", "save-after-reply", "--job", "examples/one-write.toml", "--tracker", "keyless"]
CONVERSATION = ("model_call", "tool_call", "result_saved")


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a depth-1 sweep of save-after-reply kept."""
    return swept(tmp_path_factory, *SWEEP)


def tracker_runs(path: Path) -> set[str]:
    """The runs of the tracker's records, read from its database (read-only)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return {row[0] for row in db.execute("SELECT run FROM records")}


def finished(history: History) -> bool:
    """Some `run_status` of the history says a run finished."""
    return any(e.f == "run_status" and e.status == FINISHED for e in history.events)


def test_each_kept_process_is_the_run_the_tracker_holds_and_ends_as_the_sweep_says(kept: Path) -> None:
    """For each processes/pN with a history: one run, the tracker's records' run; `finished` as the sweep's history.

    The conversation is the one the sweep's check read from the same checkpoint (its events of
    src "checkpoint"): in a finished scenario every turn is complete, so no call lacks a result.
    """
    processes = sorted(p for p in kept.glob("processes/p*") if (p / "history.jsonl").exists())
    assert processes
    for process in processes:
        (history,) = reference_checkpoint.read(process / "work" / "checkpoint.json")
        runs = {e.run for e in history.events}
        assert len(runs) == 1, process
        assert runs == tracker_runs(kept / "tracker" / f"{process.name}.sqlite3"), process
        sweeps = read(process / "history.jsonl")
        assert finished(history) == finished(sweeps), process
        checked = [(e.f, e.call) for e in sweeps.events if e.src == "checkpoint"]
        assert [(e.f, e.call) for e in history.events if e.f in CONVERSATION] == checked, process


def test_every_world_a_crash_left_reads_and_finishes_only_when_done(kept: Path) -> None:
    """Each crashed world's checkpoint reads as one run of the sweep's; `finished` exactly where it says done.

    The sweep restarts every scenario from the same first run, so each world's run is one the
    kept processes' checkpoints hold; a crash strikes at any save, so some world is not done.
    """
    runs = {json.loads(path.read_text())["run"] for path in kept.glob("processes/p*/work/checkpoint.json")}
    worlds = sorted(kept.glob("worlds/*/files/checkpoint.json"))
    assert worlds
    done = []
    for world in worlds:
        (history,) = reference_checkpoint.read(world)
        assert {e.run for e in history.events} <= runs, world
        said = json.loads(world.read_text())["done"]
        assert finished(history) == said, world
        done.append(said)
    assert False in done


def test_each_kept_world_audits_as_its_checkpoint_and_tracker_and_finds_the_sweeps_duplicates(kept: Path) -> None:
    """`audit DIR`'s units: one a process, its checkpoint and tracker database, under one-write's job.

    Judged together they make one run, and no-duplicate is violated exactly where the sweep's
    own history holds two records of create_a (a crash after the keyless tracker accepted it).
    """
    found = units([kept])
    processes = sorted(p for p in kept.glob("processes/p*") if (p / "history.jsonl").exists())
    assert [unit.name for unit in found] == [str(p) for p in processes]
    doubled = 0
    for unit, process in zip(found, processes, strict=True):
        assert [(s.path.name, s.kind) for s in unit.sources] == [
            ("checkpoint.json", "reference"),
            (f"{process.name}.sqlite3", "ledger"),
        ]
        assert (unit.expected, unit.gated) == (("create_a",), ())  # examples/one-write.toml: one write, none gated
        (run,) = audit(unit.name, [h for s in unit.sources for h in s.histories], unit.expected, unit.gated)
        records = [e for e in read(process / "history.jsonl").events if e.f == "effect" and e.type == "ok"]
        assert ("no-duplicate" in {v.name for v in run.violated}) == (len(records) > 1), process
        doubled += len(records) > 1
    assert doubled > 0
