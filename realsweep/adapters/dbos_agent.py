"""The built-in DBOS agent: a durable workflow that plays a job, swept by `--framework dbos`.

The workflow asks the scripted model for each tool turn in a step (its reply, with its call
IDs, is recorded before any call goes out) and runs each call in a step of its own; DBOS's
system database is SQLite in the work directory. One process launches DBOS and runs workflow
"triage" to its end (starting it, or waiting for its recovery).

Under a sweep the zygote calls `zygote_warm` once per fork: the first call migrates a system
database (`DBOS.migrate`, the out-of-band migration of DBOS's deployments) and keeps its bytes,
and each process that finds no system database in its work directory lays down that copy and
launches with `run_migrations` off (DBOS then verifies the schema instead of migrating it).
A fresh world is still a freshly migrated, empty system database: the one DBOS's launch would
create, made once per sweep instead of once per scenario (launch ran 80+ migrations each time).
Run by itself, with no template, the agent lets launch migrate as before.

    python -m crashsweep.realsweep.adapters.dbos_agent [--job FILE] [--keys on|off] [--call-ids stable|fresh]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dbos import DBOS

from crashsweep.realsweep.adapters.dbos import (
    StepTools,
    crash_points,
    migrated,
    run_swept,
)
from crashsweep.realsweep.adapters.script import ScriptedModel, agent_parser, play
from crashsweep.spec.job import TRIAGE, load_job

WORKFLOW = "triage"
_setup: dict[str, Any] = {}  # the process's model and tools, set by main() before DBOS launches
_template: list[bytes] = []  # a freshly migrated system database, once the zygote has made it (zygote_warm)


@DBOS.step()
@crash_points
def ask_model(turns_done: int) -> list[dict[str, Any]]:
    """The model's reply for the next tool turn (empty: the final answer)."""
    model: ScriptedModel = _setup["model"]
    return [asdict(call) for call in model.reply(turns_done) or []]


@DBOS.step()
@crash_points
def run_tool(call: dict[str, Any]) -> str:
    """One tool call, against the tracker."""
    tools: StepTools = _setup["tools"]
    return play(tools, call)


@DBOS.workflow()
def triage() -> int:
    """Ask, run the turn's calls, ask again, until the model answers; the tool turns run."""
    turns_done = 0
    while calls := ask_model(turns_done):
        for call in calls:
            run_tool(call)
        turns_done += 1
    return turns_done


def parse(argv: list[str]) -> argparse.Namespace:
    """The agent's options."""
    parser = agent_parser("crashsweep.realsweep.adapters.dbos_agent")
    return parser.parse_args(argv)


def zygote_warm(argv: list[str]) -> None:
    """In the zygote, before a fork: migrate a system database once, and keep its bytes for every process."""
    if not _template:
        _template.append(migrated())


def main(argv: list[str] | None = None) -> int:
    """Run workflow "triage" to its end from what the work directory holds."""
    args = parse(sys.argv[1:] if argv is None else argv)
    job = TRIAGE if args.job is None else load_job(Path(args.job))
    _setup["model"] = ScriptedModel(job, args.call_ids)
    _setup["tools"] = StepTools(keys=args.keys == "on")
    run_swept(triage, WORKFLOW, "crashsweep-triage", _template[0] if _template else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
