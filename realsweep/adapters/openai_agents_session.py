"""A SQLiteSession's saved conversation read with sqlite3 alone: the check's reader, with no SDK imported.

The check runs in the sweep's own process (crashsweep's command line), which never imports a
framework: the built-in agent's zygote does. Reading the saved conversation through the SDK's
SQLiteSession imported the SDK there (1.3 s of CPU, the first time a scenario was checked).
This reads the rows SQLiteSession writes (openai-agents 0.24.0, the version the extra pins):
table `agent_messages`, one JSON item per row in `message_data`, in the order of `id`, as
`SQLiteSession.get_items()` does with no limit, a row that is not JSON skipped as it skips it.
tests/realsweep/adapters/test_openai_agents_session.py holds it equal to the SDK's reader.

It only reads: no table is created and the journal mode is left as the SDK set it (WAL), and a
file that does not exist is not created.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from crashsweep.realsweep.adapters import transcripts
from crashsweep.spec.history import Event

MESSAGES = "agent_messages"
"""SQLiteSession's table of items (its `messages_table` default)."""


def session_items(path: Path, session_id: str) -> list[Any]:
    """The items session `session_id` saved in the file `path`, oldest first ([] for no file or no table)."""
    if not path.exists():
        return []
    with closing(sqlite3.connect(path)) as connection:
        try:
            rows = connection.execute(
                f"SELECT message_data FROM {MESSAGES} WHERE session_id = ? ORDER BY id ASC", (session_id,)
            ).fetchall()
        except sqlite3.OperationalError:  # no such table: the SDK never wrote this file
            return []
    items = []
    for (data,) in rows:
        try:
            items.append(json.loads(data))
        except (json.JSONDecodeError, TypeError):
            continue
    return items


def session_events(path: Path, session_id: str) -> tuple[Event, ...]:
    """The conversation session `session_id` saved in the file `path`, as History events (run: the session ID)."""
    return transcripts.session_items(session_items(path, session_id), session_id)
