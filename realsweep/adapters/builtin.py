"""The built-in example agents as sweep targets: `crashsweep sweep --framework NAME`.

Each is one process of the framework's example agent for a job (langgraph_agent.py,
dbos_agent.py, openai_agents_agent.py, pydantic_ai_agent.py, temporal_agent.py), forked from
a zygote that imported the framework once, with the default check (script.check: the
tracker's records mapped back to the job's calls by the model's ledger). What each framework
is (its extra, its agent's module, its durability modes) is its record in frameworks.py.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from crashsweep.realsweep.adapters import openai_agents_trim, script, transcripts
from crashsweep.realsweep.adapters.frameworks import REGISTRY, Framework, named
from crashsweep.realsweep.adapters.openai_agents_repair import REPAIRS
from crashsweep.realsweep.sweep import Check, SweepError, Target
from crashsweep.realsweep.tracker.service import package_pythonpath
from crashsweep.spec.history import Event
from crashsweep.spec.job import Job
from crashsweep.spec.retries import ONE_ATTEMPT

SCHEDULE_TO_CLOSE = (ONE_ATTEMPT,)
"""`--schedule-to-close` values (the Temporal agent's temporal_agent.BUDGETS, without importing temporalio)."""


def require(framework: str) -> Framework:
    """The framework's record; an unknown framework, or one whose package is not installed, refused in one line."""
    record = named(framework)
    missing = record.missing()
    if missing is not None:
        raise SweepError(missing)
    return record


def arguments(
    job_path: Path | None,
    keys: bool,
    call_ids: str,
    durability: str | None,
    transcript_repair: str | None = None,
    schedule_to_close: str | None = None,
) -> list[str]:
    """The example agent's command-line options."""
    args = ["--keys", "on" if keys else "off", "--call-ids", call_ids]
    if durability is not None:
        args += ["--durability", durability]
    if transcript_repair is not None:
        args += ["--transcript-repair", transcript_repair]
    if schedule_to_close is not None:
        args += ["--schedule-to-close", schedule_to_close]
    if job_path is not None:
        args += ["--job", str(job_path.resolve())]
    return args


def label(
    framework: str,
    keys: bool,
    call_ids: str,
    durability: str | None,
    transcript_repair: str | None = None,
    schedule_to_close: str | None = None,
) -> str:
    """The row's name: framework, durability, keys and call IDs (and the transcript repair, the budget, if given)."""
    mode = f" {durability}" if durability is not None else ""
    repair = f", transcript repair {transcript_repair}" if transcript_repair is not None else ""
    budget = f", schedule-to-close {schedule_to_close}" if schedule_to_close is not None else ""
    return f"{framework}{mode}, keys {'on' if keys else 'off'}, call IDs {call_ids}{repair}{budget}"


def target(
    framework: str,
    job_path: Path | None,
    *,
    keys: bool,
    call_ids: str,
    durability: str | None,
    transcript_repair: str | None = None,
    schedule_to_close: str | None = None,
) -> Target:
    """One process of the framework's example agent.

    `transcript_repair`: what its starts repair in the conversation they load (the OpenAI Agents
    SDK's agent only, openai_agents_repair.REPAIRS); None: the agent's default, none.
    `schedule_to_close`: the tool activities' retry budget (the Temporal agent only,
    temporal_agent.BUDGETS: spec/RETRIES.md 1.8); None: the agent's default, none.
    """
    record = require(framework)
    if call_ids not in script.CALL_IDS:
        raise SweepError(f"call IDs {call_ids!r}: expected stable or fresh")
    if durability is not None and durability not in record.durability:
        raise SweepError(durability_refused(record, durability))
    if transcript_repair is not None and (framework != "openai-agents" or transcript_repair not in REPAIRS):
        raise SweepError(
            f"--transcript-repair {transcript_repair} goes with --framework openai-agents ({', '.join(REPAIRS)})"
        )
    if schedule_to_close is not None and (framework != "temporal" or schedule_to_close not in SCHEDULE_TO_CLOSE):
        raise SweepError(
            f"--schedule-to-close {schedule_to_close} goes with --framework temporal ({', '.join(SCHEDULE_TO_CLOSE)})"
        )
    if framework == "openai-agents":
        openai_agents_trim.register()  # trim-context cuts its session before a restart
    module = record.agent
    args = arguments(job_path, keys, call_ids, durability, transcript_repair, schedule_to_close)
    env = {"PYTHONPATH": package_pythonpath()}
    return Target(
        (sys.executable, "-m", module, *args),
        env,
        label(framework, keys, call_ids, durability, transcript_repair, schedule_to_close),
        fork=f"{module}:main",
        fork_argv=tuple(args),
    )


def durability_refused(record: Framework, durability: str) -> str:
    """Why `--durability DURABILITY` is refused for `record`: the framework that has such modes, and its modes."""
    owner = record if record.durability else next(f for f in REGISTRY if f.durability)
    modes = ", ".join(owner.durability[:-1]) + " or " * (len(owner.durability) > 1) + owner.durability[-1]
    return f"--durability {durability} goes with --framework {owner.name} ({modes})"


def check(job: Job, framework: str | None = None) -> Check:
    """The default check for `job` (refusing job options the example agents do not play).

    With `framework`, the check also reads the conversation its built-in agent saved (the
    agent module's `conversation(folder)`), and declares what the stack cannot see
    (transcripts.UNDECIDED); without, it reads the receiver's effects alone.
    """
    plays = () if framework is None else named(framework).plays
    for call in job.calls:
        for option in ("approval", "fails_after_accept"):
            if getattr(call, option) and option not in plays:
                raise SweepError(f"calls.{call.id}: the example agents do not implement {option!r}")
    script.ScriptedModel(job, folder=Path("."))  # a job the scripted model cannot play fails here
    if framework is None:
        return script.check(job)
    record = named(framework)
    unseen = transcripts.UNDECIDED[record.name]

    def conversation(folder: Path) -> tuple[Event, ...]:
        read = importlib.import_module(record.agent).conversation  # the agent's module, on first read
        events: tuple[Event, ...] = read(folder)
        return events

    return script.check(job, None if "transcript" in unseen else conversation, unseen)
