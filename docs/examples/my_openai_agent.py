"""An agent written as in the OpenAI Agents SDK's docs, swept by crashsweep with a handful of lines.

The agent is the docs' tool-calling agent: an `Agent` with function tools, its conversation in
a SQLiteSession, run with `Runner.run_sync`; the comment tool needs a person's approval, so a
run that reaches it stops and its RunState is saved as JSON until the person answers. The
lines marked `# crashsweep` are all it takes to sweep it: a scripted model that plays the
triage job in place of the real one, the tracker tools, the session wrapped in
CrashPointSession, `resume` in place of `Runner.run_sync` (it starts the conversation or goes
on from the session or the saved RunState; a scripted person approves), and the check that
reads the tracker's records and the session's conversation. Sweep it from this folder:

    crashsweep sweep --target my_openai_agent:run --check my_openai_agent:check --depth 1
"""

from __future__ import annotations

from pathlib import Path

from agents import Agent, SQLiteSession, set_tracing_disabled

from crashsweep.realsweep.adapters.openai_agents import (  # crashsweep
    CrashPointSession,
    ScriptedAgentsModel,
    resume,
    tracker_tools,
)
from crashsweep.realsweep.adapters.openai_agents import check as session_check  # crashsweep
from crashsweep.spec.job import TRIAGE  # crashsweep: the job the scripted model plays

set_tracing_disabled(True)  # crashsweep: no trace export (no API key, no network under a sweep)

agent = Agent(
    name="Triage",
    instructions="File today's alerts as issues, then comment on the first one.",
    model=ScriptedAgentsModel(TRIAGE),  # crashsweep: in production, model="gpt-4.1"
    tools=tracker_tools(keys=True, needs_approval=["comment"]),  # crashsweep: create_issue, comment, search_issues
)


def run() -> None:
    """Run conversation "1" to its final answer: start it, or go on after a crash or an approval."""
    session = SQLiteSession("1", "conversation.sqlite")
    saved = CrashPointSession(session)  # crashsweep: crash points around every write
    resume(agent, "Triage today's alerts.", saved, state_file=Path("run-state.json"))  # crashsweep: Runner.run_sync
    session.close()


check = session_check(TRIAGE, "conversation.sqlite", "1")  # crashsweep: the tracker's records, and the session
