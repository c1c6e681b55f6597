"""The built-in OpenAI Agents SDK agent: tracker tools and a SQLiteSession, swept by `--framework openai-agents`.

An `Agent` whose model is the scripted one (it plays the job), with the tracker tools; the
conversation is kept in the SDK's SQLiteSession in the work directory (`session.sqlite`),
wrapped in CrashPointSession. One process runs session "triage" to its final answer with
`resume`: starting it, or going on from what the session holds, as a user's program that
calls `Runner.run(agent, ..., session=session)` again after a restart would. A job whose
writes need approval (`approval = true`) parks the run: its RunState is saved to
`run-state.json` in the work directory, a scripted person approves, and a restart goes on
from that file.

`--transcript-repair` says what a start repairs in the conversation it loads (spec/
CONVERSATIONS.md 7), as a user writes it with the SDK's `RunConfig.session_input_callback`
(openai_agents_repair): none (the default), add-missing-results or both-directions. Under a
sweep with trim-context the sweep cuts the session before a restart (openai_agents_trim). A
request the provider refuses (a result without its call: openai_agents_provider) leaves the
process stuck: it says why last and exits with crashpoint.STUCK_STATUS, and the sweep
restarts nothing.

Under a sweep the zygote calls `zygote_warm` before each fork: the SDK is imported there, the
job, the tools and the agent are made once per command line, and the SDK runs once
(openai_agents_warm); each process opens its own session file. The SDK is imported by
`zygote_warm` and `main`, not by importing this module: the sweep's own process imports it
for `conversation` (the check's reader, openai_agents_session: sqlite3 alone), and so never
imports the SDK.

    python -m crashsweep.realsweep.adapters.openai_agents_agent [--job FILE] [--keys on|off]
        [--call-ids stable|fresh] [--transcript-repair none|add-missing-results|both-directions]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crashsweep.realsweep.adapters.openai_agents_repair import REPAIRS
from crashsweep.realsweep.adapters.openai_agents_session import conversation_events
from crashsweep.realsweep.adapters.script import agent_parser, ledger_ids, made_from, workdir
from crashsweep.spec.history import Event
from crashsweep.spec.job import TRIAGE, Job, load_job

if TYPE_CHECKING:
    from agents import Agent

SESSION_ID = "triage"
SESSION_FILE = "session.sqlite"
STATE_FILE = "run-state.json"
_agents: dict[tuple[object, ...], tuple[Job, Agent[Any]]] = {}
"""The job and the agent per (job file as it is, keys, call IDs: `made_from`), made in the zygote by `zygote_warm`."""
REPAIR = "--transcript-repair"
"""The option that says what a start repairs in the conversation it loads (openai_agents_repair.REPAIRS)."""


def build(job: Job, *, keys: bool, call_ids: str) -> Agent[Any]:
    """The agent: the scripted model, the tracker tools (writes wait for approval where the job says so)."""
    from agents import Agent

    from crashsweep.realsweep.adapters.openai_agents import ScriptedAgentsModel, tracker_tools

    def needs_approval(call_id: str) -> bool:
        job_call = ledger_ids(workdir()).get(call_id, call_id)
        return job_call in {c.id for c in job.calls} and job.call(job_call).approval

    return Agent(
        name="triage",
        instructions=f"Run the {job.name} job with the tracker's tools.",
        model=ScriptedAgentsModel(job, call_ids),
        tools=tracker_tools(keys=keys, needs_approval=needs_approval),
    )


def parse(argv: list[str]) -> argparse.Namespace:
    """The agent's options."""
    parser = agent_parser("crashsweep.realsweep.adapters.openai_agents_agent")
    parser.add_argument(REPAIR, choices=REPAIRS, default=REPAIRS[0])
    return parser.parse_args(argv)


def zygote_warm(argv: list[str]) -> None:
    """In the zygote, before a fork: the SDK imported; the job and the agent for this command line; tracing off.

    Turning tracing off makes the SDK's trace provider, whose exporter builds an HTTP client
    (0.3 s, half of a process's run); made in the zygote, every process finds it made. No
    thread starts: the exporter's worker starts with the first trace, and none is made. The
    SDK's first run is a throwaway agent's (openai_agents_warm.warm_up), once.
    """
    from agents import set_tracing_disabled

    from crashsweep.realsweep.adapters.openai_agents_warm import warm_up

    set_tracing_disabled(True)
    defined(parse(argv))
    warm_up()


def defined(args: argparse.Namespace) -> tuple[Job, Agent[Any]]:
    """The job and the agent for the parsed options: the zygote's, or made now."""
    key = made_from(args)
    if key not in _agents:
        job = TRIAGE if args.job is None else load_job(Path(args.job))
        _agents[key] = job, build(job, keys=args.keys == "on", call_ids=args.call_ids)
    return _agents[key]


def main(argv: list[str] | None = None) -> int:
    """Run session "triage" to its final answer from what the work directory holds; STUCK_STATUS when refused."""
    from agents import RunConfig, SQLiteSession, set_tracing_disabled

    from crashsweep.realsweep.adapters.openai_agents import CrashPointSession, resume
    from crashsweep.realsweep.adapters.openai_agents_provider import stuck_line
    from crashsweep.realsweep.adapters.openai_agents_repair import session_input_callback
    from crashsweep.realsweep.probe.crashpoint import STUCK_STATUS

    set_tracing_disabled(True)  # no trace export: no API key, no network (made in the zygote already)
    args = parse(sys.argv[1:] if argv is None else argv)
    job, agent = defined(args)
    config = RunConfig(session_input_callback=session_input_callback(args.transcript_repair))
    session = SQLiteSession(SESSION_ID, workdir() / SESSION_FILE)
    try:
        state_file = workdir() / STATE_FILE
        resume(agent, f"Run the {job.name} job.", CrashPointSession(session), state_file=state_file, run_config=config)
    except Exception as error:
        line = stuck_line(error)
        if line is None:
            raise
        print(line, file=sys.stderr)  # every later request is refused too: the run can never go on
        return STUCK_STATUS
    finally:
        session.close()
    return 0


def conversation(folder: Path) -> tuple[Event, ...]:
    """What session "triage" saved in the work folder `folder` and what the provider refused, as History events.

    The check reads it (openai_agents_session.conversation_events).
    """
    return conversation_events(folder, SESSION_FILE, SESSION_ID)


if __name__ == "__main__":
    sys.exit(main())
