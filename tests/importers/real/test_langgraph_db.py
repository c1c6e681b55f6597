"""The langgraph importer on the checkpoints a real sweep of the built-in LangGraph agent left (slow: a sweep).

`crashsweep sweep --framework langgraph --depth 1 --keys off --keep DIR` runs the agent
(realsweep/adapters/langgraph_agent.py: thread "triage", SqliteSaver in work/checkpoints.sqlite)
once per crash point and restarts it; DIR keeps each finished scenario's work folder beside
its history (processes/p*/) and each world a crash left, WAL file and all (worlds/*/files/).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from crashsweep.importers import langgraph_db
from crashsweep.spec.history import History, read
from crashsweep.spec.invariants import well_formed_transcript
from tests.importers.real.kept import finished, swept

TRIAGE = [
    ("model_call", ""),
    ("tool_call", "create_a"),
    ("tool_call", "create_b"),
    ("result_saved", "create_a"),
    ("result_saved", "create_b"),
    ("model_call", ""),
    ("tool_call", "search"),
    ("tool_call", "comment_a"),
    ("result_saved", "search"),
    ("result_saved", "comment_a"),
    ("model_call", ""),
]
"""The triage job's conversation finished, by hand from its turns (spec/job.py's TRIAGE, stable call
IDs): a model call, the turn's two calls, their results (ToolNode answers in order), twice; the answer."""


def last_checkpoint(path: Path) -> str:
    """The src naming the thread "triage"'s last checkpoint, as SqliteSaver orders them."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        query = "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'triage' AND checkpoint_ns = ''"
        return f"{path.name}:checkpoint {db.execute(query).fetchone()[0]}"


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a depth-1 sweep of the LangGraph agent kept."""
    return swept(tmp_path_factory, "--framework", "langgraph", "--keys", "off")


def test_each_finished_scenario_is_the_conversation_the_sweeps_check_read(kept: Path) -> None:
    """Every kept process: thread "triage", TRIAGE's conversation, the events the sweep's own check read.

    The thread's `finished` is there exactly when the sweep's history says the run finished (a
    `run_status` `finished`), last, naming the thread's last checkpoint.
    """
    processes = sorted(kept.glob("processes/p*"))
    assert processes
    done = 0
    for process in processes:
        path = process / "work" / "checkpoints.sqlite"
        (history,) = langgraph_db.read(path)
        conversation = tuple(e for e in history.events if e.f != "run_status")
        assert [(e.f, e.call_id) for e in conversation] == TRIAGE, process
        assert {e.run for e in history.events} == {"triage"}
        checked = [(e.f, e.call_id, e.tool) for e in read(process / "history.jsonl").events if e.src == "checkpoint"]
        assert [(e.f, e.call_id, e.tool) for e in conversation] == checked, process
        swept = finished(read(process / "history.jsonl").events)
        assert finished(history.events) == swept, process
        assert history.facts == {"transcript", "status"}
        if swept:
            assert (history.events[-1].f, history.events[-1].src) == ("run_status", last_checkpoint(path)), process
            done += 1
    assert done > 0  # the sweep's runs all restart to the end: "exactly when" is not checked on nothing


def test_every_world_a_crash_left_reads_and_results_saved_before_a_checkpoint_count(
    kept: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each crashed world's database reads; each conversation is a well-formed prefix of TRIAGE's.

    Under LangGraph's async durability a crash can strike after the tools' writes were saved
    and before the next checkpoint: some world holds results from pending writes only. Whether
    a sweep's kills land in that window is up to LangGraph's background writer (docs/guide/
    frameworks.md, "Threads": a loaded machine can leave it behind every kill), so where the
    kept sweep has no such world, up to two more sweeps are read. A world is `finished` exactly
    when its thread holds the whole of TRIAGE (the answer saved, in a checkpoint or a pending
    write); some world is, some is not.
    """
    pending, ends = _read_worlds(kept)
    for _ in range(2):
        if pending:
            break
        pending += _read_worlds(swept(tmp_path_factory, "--framework", "langgraph", "--keys", "off"))[0]
    assert pending > 0
    assert ends == {True, False}


def _read_worlds(kept: Path) -> tuple[int, set[bool]]:
    """Check every world of a kept sweep; the results saved from pending writes, and whether each world finished."""
    worlds = sorted(kept.glob("worlds/*/files/checkpoints.sqlite"))
    assert worlds
    pending, ends = 0, set()
    for world in worlds:
        histories = langgraph_db.read(world)
        for history in histories:
            shapes = [(e.f, e.call_id) for e in history.events if e.f != "run_status"]
            assert shapes == TRIAGE[: len(shapes)], world
            assert well_formed_transcript.check(History(history.events)) is None, world
            assert finished(history.events) == (shapes == TRIAGE), world
            assert [e.f for e in history.events].count("run_status") in {0, 1}, world
            if finished(history.events):
                assert history.events[-1].f == "run_status", world
            pending += sum(e.f == "result_saved" and " write of task " in e.src for e in history.events)
            ends.add(finished(history.events))
    return pending, ends
