"""The openai-session importer on the sessions a real sweep of the built-in Agents SDK agent left (slow: a sweep).

`crashsweep sweep --framework openai-agents --depth 1 --keys off --keep DIR` runs the agent
(realsweep/adapters/openai_agents_agent.py: an SQLiteSession in work/session.sqlite) once per
crash point and restarts it; DIR keeps each finished scenario's work folder beside its
history (processes/p*/) and each world a crash left (worlds/*/files/).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from crashsweep.importers import openai_session
from crashsweep.spec.history import History, read
from crashsweep.spec.invariants import well_formed_transcript
from tests.importers.real.kept import finished, swept

TRIAGE = [
    ("model_call", ""),
    ("tool_call", "create_a"),
    ("result_saved", "create_a"),
    ("tool_call", "create_b"),
    ("result_saved", "create_b"),
    ("model_call", ""),
    ("tool_call", "search"),
    ("result_saved", "search"),
    ("tool_call", "comment_a"),
    ("result_saved", "comment_a"),
    ("model_call", ""),
]
"""The triage job's session finished, by hand from its turns (spec/job.py's TRIAGE, stable call
IDs): a model call, each call of the turn with its result (a call is sent with its output), twice;
the answer."""


def last_row(path: Path, session: str) -> tuple[str, float]:
    """The session's last item: its row's src and its created_at (SQLite's UTC text) in seconds."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        query = "SELECT id, created_at FROM agent_messages WHERE session_id = ? ORDER BY id DESC LIMIT 1"
        number, created = db.execute(query, (session,)).fetchone()
    return f"{path.name}:agent_messages row {number}", datetime.fromisoformat(created).replace(tzinfo=UTC).timestamp()


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a depth-1 sweep of the Agents SDK agent kept."""
    return swept(tmp_path_factory, "--framework", "openai-agents", "--keys", "off")


def test_each_finished_scenario_is_the_conversation_the_sweeps_check_read(kept: Path) -> None:
    """Every kept process: one session, TRIAGE's conversation, the events the sweep's own check read.

    The session's `finished` is there exactly when the sweep's history says the run finished (a
    `run_status` `finished`), last, at the session's last row and with its time (the answer's).
    """
    processes = sorted(kept.glob("processes/p*"))
    assert processes
    done = 0
    for process in processes:
        path = process / "work" / "session.sqlite"
        (history,) = openai_session.read(path)
        conversation = tuple(e for e in history.events if e.f != "run_status")
        assert [(e.f, e.call_id) for e in conversation] == TRIAGE, process
        checked = [(e.f, e.call_id, e.tool) for e in read(process / "history.jsonl").events if e.src == "session"]
        assert [(e.f, e.call_id, e.tool) for e in conversation] == checked, process
        swept = finished(read(process / "history.jsonl").events)
        assert finished(history.events) == swept, process
        assert history.facts == {"transcript", "status"}
        if swept:
            status = history.events[-1]
            assert status.f == "run_status", process
            assert (status.src, status.time) == last_row(path, status.run), process
            done += 1
    assert done > 0  # the sweep's runs all restart to the end: "exactly when" is not checked on nothing


def test_every_world_a_crash_left_reads_as_a_well_formed_prefix(kept: Path) -> None:
    """Each crashed world's session reads as a prefix of TRIAGE's conversation, well-formed; some hold a turn.

    A world is `finished` exactly when its session holds the whole of TRIAGE (the crash came
    after the answer was saved: "after session write final answer"); some world is, some is not.
    """
    worlds = sorted(kept.glob("worlds/*/files/session.sqlite"))
    assert worlds
    longest, ends = 0, set()
    for world in worlds:
        for history in openai_session.read(world):
            shapes = [(e.f, e.call_id) for e in history.events if e.f != "run_status"]
            assert shapes == TRIAGE[: len(shapes)], world
            assert well_formed_transcript.check(History(history.events)) is None, world
            assert finished(history.events) == (shapes == TRIAGE), world
            assert [e.f for e in history.events].count("run_status") in {0, 1}, world
            if finished(history.events):
                assert history.events[-1].f == "run_status", world
            longest = max(longest, len(shapes))
            ends.add(finished(history.events))
    assert longest >= 5  # a crash after the first turn was saved
    assert ends == {True, False}
