"""The built-in example agents as sweep targets: `crashsweep sweep --framework NAME` (FRAMEWORKS).

Each is one process of the framework's example agent for a job (langgraph_agent.py,
dbos_agent.py, openai_agents_agent.py, pydantic_ai_agent.py, temporal_agent.py), forked from
a zygote that imported the framework once, with the default check (script.check: the
tracker's records mapped back to the job's calls by the model's ledger).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from crashsweep.realsweep.adapters import script
from crashsweep.realsweep.sweep import Check, SweepError, Target
from crashsweep.realsweep.tracker.service import package_pythonpath
from crashsweep.spec.job import Job

FRAMEWORKS = {
    "langgraph": "crashsweep.realsweep.adapters.langgraph_agent",
    "dbos": "crashsweep.realsweep.adapters.dbos_agent",
    "openai-agents": "crashsweep.realsweep.adapters.openai_agents_agent",
    "pydantic-ai": "crashsweep.realsweep.adapters.pydantic_ai_agent",
    "temporal": "crashsweep.realsweep.adapters.temporal_agent",
}
PACKAGES = {
    "langgraph": "langgraph",
    "dbos": "dbos",
    "openai-agents": "agents",
    "pydantic-ai": "pydantic_ai",
    "temporal": "temporalio",
}
FROM_SCRATCH = frozenset({"temporal"})
"""Frameworks whose state is not all in the work folder (Temporal's history is in its server): a
merging sweep cannot save and restore their worlds, so their sweeps run every scenario from
scratch (temporal.py, CRASHSWEEP_FROM_SCRATCH)."""
REPLAYING = frozenset({"dbos", "pydantic-ai", "temporal"})
"""Frameworks whose engine replays what it recorded (DBOS, pydantic-ai on DBOS, Temporal): a run
must take the same path again, so their depth-1 sweeps check determinism first by default."""
DURABILITY = ("sync", "async", "exit")


def require(framework: str) -> None:
    """Refuse an unknown framework, or one whose package is not installed, in one line."""
    if framework not in FRAMEWORKS:
        raise SweepError(f"unknown framework {framework!r} (known: {', '.join(FRAMEWORKS)})")
    if importlib.util.find_spec(PACKAGES[framework]) is None:
        raise SweepError(f"{framework} is not installed: pip install 'crashsweep[{framework}]'")


def arguments(job_path: Path | None, keys: bool, call_ids: str, durability: str | None) -> list[str]:
    """The example agent's command-line options."""
    args = ["--keys", "on" if keys else "off", "--call-ids", call_ids]
    if durability is not None:
        args += ["--durability", durability]
    if job_path is not None:
        args += ["--job", str(job_path.resolve())]
    return args


def label(framework: str, keys: bool, call_ids: str, durability: str | None) -> str:
    """The row's name: framework, durability, keys and call IDs."""
    mode = f" {durability}" if durability is not None else ""
    return f"{framework}{mode}, keys {'on' if keys else 'off'}, call IDs {call_ids}"


def target(framework: str, job_path: Path | None, *, keys: bool, call_ids: str, durability: str | None) -> Target:
    """One process of the framework's example agent."""
    require(framework)
    if call_ids not in script.CALL_IDS:
        raise SweepError(f"call IDs {call_ids!r}: expected stable or fresh")
    if durability is not None and (framework != "langgraph" or durability not in DURABILITY):
        raise SweepError(f"--durability {durability} goes with --framework langgraph (sync, async or exit)")
    module = FRAMEWORKS[framework]
    args = arguments(job_path, keys, call_ids, durability)
    env = {"PYTHONPATH": package_pythonpath()}
    return Target(
        (sys.executable, "-m", module, *args),
        env,
        label(framework, keys, call_ids, durability),
        fork=f"{module}:main",
        fork_argv=tuple(args),
    )


def check(job: Job) -> Check:
    """The default check for `job` (refusing job options the example agents do not play)."""
    for call in job.calls:
        for option in ("approval", "fails_after_accept"):
            if getattr(call, option):
                raise SweepError(f"calls.{call.id}: the example agents do not implement {option!r}")
    script.ScriptedModel(job, folder=Path("."))  # a job the scripted model cannot play fails here
    return script.check(job)
