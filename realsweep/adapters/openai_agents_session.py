"""A SQLiteSession's saved conversation read with sqlite3 alone: the check's reader, with no SDK imported.

The check runs in the sweep's own process (crashsweep's command line), which never imports a
framework: the built-in agent's zygote does. Reading the saved conversation through the SDK's
SQLiteSession imported the SDK there (1.3 s of CPU, the first time a scenario was checked).
This reads the rows SQLiteSession writes (openai-agents 0.24.0, the version the extra pins):
table `agent_messages`, one JSON item per row in `message_data`, in the order of `id`, as
`SQLiteSession.get_items()` does with no limit, a row that is not JSON skipped as it skips it.
tests/realsweep/adapters/test_openai_agents_session.py holds it equal to the SDK's reader.

It only reads: no table is created and the journal mode is left as the SDK set it (WAL), and a
file that does not exist is not created. `conversation_events` adds what a trim-context strike
moved aside (openai_agents_trim) and the requests the provider refused (openai_agents_provider):
what the run saved and sent, which the check judges.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from crashsweep.realsweep.adapters import transcripts
from crashsweep.realsweep.adapters.openai_agents_provider import refused_events
from crashsweep.spec.history import Event

MESSAGES = "agent_messages"
"""SQLiteSession's table of items (its `messages_table` default)."""
ASIDE_FILE = "trimmed-items.jsonl"
"""The items a compaction took out of the session, oldest first, one JSON item a line, in the
work directory (written by the trim-context strike, openai_agents_trim)."""


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


def aside_items(folder: Path) -> list[Any]:
    """The items compactions moved out of the session in work directory `folder`, oldest first ([] for none)."""
    path = folder / ASIDE_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def conversation_events(folder: Path, session_file: str | Path, session_id: str) -> tuple[Event, ...]:
    """What the run in work directory `folder` saved and sent, as History events (the check reads these).

    The saved conversation is what the session stored over the run: the items a compaction moved
    aside (trim-context), then the session's rows; each request the provider refused follows as
    a conversation of its own (openai_agents_provider.refused_events). Without a trim or a
    refusal, this is `session_events` of the file.
    """
    saved = [*aside_items(folder), *session_items(folder / session_file, session_id)]
    return transcripts.session_items(saved, session_id) + refused_events(folder, session_id)
