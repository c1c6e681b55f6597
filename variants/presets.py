"""Presets: the built-in designs, and the loops of two durable-execution frameworks, as policies.

The seven built-in presets are proven to reach the very same worlds as their hand-written
modules (tests/variants/test_presets.py). The framework presets say, field by field, what the
field stands for in the framework (spec/POLICIES.md, "Framework presets").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from crashsweep.spec.design import Design
from crashsweep.spec.policy import Policy, Rung
from crashsweep.variants.composed import compose


@dataclass(frozen=True, slots=True)
class Preset:
    """A named policy with a one-line summary."""

    name: str
    summary: str
    policy: Policy

    @property
    def design(self) -> Design:
        """The composed design of this preset, under the preset's name."""
        return compose(self.name, self.summary, self.policy)


_PLAIN = Policy(
    startup_save=True,
    reply_save="before-first-send",
    result_saves="each-call",
    markers="none",
    keys="none",
    lock="none",
)
_MARKED = Policy(
    startup_save=True,
    reply_save="before-first-send",
    result_saves="each-call",
    markers="before-writes",
    keys="none",
    lock="none",
    ladder=("lookup", "person"),  # rung 1 never applies to an unkeyed write
)
_FULL_LADDER: tuple[Rung, ...] = ("rerun-when-harmless", "lookup", "person")

BUILT_IN: tuple[Preset, ...] = (
    Preset(
        "save-once-per-turn",
        "saves once per turn; no reply save, keys or markers",
        Policy(
            startup_save=True,
            reply_save="never",
            result_saves="whole-turn",
            markers="none",
            keys="none",
            lock="none",
        ),
    ),
    Preset("save-after-reply", "saves the reply before its calls and each result after", _PLAIN),
    Preset(
        "idempotency-keys",
        "save-after-reply plus an idempotency key on every write",
        replace(_PLAIN, keys="run-call"),
    ),
    Preset("attempt-markers", "markers before writes, no keys: unknown outcomes go to a person", _MARKED),
    Preset(
        "keys-and-markers",
        "markers before writes and keys on every write",
        Policy(
            startup_save=True,
            reply_save="before-first-send",
            result_saves="each-call",
            markers="before-writes",
            keys="run-call",
            lock="none",
            ladder=_FULL_LADDER,
        ),
    ),
    Preset(
        "agent-loop",
        "the agent's own loop: run lock, markers, keys, no reply save",
        Policy(
            startup_save=True,
            reply_save="never",
            result_saves="writes-only",
            markers="before-writes",
            keys="run-call",
            lock="file",
            ladder=_FULL_LADDER,
        ),
    ),
    Preset(
        "error-to-model",
        "idempotency-keys that hands a tool error to the model, which retries anew",
        Policy(
            startup_save=True,
            reply_save="before-first-send",
            result_saves="each-call",
            markers="none",
            keys="run-call",
            lock="none",
            on_tool_error="model",
        ),
    ),
)
"""The seven built-in designs, in the registry's order, under the same names."""

# LangGraph's agent loop: a model node and a ToolNode, one superstep each, a checkpoint after
# every superstep (the thread's input is checkpointed before the first one). The ToolNode runs
# all the calls of one reply as one task, so their results are saved together once all ran.
# Tools are called without idempotency keys or markers, nothing locks the thread, and the
# ToolNode turns a tool's exception into a ToolMessage for the model, which retries with a new
# tool-call ID. `durability` decides when a checkpoint is written (langgraph.types.Durability).
_LANGGRAPH_SYNC = Policy(
    startup_save=True,  # the input checkpoint of the thread (superstep -1)
    reply_save="before-first-send",  # "sync": the model node's checkpoint is written before the tools run
    result_saves="whole-turn",  # the ToolNode's checkpoint, after all the reply's tools returned
    markers="none",  # no record that a tool call is about to go out
    keys="none",  # tool calls carry no idempotency key
    lock="none",  # nothing stops a second process driving the same thread
    on_tool_error="model",  # handle_tool_errors: the error becomes a ToolMessage for the model
)

FRAMEWORKS: tuple[Preset, ...] = (
    Preset("langgraph-sync", "LangGraph, durability='sync': a checkpoint before each next superstep", _LANGGRAPH_SYNC),
    Preset(
        "langgraph-async",
        "LangGraph, durability='async': a checkpoint written while the next superstep runs",
        # The model node's checkpoint may still be in flight when the tools send: crashsweep
        # takes the worst case, in which the reply reaches disk with the ToolNode's checkpoint.
        replace(_LANGGRAPH_SYNC, reply_save="never"),
    ),
    Preset(
        "langgraph-exit",
        "LangGraph, durability='exit': state persisted only when the graph exits",
        # No checkpoint until the run ends: a crash restarts the thread from its input.
        replace(_LANGGRAPH_SYNC, startup_save=False, reply_save="never", result_saves="none"),
    ),
    Preset(
        "dbos",
        "DBOS: the workflow's input recorded first, then each step's output after it returns",
        Policy(
            startup_save=True,  # DBOS records the workflow's input (and its ID) before it starts
            reply_save="before-first-send",  # the model call is a step: its output is recorded
            result_saves="each-call",  # each tool call is a step: its output is recorded after it returns
            markers="none",  # recovery re-executes a step without a recorded output (at least once)
            keys="none",  # the tool call carries no key unless the step derives one itself
            lock="none",  # no lock file; one executor does not run a workflow twice at once
            on_tool_error="model",  # the step's exception is recorded and raised in the workflow,
            # where an agent loop hands it to the model as a tool error
        ),
    ),
)
"""The loops of durable-execution frameworks, as their documentation and code describe them."""
