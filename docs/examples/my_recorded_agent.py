"""my_pydantic_agent.py, recording its run for `crashsweep from-trace` (docs/guide/from-trace.md).

The two lines marked `# record` are all a pydantic-ai program needs: a TracerProvider that
appends every span to a file as OTLP JSON (crashsweep.otel.otlp_file; the file is
$CRASHSWEEP_OTLP, else run.jsonl), and pydantic-ai's own instrumentation of every agent, which
captures the model's replies and the tools' arguments and results. The crash points the run
passes (crashsweep's marks on DBOS's records, in my_pydantic_agent.py) go into the same file.
"""

from __future__ import annotations

import os

import my_pydantic_agent
from my_pydantic_agent import CRASHSWEEP_ARGS, check
from pydantic_ai import Agent, InstrumentationSettings

from crashsweep.otel import otlp_file

__all__ = ["CRASHSWEEP_ARGS", "check", "run"]


def run() -> None:
    """The agent's run, every span of it recorded."""
    provider = otlp_file(os.environ.get("CRASHSWEEP_OTLP", "run.jsonl"))  # record
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))  # record
    try:
        my_pydantic_agent.run()
    finally:
        provider.shutdown()
