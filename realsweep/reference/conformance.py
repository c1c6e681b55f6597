"""Conformance: the real sweep of the reference loop beside the model explorer, and every difference.

For one design, job, tracker and depth it runs both (the model explorer on the design's
model, the real sweep through `reference.run`) and compares every figure of the row:
crash points, scenarios per crash count, with_dups, dups, missing, never_finish, asks, calls+,
lookups, reruns, approvals, and each invariant's verdict (no-duplicate, no-loss and the
target's PROPERTIES). `render` prints both rows as one table (the model's row, then the real
one) followed by the differences, or "no difference"; under faults or fresh call IDs
(spec/FAULTS.md, carried out for real by crashsweep.realsweep.faults.nemesis) a title line
names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from crashsweep import variants
from crashsweep.explorer.search import explore
from crashsweep.realsweep import rows
from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.sweep import Progress, SweepOptions, SweepResult
from crashsweep.reports import table
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.job import Job
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.design_file import load_design

FIELDS = (
    "crash_points",
    "scenarios",
    "with_dups",
    "dups",
    "missing",
    "never_finish",
    "asks",
    "calls_plus",
    "lookups",
    "reruns",
    "approvals",
)
RETRY_FIELDS = ("retries", "retried", "worst_dups", "worst_calls", "run_calls")
"""The figures of a design with retry layers (spec/RETRIES.md 1.5), compared when it has them."""


@dataclass(frozen=True)
class Conformance:
    """Both rows of one design and what differs between them."""

    model: Summary
    real: Summary
    sweep: SweepResult

    @property
    def differences(self) -> list[str]:
        """Each figure or verdict that differs, as "field: model X, real Y"."""
        found = []
        for name in FIELDS + (RETRY_FIELDS if self.model.retries else ()):
            mine, theirs = getattr(self.model, name), getattr(self.real, name)
            if mine != theirs:
                found.append(f"{name}: model {mine}, real {theirs}")
        if (self.model.faults or self.model.retries) and self.model.moves != self.real.moves:
            found.append(f"moves: model {self.model.moves}, real {self.real.moves}")
        model_verdicts = {v.name: v.holds for v in self.model.invariants}
        for v in self.real.invariants:
            if model_verdicts.get(v.name) != v.holds:
                found.append(f"{v.name}: model {_holds(model_verdicts.get(v.name))}, real {_holds(v.holds)}")
        return found

    @property
    def agrees(self) -> bool:
        """Whether the real sweep's row equals the model's."""
        return not self.differences


def _holds(value: bool | None) -> str:
    return "absent" if value is None else ("holds" if value else "violated")


def conform(
    variant: str,
    job: Job,
    job_path: Path | None,
    tracker: str,
    options: SweepOptions,
    progress: Progress | None = None,
    design_path: Path | None = None,
    nemesis: Nemesis | None = None,
    upgrade: reference.Version | None = None,
) -> Conformance:
    """Run the model explorer and the real sweep of `variant` (or of the design file), side by side.

    `nemesis`: the faults and call IDs (spec/FAULTS.md) of both sides; `upgrade`: the design
    (name, design file) every restart runs on both sides (spec/RETRIES.md section 2).
    """
    env = nemesis or Nemesis()
    reference.refuse(job, tracker, design_path, env, upgrade, options.depth)  # before the model explores
    chosen = load_design(design_path).design if design_path is not None else variant
    then = None if upgrade is None else load_design(upgrade[1]).design if upgrade[1] is not None else upgrade[0]
    faults, fresh = env.faults, env.fresh_ids
    loop = variants.model(chosen, job, TRACKERS[tracker], faults=faults, fresh_ids=fresh, upgrade=then)
    exploration = explore(loop, options.depth)
    model = summarize(exploration, variant=variant, job=job.name, tracker=tracker, faults=faults, fresh_ids=fresh)
    result = reference.run(variant, job, job_path, tracker, options, progress, design_path, env, upgrade)
    stack = reference.retry_layers(design_path)
    real = rows.summary(
        result,
        variant=variant,
        job=job.name,
        tracker=tracker,
        faults=faults,
        fresh_ids=fresh,
        retries=stack,
    )
    if upgrade is not None:
        model, real = replace(model, upgrade=upgrade[0]), replace(real, upgrade=upgrade[0])
    return Conformance(model, real, result)


def name(conformance: Conformance) -> str:
    """The design and its tracker, e.g. "agent-loop@keyless" (the tracker only when it is not keyed)."""
    row = conformance.model
    return row.variant if row.tracker == "keyed" else f"{row.variant}@{row.tracker}"


def render(results: Sequence[Conformance], fmt: str = "text") -> str:
    """Both rows of each design as one table, then the differences of each."""
    shown: list[Summary] = []
    for c in results:
        # The table adds each row's tracker itself when the rows do not share one.
        shown.append(replace(c.model, variant=f"{c.model.variant} (model)"))
        shown.append(replace(c.real, variant=f"{c.real.variant} (real)"))
    text = table.table_markdown(shown) if fmt == "markdown" else table.table_text(shown)
    if shown and shown[0].environment:  # under faults or fresh IDs, a title says which
        text = table.titled("Conformance", shown) + "\n" + text
    lines = []
    for c in results:
        seconds = f"{c.sweep.processes} processes, {c.sweep.seconds:.1f} s"
        if c.agrees:
            lines.append(f"{name(c)}: no difference ({seconds})")
        else:
            lines.append(f"{name(c)}: DIFFERS ({seconds}): " + "; ".join(c.differences))
    return text + "\n" + "\n".join(lines) + "\n"
