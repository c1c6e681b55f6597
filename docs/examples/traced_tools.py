"""A traced agent killed inside a tool, then restarted: what its spans keep of the attempt that may have refunded.

A plain OpenTelemetry program (no agent framework): an agent span (`invoke_agent`,
conversation "refund-42") with one tool span (`execute_tool refund`, call "call_7", arguments
{"order": 42}), traced to two places at once: the stock BatchSpanProcessor with the SDK's JSON
file exporter (DIR/traces.jsonl), and crashsweep's span processor (DIR/tool-spans.jsonl),
which writes each tool span's start to disk before the tool runs. The program forks: the child
runs the agent and is killed by SIGKILL inside the tool (after the refund was asked for, before
the tool returned); the parent waits for it, then runs the same agent again, as a restart
would, with no idempotency key, and the run finishes.

    python docs/examples/traced_tools.py DIR
    crashsweep audit DIR/tool-spans.jsonl   # the killed attempt: of unknown outcome, never settled
    crashsweep audit DIR/traces.jsonl       # the exporter's file: only the restart's spans

DIR must be new or empty. Needs the `otel` extra (pip install 'crashsweep[otel]').
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from crashsweep.otel import CrashsweepSpanProcessor

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds", "gen_ai.conversation.id": "refund-42"}
TOOL = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "refund",
    "gen_ai.tool.call.id": "call_7",
    "gen_ai.tool.call.arguments": '{"order": 42}',
}


def run_agent(folder: Path, *, killed: bool) -> None:
    """One process's run of the agent: its tracing set up, the refund tool called once, the spans flushed.

    `killed`: the process dies inside the tool's body, as a crash or an OOM kill would take it.
    """
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(folder / "traces.jsonl")))
    provider.add_span_processor(CrashsweepSpanProcessor(folder / "tool-spans.jsonl"))
    tracer = provider.get_tracer("refunds")
    with (
        tracer.start_as_current_span("invoke_agent refunds", attributes=AGENT),
        tracer.start_as_current_span("execute_tool refund", attributes=TOOL),
    ):
        # Here the tool would ask the payment service to refund order 42 (with no idempotency key).
        if killed:
            os.kill(os.getpid(), signal.SIGKILL)
    provider.shutdown()  # the batch is exported now: a killed process never gets here


def main(argv: list[str]) -> int:
    """Run the agent in a child killed inside the tool, then again here; 0 when that is what happened."""
    if len(argv) != 1:
        print("usage: python docs/examples/traced_tools.py DIR (a new or empty folder)", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        print(f"traced_tools: {folder} is not a new or empty folder", file=sys.stderr)
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    child = os.fork()
    if child == 0:
        try:
            run_agent(folder, killed=True)
        finally:
            os._exit(1)  # reached only if the kill did not happen
    _, status = os.waitpid(child, 0)
    if not os.WIFSIGNALED(status) or os.WTERMSIG(status) != signal.SIGKILL:
        print(f"traced_tools: the first run was not killed inside the tool (wait status {status})", file=sys.stderr)
        return 1
    print("first run: killed inside the refund tool")
    run_agent(folder, killed=False)
    print(f"restart: finished; spans in {folder / 'traces.jsonl'} and {folder / 'tool-spans.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
