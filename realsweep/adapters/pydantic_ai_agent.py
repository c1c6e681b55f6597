"""The built-in pydantic-ai agent: a durable agent under DBOS that plays a job, swept by `--framework pydantic-ai`.

An `Agent` with the scripted model (pydantic_ai.scripted_model) and the tracker tools, made
durable by pydantic-ai's `DBOSDurability` capability and run with `run_sync` inside a
`@DBOS.workflow`, as pydantic-ai's DBOS guide runs it: each model request is a DBOS step; the
tools are plain async tools, not steps (pydantic-ai's default: docs/examples/my_pydantic_agent.py
has a tool that is a step). DBOS's system database is SQLite in the work directory. One process
launches DBOS and runs workflow "triage" to its end (starting it, or waiting for its recovery).

Under a sweep the zygote calls `zygote_warm` once per fork: as for the DBOS agent, a system
database is migrated once (dbos.migrated) and laid down in each fresh world.

    python -m crashsweep.realsweep.adapters.pydantic_ai_agent [--job FILE] [--keys on|off] [--call-ids stable|fresh]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dbos import DBOS
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability

from crashsweep.realsweep.adapters.dbos import (
    migrated,
    run_swept,
)
from crashsweep.realsweep.adapters.pydantic_ai import AgentTools, scripted_model, tracker_toolset, warm_up
from crashsweep.realsweep.adapters.script import agent_parser
from crashsweep.spec.job import TRIAGE, Job, load_job

WORKFLOW = "triage"
AGENT_NAME = "triage"
_setup: dict[str, Any] = {}  # the process's agent and job, set by main() before DBOS launches
_agents: dict[tuple[str | None, str, str], tuple[Job, Agent[None, str]]] = {}
"""The job and the agent per (job file, keys, call IDs): made once per process tree (see `agent_for`)."""
_template: list[bytes] = []  # a freshly migrated system database, once the zygote has made it (zygote_warm)


@DBOS.workflow(name="crashsweep.pydantic_ai.triage")
def triage() -> str:
    """Run the agent on the job's prompt; its final answer."""
    agent: Agent[None, str] = _setup["agent"]
    return agent.run_sync(f"Run the {_setup['job'].name} job.").output


def agent_for(args: argparse.Namespace) -> tuple[Job, Agent[None, str]]:
    """The job and the agent of the parsed options: made in the zygote (zygote_warm), or now.

    Made once per process: DBOSDurability registers the agent's operations with DBOS by its
    name, and a second agent of the same name in one process is registered again (DBOS warns).
    """
    key = (args.job, args.keys, args.call_ids)
    if key not in _agents:
        job = TRIAGE if args.job is None else load_job(Path(args.job))
        _agents[key] = job, build(job, keys=args.keys == "on", call_ids=args.call_ids)
    return _agents[key]


def build(job: Job, *, keys: bool, call_ids: str) -> Agent[None, str]:
    """The agent: the scripted model for the job, the tracker tools, DBOSDurability."""
    tools = tracker_toolset(AgentTools(keys=keys))
    return Agent(
        scripted_model(job, call_ids),
        name=AGENT_NAME,
        toolsets=[tools],
        capabilities=[DBOSDurability()],
    )


def parse(argv: list[str]) -> argparse.Namespace:
    """The agent's options."""
    parser = agent_parser("crashsweep.realsweep.adapters.pydantic_ai_agent")
    return parser.parse_args(argv)


def zygote_warm(argv: list[str]) -> None:
    """In the zygote, before a fork: migrate a system database and warm pydantic-ai up, once; make the agent."""
    if not _template:
        _template.append(migrated())
        warm_up()
    agent_for(parse(argv))


def main(argv: list[str] | None = None) -> int:
    """Run workflow "triage" to its end from what the work directory holds."""
    args = parse(sys.argv[1:] if argv is None else argv)
    _setup["job"], _setup["agent"] = agent_for(args)
    run_swept(triage, WORKFLOW, "crashsweep-pydantic-ai", _template[0] if _template else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
