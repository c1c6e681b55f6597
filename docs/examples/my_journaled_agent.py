"""An OpenAI Agents SDK agent whose own session redoes a write after a crash, and so saves a tool output twice.

The agent is my_openai_agent.py's, without approvals, with a session of the program's own: it
journals each write (the items, to `journal.json`) before it adds them to its SQLiteSession,
and removes the journal after. Started again, it redoes a write the journal still holds, as a
write-ahead log does, but without asking whether the write reached the session. Killed
between the two (the point `session written, journal kept`), the restart adds the turn's items
again: the saved conversation holds two outputs for one tool call, which the check reads from
the session (openai_agents.check) and well-formed-transcript reports. Sweep it from this folder:

    crashsweep sweep --target my_journaled_agent:run --check my_journaled_agent:check --depth 1
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agents import Agent, SQLiteSession, set_tracing_disabled
from agents.items import TResponseInputItem

from crashsweep import crashpoint  # crashsweep
from crashsweep.realsweep.adapters.openai_agents import (  # crashsweep
    CrashPointSession,
    ScriptedAgentsModel,
    resume,
    tracker_tools,
)
from crashsweep.realsweep.adapters.openai_agents import check as session_check  # crashsweep
from crashsweep.spec.job import TRIAGE  # crashsweep: the job the scripted model plays

set_tracing_disabled(True)  # crashsweep: no trace export (no API key, no network under a sweep)
JOURNAL = Path("journal.json")

agent = Agent(
    name="Triage",
    instructions="File today's alerts as issues, then comment on the first one.",
    model=ScriptedAgentsModel(TRIAGE),  # crashsweep: in production, model="gpt-4.1"
    tools=tracker_tools(keys=True),  # crashsweep: create_issue, comment, search_issues
)


class JournaledSession(SQLiteSession):
    """A SQLiteSession that journals each write first, and redoes a journaled write when started again."""

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Journal the items, add them, then drop the journal."""
        JOURNAL.write_text(json.dumps(items), encoding="utf-8")
        await super().add_items(items)
        crashpoint("session written, journal kept")  # crashsweep: a point of the program's own
        JOURNAL.unlink()

    def redo(self) -> None:
        """Add the journaled items again, if a write was journaled (the bug: it may have reached the session)."""
        if JOURNAL.exists():
            asyncio.run(super().add_items(json.loads(JOURNAL.read_text(encoding="utf-8"))))
            JOURNAL.unlink()


def run() -> None:
    """Run conversation "1" to its final answer, after redoing a journaled write."""
    session = JournaledSession("1", "conversation.sqlite")
    session.redo()
    resume(agent, "Triage today's alerts.", CrashPointSession(session))  # crashsweep: Runner.run_sync
    session.close()


check = session_check(TRIAGE, "conversation.sqlite", "1")  # crashsweep: the records, and the saved conversation
