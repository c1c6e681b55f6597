"""The built-in pydantic-ai agent: a durable agent under DBOS that plays a job, swept by `--framework pydantic-ai`.

An `Agent` with the scripted model (pydantic_ai.scripted_model) and the tracker tools, made
durable by pydantic-ai's `DBOSDurability` capability and run with `run_sync` inside a
`@DBOS.workflow`, as pydantic-ai's DBOS guide runs it: each model request is a DBOS step; the
tools are plain async tools, not steps (pydantic-ai's default: docs/examples/my_pydantic_agent.py
has a tool that is a step). DBOS's system database is SQLite in the work directory. One process
launches DBOS and runs workflow "triage" to its end (starting it, or waiting for its recovery).

Under a sweep the zygote calls `zygote_warm` once per fork: as for the DBOS agent, a system
database is migrated once (dbos.migrated) and laid down in each fresh world.

Traced: with $CRASHSWEEP_OTEL set to a file name (relative to the work folder, e.g.
"tool-spans.jsonl") and the OpenTelemetry SDK importable, each process instruments the agent
with pydantic-ai's own instrumentation, to a TracerProvider whose processor is crashsweep.otel's
(`CrashsweepSpanProcessor`, that file): each tool span's start is on disk before its body runs,
and `crashsweep audit` finds the attempts a crash left of unknown outcome. Each write tool puts
the key it sends on its span (`crashsweep.idempotency_key`) before its request; that is seen at
the span's end only, so a processor ahead of crashsweep's (`KeysAtStart`) puts the same key on
the span as it starts, from the workflow ID and the call ID (the parts the tool keys from), and
the invoke line carries it. Traced, the agent's conversation ID is the workflow's ID (pydantic-ai
would derive a UUID from it), so that the spans, DBOS's records and the tracker's records all
name one run. With $CRASHSWEEP_OTLP naming a file (absolute, or in the work folder), every span
goes there as OTLP JSON (crashsweep.otel.otlp_file), the crash points passed with them: what
`crashsweep from-trace` reads. Without either variable nothing of this runs: no SDK is imported, no file is written,
and the conversation ID is pydantic-ai's own.

    python -m crashsweep.realsweep.adapters.pydantic_ai_agent [--job FILE] [--keys on|off] [--call-ids stable|fresh]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbos import DBOS
from opentelemetry import trace
from pydantic_ai import Agent, InstrumentationSettings, RunContext
from pydantic_ai.durable_exec.dbos import DBOSDurability

from crashsweep.realsweep.adapters.dbos import (
    migrated,
    run_swept,
)
from crashsweep.realsweep.adapters.pydantic_ai import AgentTools, scripted_model, tracker_toolset, warm_up
from crashsweep.realsweep.adapters.script import TrackerTools, agent_parser, made_from, workdir
from crashsweep.spec.job import TRIAGE, Job, load_job

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

WORKFLOW = "triage"
AGENT_NAME = "triage"
_setup: dict[str, Any] = {}  # the process's agent and job, set by main() before DBOS launches
_agents: dict[tuple[object, ...], tuple[Job, Agent[None, str]]] = {}
"""The job and the agent per (job file, keys, call IDs): made once per process tree (see `agent_for`)."""
_template: list[bytes] = []  # a freshly migrated system database, once the zygote has made it (zygote_warm)
OTEL = "CRASHSWEEP_OTEL"
"""The environment variable naming the span log's file in the work folder: set, the agent is traced."""
OTLP = "CRASHSWEEP_OTLP"
"""The environment variable naming a file (in the work folder, or absolute) for every span as OTLP JSON."""
KEY = "crashsweep.idempotency_key"
"""The span attribute of the key a tool sends (crashsweep.otel and the otlp importer read it)."""
WRITES = ("create_issue", "comment")
"""The tools that send a key."""


@DBOS.workflow(name="crashsweep.pydantic_ai.triage")
def triage() -> str:
    """Run the agent on the job's prompt; its final answer."""
    agent: Agent[None, str] = _setup["agent"]
    conversation = DBOS.workflow_id if _setup.get("traced") else None  # None: pydantic-ai's own (untraced)
    return agent.run_sync(f"Run the {_setup['job'].name} job.", conversation_id=conversation).output


def agent_for(args: argparse.Namespace) -> tuple[Job, Agent[None, str]]:
    """The job and the agent of the parsed options: made in the zygote (zygote_warm), or now.

    Made once per process: DBOSDurability registers the agent's operations with DBOS by its
    name, and a second agent of the same name in one process is registered again (DBOS warns).
    """
    key = made_from(args)
    if key not in _agents:
        job = TRIAGE if args.job is None else load_job(Path(args.job))
        _agents[key] = job, build(job, keys=args.keys == "on", call_ids=args.call_ids)
    return _agents[key]


class TracedTools(AgentTools):
    """The tracker tools' bodies, each write putting the key it sends on the current span (its tool span) first.

    Untraced, the current span records nothing and the write goes as AgentTools sends it.
    """

    def create_issue(self, ctx: RunContext[Any], title: str) -> str:
        """File an issue, its key on the span first."""
        self.mark(self.ids(ctx)[2])
        return super().create_issue(ctx, title)

    def comment(self, ctx: RunContext[Any], issue_title: str, body: str) -> str:
        """Comment on the first issue titled `issue_title`, its key on the span first."""
        self.mark(self.ids(ctx)[2])
        return super().comment(ctx, issue_title, body)

    def mark(self, parts: Iterable[str]) -> None:
        """Set `crashsweep.idempotency_key` on the current span to the key of `parts` (none when keys are off)."""
        span = trace.get_current_span()
        key = self.ops.key(*parts)
        if key is not None and span.is_recording():
            span.set_attribute(KEY, key)


def build(job: Job, *, keys: bool, call_ids: str) -> Agent[None, str]:
    """The agent: the scripted model for the job, the tracker tools, DBOSDurability."""
    tools = tracker_toolset(TracedTools(keys=keys))
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


def traced(agent: Agent[None, str], keys: bool) -> TracerProvider | None:
    """With $CRASHSWEEP_OTEL or $CRASHSWEEP_OTLP and the SDK: the agent instrumented to them, its provider."""
    name, otlp = os.environ.get(OTEL), os.environ.get(OTLP)
    if not name and not otlp:
        return None
    try:
        from opentelemetry.context import Context
        from opentelemetry.sdk.trace import Span, SpanProcessor, TracerProvider

        from crashsweep.otel import CrashsweepSpanProcessor, otlp_file
    except ImportError as error:
        print(f"crashsweep: {OTEL} is set but the agent is not traced: {error}", file=sys.stderr)
        return None
    tracker = TrackerTools(keys)

    class KeysAtStart(SpanProcessor):
        """Puts on a write tool's span, as it starts, the key its body will send.

        The key's parts are those AgentTools.ids gives in a tool that is no DBOS step: the
        workflow ID and the model's call ID.
        """

        def on_start(self, span: Span, parent_context: Context | None = None) -> None:
            attributes = span.attributes or {}
            call, workflow = attributes.get("gen_ai.tool.call.id"), DBOS.workflow_id
            if attributes.get("gen_ai.tool.name") in WRITES and isinstance(call, str) and workflow:
                key = tracker.key(workflow, call)
                if key is not None:
                    span.set_attribute(KEY, key)

    provider = otlp_file(workdir() / otlp) if otlp else TracerProvider()
    provider.add_span_processor(KeysAtStart())
    if name:
        provider.add_span_processor(CrashsweepSpanProcessor(workdir() / name))
    agent.instrument = InstrumentationSettings(tracer_provider=provider)
    return provider


def main(argv: list[str] | None = None) -> int:
    """Run workflow "triage" to its end from what the work directory holds (traced with $CRASHSWEEP_OTEL)."""
    args = parse(sys.argv[1:] if argv is None else argv)
    _setup["job"], _setup["agent"] = agent_for(args)
    provider = traced(_setup["agent"], args.keys == "on")
    _setup["traced"] = provider is not None
    try:
        run_swept(triage, WORKFLOW, "crashsweep-pydantic-ai", _template[0] if _template else None)
    finally:
        if provider is not None:
            provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
