"""The openai-session importer on the sessions a real sweep of the built-in Agents SDK agent left (slow: a sweep).

`crashsweep sweep --framework openai-agents --depth 1 --keys off --keep DIR` runs the agent
(realsweep/adapters/openai_agents_agent.py: an SQLiteSession in work/session.sqlite) once per
crash point and restarts it; DIR keeps each finished scenario's work folder beside its
history (processes/p*/) and each world a crash left (worlds/*/files/).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.importers import openai_session
from crashsweep.spec.history import History, read
from crashsweep.spec.invariants import well_formed_transcript
from tests.realsweep.helpers import child_env

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


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a depth-1 sweep of the Agents SDK agent kept."""
    folder = tmp_path_factory.mktemp("sweep") / "kept"
    command = [sys.executable, "-m", "crashsweep", "sweep", "--framework", "openai-agents", "--depth", "1"]
    done = subprocess.run(
        [*command, "--keys", "off", "--keep", str(folder)], env=child_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: keys off, the sweep finds duplicates
    return folder


def test_each_finished_scenario_is_the_conversation_the_sweeps_check_read(kept: Path) -> None:
    """Every kept process: one session, TRIAGE's conversation, the events the sweep's own check read."""
    processes = sorted(kept.glob("processes/p*"))
    assert processes
    for process in processes:
        (history,) = openai_session.read(process / "work" / "session.sqlite")
        assert [(e.f, e.call_id) for e in history.events] == TRIAGE, process
        checked = [(e.f, e.call_id, e.tool) for e in read(process / "history.jsonl").events if e.src == "session"]
        assert [(e.f, e.call_id, e.tool) for e in history.events] == checked, process


def test_every_world_a_crash_left_reads_as_a_well_formed_prefix(kept: Path) -> None:
    """Each crashed world's session reads as a prefix of TRIAGE's conversation, well-formed; some hold a turn."""
    worlds = sorted(kept.glob("worlds/*/files/session.sqlite"))
    assert worlds
    longest = 0
    for world in worlds:
        for history in openai_session.read(world):
            shapes = [(e.f, e.call_id) for e in history.events]
            assert shapes == TRIAGE[: len(shapes)], world
            assert well_formed_transcript.check(History(history.events)) is None, world
            longest = max(longest, len(shapes))
    assert longest >= 5  # a crash after the first turn was saved
