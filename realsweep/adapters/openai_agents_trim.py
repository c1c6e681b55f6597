"""trim-context on an OpenAI Agents SDK session: a restart finds its oldest items compacted away (CONVERSATIONS.md 7).

The fault (spec/FAULTS.md 9): at a restart, the stored conversation loses its oldest messages
up to and including the reply (the function_call items) of the oldest turn whose reply is
still stored and which has a result; that turn's function_call_output items stay, now without
their calls. A SQLiteSession is cut here as a compaction would cut it: the rows are deleted
from `agent_messages` (sqlite3 alone, no SDK imported) in the work directory of a saved world,
before the restarted process opens it. The deleted items are moved aside, one JSON item a line,
to openai_agents_session.ASIDE_FILE in the work directory: the scripted model reads the run's
progress there too (it never redoes a turn because it was trimmed), and the check reads the
whole saved conversation (what was stored before the compaction took part of it).

The sweep strikes between two processes, as key-expiry does (realsweep/faults/trim_context.py,
the kind): `chance(world)` says whether a restart from a saved world can be trimmed (the
built-in agent's session holds such a turn and the run is not done: the first start stores
nothing, so only a restart is offered a trim), `cut(files)` trims once in a copy's work
directory. Each later strike trims the next turn the same way. `register()` hands both to the
kind, which cannot import the adapters.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from crashsweep.realsweep.adapters.openai_agents_agent import SESSION_FILE, SESSION_ID
from crashsweep.realsweep.adapters.openai_agents_session import ASIDE_FILE, MESSAGES, session_items
from crashsweep.realsweep.faults import trim_context
from crashsweep.realsweep.world import World


def _kind(item: Any) -> str:
    return str(item.get("type", "message")) if isinstance(item, dict) else ""


def replies(items: Sequence[Any]) -> list[tuple[int, int]]:
    """Each reply of the conversation: (index of its first function_call, index of its last), in order.

    A reply is a run of consecutive function_call items (one response's calls, as the SDK stores them).
    """
    found: list[tuple[int, int]] = []
    for n, item in enumerate(items):
        if _kind(item) != "function_call":
            continue
        if found and found[-1][1] == n - 1:
            found[-1] = (found[-1][0], n)
        else:
            found.append((n, n))
    return found


def trimmable(items: Sequence[Any]) -> tuple[int, int] | None:
    """The oldest turn to trim: (its position among the stored replies, from 0; the index of its reply's last call).

    A turn qualifies when its reply is stored and some call of it has a stored result. A
    conversation that ends with the final answer (the run done) has none.
    """
    if items and _kind(items[-1]) == "message" and items[-1].get("role") == "assistant":
        return None
    outputs = {str(i.get("call_id")) for i in items if _kind(i) == "function_call_output"}
    for position, (first, last) in enumerate(replies(items)):
        if any(str(items[n].get("call_id")) in outputs for n in range(first, last + 1)):
            return position, last
    return None


def _rows(connection: sqlite3.Connection, session_id: str) -> list[tuple[int, Any]]:
    """The session's rows that hold a JSON item, as (row ID, item), oldest first (as `get_items` reads them)."""
    rows = []
    for row_id, data in connection.execute(
        f"SELECT id, message_data FROM {MESSAGES} WHERE session_id = ? ORDER BY id ASC", (session_id,)
    ):
        try:
            rows.append((int(row_id), json.loads(data)))
        except (json.JSONDecodeError, TypeError):
            continue
    return rows


def trim(path: Path, session_id: str, folder: Path) -> bool:
    """Trim session `session_id` in the SQLite file `path` once (see the module docstring); whether it could.

    The deleted items are appended to ASIDE_FILE in `folder` before the rows go.
    """
    if not path.exists():
        return False
    with closing(sqlite3.connect(path)) as connection:
        rows = _rows(connection, session_id)
        found = trimmable([item for _, item in rows])
        if found is None:
            return False
        with open(folder / ASIDE_FILE, "a", encoding="utf-8") as aside:
            aside.writelines(json.dumps(item) + "\n" for _, item in rows[: found[1] + 1])
        cut_at = rows[found[1]][0]
        connection.execute(f"DELETE FROM {MESSAGES} WHERE session_id = ? AND id <= ?", (session_id, cut_at))
        connection.commit()
    return True


def chance(world: World) -> bool:
    """Whether a restart from the saved `world` can trim the built-in agent's session (trim-context's chance).

    The world holds the session's database file and its WAL as bytes: they are laid out in a
    scratch folder and read there as a restart would read them.
    """
    data = world.file(SESSION_FILE)
    if data is None:
        return False
    with tempfile.TemporaryDirectory(prefix="trim-chance-") as scratch:
        for suffix in ("", "-wal"):
            found = world.file(SESSION_FILE + suffix)
            if found is not None:
                (Path(scratch) / (SESSION_FILE + suffix)).write_bytes(found)
        return trimmable(session_items(Path(scratch) / SESSION_FILE, SESSION_ID)) is not None


def cut(files: Path) -> bool:
    """Trim the built-in agent's session in the work directory `files` once (the strike); whether it could."""
    return trim(files / SESSION_FILE, SESSION_ID, files)


def register() -> None:
    """Hand `chance` and `cut` to the trim-context kind (realsweep/faults/trim_context.py), once."""
    trim_context.register(chance, cut)


register()
