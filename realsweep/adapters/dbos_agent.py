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

Traced: with $CRASHSWEEP_OTLP naming a file (absolute, or in the work folder) and the
OpenTelemetry SDK importable, each process appends its spans there as OTLP JSON (genai_spans.py,
crashsweep.otel.otlp_file): `invoke_agent triage` around the workflow's run in the process (its
conversation the workflow ID), `chat scripted` around each ask of the scripted model (its reply
on it), `execute_tool TOOL` around each tool call (its arguments, answer, and the key it sent),
and the crash points passed among them: what `crashsweep from-trace` reads. The agent span is
opened inside the workflow, on the thread DBOS runs it on (DBOS carries no OpenTelemetry context
to that thread while its own tracing is off, as it is here: the config enables no OTLP), so the
points DBOS passes before and after the workflow's body are spans of their own. Without the
variable nothing of OpenTelemetry is imported: each step looks up one entry of `_setup`.

    python -m crashsweep.realsweep.adapters.dbos_agent [--job FILE] [--keys on|off] [--call-ids stable|fresh]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbos import DBOS

from crashsweep.realsweep.adapters.dbos import (
    StepTools,
    crash_points,
    migrated,
    run_swept,
)
from crashsweep.realsweep.adapters.script import ScriptedModel, ToolCall, agent_parser, play, workdir
from crashsweep.spec.job import TRIAGE, load_job

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

WORKFLOW = "triage"
AGENT_NAME = "triage"
"""The agent's name on its span (`gen_ai.agent.name`)."""
OTLP = "CRASHSWEEP_OTLP"
"""The environment variable naming a file (in the work folder, or absolute) for every span as OTLP JSON."""
_setup: dict[str, Any] = {}
"""The process's job, model, tools and spans (genai_spans.Spans; None: untraced), set by main() before DBOS launches."""
_template: list[bytes] = []  # a freshly migrated system database, once the zygote has made it (zygote_warm)


@DBOS.step()
@crash_points
def ask_model(turns_done: int) -> list[dict[str, Any]]:
    """The model's reply for the next tool turn (empty: the final answer)."""
    model: ScriptedModel = _setup["model"]
    spans = _setup["spans"]
    if spans is None:
        return [asdict(call) for call in model.reply(turns_done) or []]
    with spans.chat() as span:
        calls = model.reply(turns_done) or []
        spans.replied(span, calls, model.final("done"))
    return [asdict(call) for call in calls]


@DBOS.step()
@crash_points
def run_tool(call: dict[str, Any]) -> str:
    """One tool call, against the tracker."""
    tools: StepTools = _setup["tools"]
    spans = _setup["spans"]
    if spans is None:
        return play(tools, call)
    with spans.tool(ToolCall(**call)) as span:
        answer = play(tools, call)
        spans.answered(span, answer)
    return answer


@DBOS.workflow()
def triage() -> int:
    """Ask, run the turn's calls, ask again, until the model answers; the tool turns run."""
    spans = _setup["spans"]
    run = (
        contextlib.nullcontext()
        if spans is None
        else spans.agent(AGENT_NAME, str(DBOS.workflow_id), _setup["job"].name)
    )
    with run:
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


def traced(tools: StepTools) -> TracerProvider | None:
    """With $CRASHSWEEP_OTLP and the SDK: the process's spans to that file (`_setup["spans"]`), its provider.

    The keys the tools send go on their spans too (genai_spans.KeysOnSpans). Without the
    variable nothing is imported and the spans stay None; without the SDK, or when the file
    cannot be opened, the process says so and runs untraced (tracing never changes the run).
    """
    _setup["spans"] = None
    otlp = os.environ.get(OTLP)
    if not otlp:
        return None
    try:
        from crashsweep.realsweep.adapters import genai_spans

        provider, tracer = genai_spans.start(workdir() / otlp)
    except (ImportError, OSError) as error:
        print(f"crashsweep: {OTLP} is set but the agent is not traced: {error}", file=sys.stderr)
        return None
    tools.ops = genai_spans.KeysOnSpans(tools.ops.keys)
    _setup["spans"] = genai_spans.Spans(tracer)
    return provider


def main(argv: list[str] | None = None) -> int:
    """Run workflow "triage" to its end from what the work directory holds (traced with $CRASHSWEEP_OTLP)."""
    args = parse(sys.argv[1:] if argv is None else argv)
    job = TRIAGE if args.job is None else load_job(Path(args.job))
    _setup["job"] = job
    _setup["model"] = ScriptedModel(job, args.call_ids)
    _setup["tools"] = tools = StepTools(keys=args.keys == "on")
    provider = traced(tools)
    try:
        run_swept(triage, WORKFLOW, "crashsweep-triage", _template[0] if _template else None)
    finally:
        if provider is not None:
            provider.shutdown()  # every span flushed to the file
    return 0


if __name__ == "__main__":
    sys.exit(main())
