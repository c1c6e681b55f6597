"""A pydantic-ai agent on DBOS whose comment tool needs a person's approval, swept by crashsweep.

The agent of my_pydantic_agent.py with plain tools only, and `requires_approval=True` on
comment, as pydantic-ai's deferred-tools guide writes it: when the model calls comment, the
run ends with `DeferredToolRequests`; a person answers each call; the next run goes on from
the message history with `DeferredToolResults`, runs the approved comment, and asks the model
for its final answer. `run_approving` (from the adapter) does that inside the workflow, with
a scripted person (approves every call; `person=` answers otherwise) whose answers are a DBOS
step. The lines marked `# crashsweep` are what sweeping takes. Sweep it from this folder (add
`--arg keys=off` to send no keys):

    crashsweep sweep --target my_pydantic_approval_agent:run --check my_pydantic_approval_agent:check --depth 1
"""

from __future__ import annotations

from dbos import DBOS, DBOSConfig
from pydantic_ai import Agent, RunContext
from pydantic_ai.durable_exec.dbos import DBOSDurability

from crashsweep.realsweep.adapters.dbos import POLL, install_crash_points, launch_or_recover  # crashsweep
from crashsweep.realsweep.adapters.pydantic_ai import AgentTools, run_approving, scripted_model  # crashsweep
from crashsweep.realsweep.adapters.pydantic_ai import check as agent_check  # crashsweep
from crashsweep.realsweep.adapters.script import target_args  # crashsweep: --arg key=value
from crashsweep.spec.job import Call, Job  # crashsweep: the job the scripted model plays

JOB = Job(  # crashsweep: the triage job with its comment approved by a person (examples/triage-approval.toml)
    "triage-approval",
    (
        (Call("create_a", "create_issue", True), Call("create_b", "create_issue", True)),
        (Call("search", "search_issues", False), Call("comment_a", "comment", True, approval=True)),
    ),
)
CRASHSWEEP_ARGS = {"keys": ("on", "off")}  # crashsweep: the --arg keys it takes
tracker = AgentTools(keys=True)  # crashsweep: the tracker, in place of your issue tracker's API

agent: Agent[None, str] = Agent(
    scripted_model(JOB),  # crashsweep: in production, "openai:gpt-5" or any model
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


@agent.tool(requires_approval=True)
async def comment(ctx: RunContext[None], issue_title: str, body: str) -> str:
    """Comment on the issue with this title, once a person approved it."""
    return tracker.comment(ctx, issue_title, body)  # crashsweep


@DBOS.workflow()
def triage_alerts(prompt: str) -> str:
    """The agent's runs, durable: the model's replies and the person's answers are recorded."""
    return str(run_approving(agent, prompt))  # crashsweep: in production, your person's answers


def run() -> None:
    """Run workflow "triage-1" to its end: start it, or let DBOS recover it after a crash."""
    tracker.keys = target_args().get("keys", "on") == "on"  # crashsweep: --arg keys=off sends no keys
    config: DBOSConfig = {
        "name": "my-pydantic-approval-agent",
        "system_database_url": "sqlite:///dbos.sqlite",
        "notification_listener_polling_interval_sec": POLL,  # crashsweep: DBOS.destroy() waits for one poll
    }
    install_crash_points()  # crashsweep: crash points on DBOS's records
    DBOS(config=config)
    try:
        launch_or_recover(triage_alerts, "triage-1", "Triage today's alerts.")  # crashsweep: start, or recover
    finally:
        DBOS.destroy()


check = agent_check(JOB)  # crashsweep: the tracker's records, mapped back to the job's calls
