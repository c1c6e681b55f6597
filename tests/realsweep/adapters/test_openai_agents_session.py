"""The check's reader of a SQLiteSession (sqlite3 alone) against the SDK's own, and the SDK left unimported."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from agents import SQLiteSession

from crashsweep.realsweep.adapters import openai_agents_agent
from crashsweep.realsweep.adapters.openai_agents_session import MESSAGES, session_events, session_items
from crashsweep.realsweep.adapters.transcripts import session_items as as_events
from tests.realsweep.helpers import run_python

CALL = {"type": "function_call", "call_id": "c1", "name": "create_issue", "arguments": '{"title": "A"}', "id": "fc_1"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "filed issue #1"}
ANSWER = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}


def saved(path: Path, session_id: str, *writes: list[Any]) -> None:
    """Write `writes` to session `session_id` in `path` with the SDK, one add_items each."""
    session = SQLiteSession(session_id, path)
    try:
        for items in writes:
            asyncio.run(session.add_items(items))
    finally:
        session.close()


def sdk_items(path: Path, session_id: str) -> list[Any]:
    """What the SDK's SQLiteSession reads back."""
    session = SQLiteSession(session_id, path)
    try:
        return asyncio.run(session.get_items())
    finally:
        session.close()


def test_the_reader_gives_what_the_sdk_reads_session_by_session_a_bad_row_skipped(tmp_path: Path) -> None:
    """Two sessions in one file, items in order; a row that is not JSON skipped by both readers."""
    path = tmp_path / "session.sqlite"
    saved(path, "1", [{"role": "user", "content": "triage"}], [CALL, OUTPUT], [ANSWER])
    saved(path, "2", [{"role": "user", "content": "other"}])
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"INSERT INTO {MESSAGES} (session_id, message_data) VALUES ('1', 'not json')")
        connection.commit()
    saved(path, "1", [OUTPUT])
    for session_id in ("1", "2", "3"):
        assert session_items(path, session_id) == sdk_items(path, session_id)
    assert session_items(path, "1")[-1] == OUTPUT
    assert session_events(path, "1") == as_events(sdk_items(path, "1"), "1")


def test_no_file_and_a_file_the_sdk_never_wrote_read_as_empty_and_are_left_as_they_were(tmp_path: Path) -> None:
    """A missing file is not created; a database with no session table reads as no items."""
    missing = tmp_path / "missing.sqlite"
    assert session_items(missing, "1") == []
    assert not missing.exists()
    other = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE t (x)")
    assert session_items(other, "1") == []


def test_the_built_in_agent_s_conversation_is_read_without_importing_the_sdk(tmp_path: Path) -> None:
    """The sweep's process reads the built-in agent's session (its check) with no SDK imported."""
    saved(tmp_path / openai_agents_agent.SESSION_FILE, openai_agents_agent.SESSION_ID, [CALL, OUTPUT], [ANSWER])
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from crashsweep.realsweep.adapters import builtin, openai_agents_agent\n"
        "events = openai_agents_agent.conversation(Path('.'))\n"
        "print(json.dumps([[e.f, e.call_id] for e in events]), 'agents' in sys.modules)\n"
    )
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    events, imported = done.stdout.rsplit(" ", 1)
    file, session_id = tmp_path / openai_agents_agent.SESSION_FILE, openai_agents_agent.SESSION_ID
    expected = as_events(sdk_items(file, session_id), session_id)
    assert json.loads(events) == [[e.f, e.call_id] for e in expected]
    assert imported.strip() == "False"
