"""A pydantic-ai agent made durable with DBOS, as in pydantic-ai's DBOS guide, swept by crashsweep.

An `Agent` with three tools (create_issue, search_issues, comment), made durable by the
`DBOSDurability` capability and run with `run_sync` inside a `@DBOS.workflow`; DBOS keeps its
records in SQLite in the current directory. create_issue and search_issues are plain tools, as
pydantic-ai runs them by default (not DBOS steps: they run again when DBOS recovers the
workflow); comment is a `@DBOS.step()`, whose recorded result is not redone. The lines marked
`# crashsweep` are all it takes to sweep it: a scripted model that plays the triage job in
place of the real one, the tracker in the tools' bodies, the crash points on DBOS's records,
`launch_or_recover` to start the workflow or wait for DBOS to recover it, and the default
check. Sweep it from this folder:

    crashsweep sweep --target my_pydantic_agent:run --check my_pydantic_agent:check --depth 1
    crashsweep sweep --target my_pydantic_agent:run --check my_pydantic_agent:check --depth 1 --arg keys=off
"""

from __future__ import annotations

from dbos import DBOS, DBOSConfig
from pydantic_ai import Agent, RunContext
from pydantic_ai.durable_exec.dbos import DBOSDurability

from crashsweep.realsweep.adapters.dbos import POLL, install_crash_points, launch_or_recover  # crashsweep
from crashsweep.realsweep.adapters.pydantic_ai import AgentTools, scripted_model  # crashsweep
from crashsweep.realsweep.adapters.pydantic_ai import check as agent_check  # crashsweep
from crashsweep.realsweep.adapters.script import target_args  # crashsweep: --arg key=value
from crashsweep.spec.job import TRIAGE  # crashsweep: the job the scripted model plays

CRASHSWEEP_ARGS = {"keys": ("on", "off")}  # crashsweep: the --arg keys it takes
tracker = AgentTools(keys=True)  # crashsweep: the tracker, in place of your issue tracker's API
model = scripted_model(TRIAGE)  # crashsweep: in production, "openai:gpt-5" or any model

agent: Agent[None, str] = Agent(
    model,
    name="triage",
    instructions="Triage today's alerts: file an issue for each, then comment on the first.",
    capabilities=[DBOSDurability()],
)


@agent.tool
async def create_issue(ctx: RunContext[None], title: str) -> str:
    """File an issue in the tracker with this title."""
    return tracker.create_issue(ctx, title)  # crashsweep


@agent.tool_plain
async def search_issues(query: str) -> str:
    """Search the tracker's issues."""
    return tracker.search(query)  # crashsweep


@agent.tool
@DBOS.step()
async def comment(ctx: RunContext[None], issue_title: str, body: str) -> str:
    """Comment on the issue with this title (a DBOS step: once recorded, not redone)."""
    return tracker.comment(ctx, issue_title, body)  # crashsweep


@DBOS.workflow()
def triage_alerts(prompt: str) -> str:
    """The agent's run, durable: its model requests and the comment step are recorded."""
    return agent.run_sync(prompt).output


def run() -> None:
    """Run workflow "triage-1" to its end: start it, or let DBOS recover it after a crash."""
    tracker.keys = target_args().get("keys", "on") == "on"  # crashsweep: --arg keys=off sends no keys
    config: DBOSConfig = {
        "name": "my-pydantic-agent",
        "system_database_url": "sqlite:///dbos.sqlite",
        "notification_listener_polling_interval_sec": POLL,  # crashsweep: DBOS.destroy() waits for one poll
    }
    install_crash_points()  # crashsweep: crash points on DBOS's records
    DBOS(config=config)
    try:
        launch_or_recover(triage_alerts, "triage-1", "Triage today's alerts.")  # crashsweep: start, or recover
    finally:
        DBOS.destroy()


check = agent_check(TRIAGE)  # crashsweep: the tracker's records, mapped back to the job's calls
