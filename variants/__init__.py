"""The registry of loop designs: CLI name -> design, and a factory of explorer models.

The five seed designs come first, in the order of the seed's table; then the agent's own loop and
the naive error-to-model loop. PRESETS holds the same seven as policy records (variants/presets.py),
then the loops of LangGraph and DBOS.
"""

from __future__ import annotations

from crashsweep.spec.design import Design, Env
from crashsweep.spec.job import Job
from crashsweep.spec.tracker import TrackerKind
from crashsweep.variants import (
    agent_loop,
    attempt_markers,
    error_to_model,
    idempotency_keys,
    keys_and_markers,
    save_after_reply,
    save_once_per_turn,
)
from crashsweep.variants.loop_model import LoopModel
from crashsweep.variants.presets import BUILT_IN, FRAMEWORKS, Preset

SEED_DESIGNS: tuple[Design, ...] = (
    save_once_per_turn.DESIGN,
    save_after_reply.DESIGN,
    idempotency_keys.DESIGN,
    attempt_markers.DESIGN,
    keys_and_markers.DESIGN,
)
DESIGNS: dict[str, Design] = {
    design.name: design for design in (*SEED_DESIGNS, agent_loop.DESIGN, error_to_model.DESIGN)
}

PRESETS: dict[str, Preset] = {preset.name: preset for preset in (*BUILT_IN, *FRAMEWORKS)}
"""Designs as policy records: one per built-in design (same name), then the frameworks' loops."""


class UnknownVariantError(KeyError):
    """A variant name that is not in the registry; the message lists the known ones."""

    def __str__(self) -> str:
        return f"unknown variant {self.args[0]!r} (known: {', '.join(DESIGNS)})"


def design(name: str) -> Design:
    """The design registered under `name`."""
    try:
        return DESIGNS[name]
    except KeyError:
        raise UnknownVariantError(name) from None


def model(
    name: str | Design, job: Job, tracker: TrackerKind, *, faults: tuple[str, ...] = (), fresh_ids: bool = False
) -> LoopModel:
    """The explorer model of design `name` (or of a design itself) against `job` and `tracker`.

    `faults` and `fresh_ids` are the environment's faults and call IDs (spec/FAULTS.md).
    """
    chosen = design(name) if isinstance(name, str) else name
    return LoopModel(chosen, Env(job, tracker, faults, fresh_ids))
