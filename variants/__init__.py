"""The registry of loop designs: CLI name -> design, and a factory of explorer models.

The five seed designs come first, in the order of the seed's table; then the agent's own loop and
the naive error-to-model loop. PRESETS holds the same seven as policy records (variants/presets.py),
then the loops of LangGraph and DBOS. Every name of either is a design's name: `design(name)`
resolves it (a built-in name to its hand-written module, a framework preset's to its composed
design), and `names()` lists them all, in that order, for messages, completion and did-you-mean.
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


_FRAMEWORK_DESIGNS: dict[str, Design] = {preset.name: preset.design for preset in FRAMEWORKS}
"""The framework presets as designs, composed once (the same object for every lookup)."""


def names() -> tuple[str, ...]:
    """Every name `design` resolves: the built-in designs, then the framework presets."""
    return (*DESIGNS, *_FRAMEWORK_DESIGNS)


def is_preset(name: str) -> bool:
    """Whether `name` is a framework preset rather than one of the built-in designs."""
    return name in _FRAMEWORK_DESIGNS and name not in DESIGNS


class UnknownVariantError(KeyError):
    """A variant name that is not in the registry; the message lists the known ones."""

    def __str__(self) -> str:
        return f"unknown variant {self.args[0]!r} (known: {', '.join(names())})"


def design(name: str) -> Design:
    """The design registered under `name`: a built-in design, or a framework preset composed from its policy.

    The one resolver of a design's name (--variant, --variants, replay, sweep): UnknownVariantError
    for any other name.
    """
    if name in DESIGNS:
        return DESIGNS[name]
    if name in _FRAMEWORK_DESIGNS:
        return _FRAMEWORK_DESIGNS[name]
    raise UnknownVariantError(name)


def model(
    name: str | Design,
    job: Job,
    tracker: TrackerKind,
    *,
    faults: tuple[str, ...] = (),
    fresh_ids: bool = False,
    upgrade: str | Design | None = None,
) -> LoopModel:
    """The explorer model of design `name` (or of a design itself) against `job` and `tracker`.

    `faults` and `fresh_ids` are the environment's faults and call IDs (spec/FAULTS.md);
    `upgrade` the design every restart runs (a deploy between a crash and its restart,
    spec/RETRIES.md section 2).
    """
    chosen = design(name) if isinstance(name, str) else name
    upgraded = design(upgrade) if isinstance(upgrade, str) else upgrade
    return LoopModel(chosen, Env(job, tracker, faults, fresh_ids), upgraded)
