"""What a design costs: the work its loop does, counted along each scenario like every counter.

The cost of a design has five parts (spec/COST.md says exactly what each counts):

- **saves**: two-step saves that reach their rename (the checkpoint's and the lock file's);
- **requests**: calls sent to the tracker (reads and writes; first sends, ladder reruns and
  retries under a new call ID alike); a lookup is counted apart;
- **model calls**: replies asked of the model;
- **questions**: questions to a person (the ladder's rung 3, and approvals);
- **lookups**: the ladder's rung 2, "did call C of run R happen?".

Fsyncs are not counted apart: a save counts once whatever its fsync policy (spec/FAULTS.md
section 6); in the real loop every save is one temp-file write, its fsyncs and one rename.

Each part is measured on the uninterrupted run and summed over the scenarios of a depth; the
difference between the two (the scenarios' sum minus the uninterrupted run's figure once per
scenario) is what crashes add, in the manner of calls+.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crashsweep.spec import metrics
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

SAVES = "saves"
REQUESTS = "requests"
PARTS = ("saves", "requests", "model_calls", "questions", "lookups")


@dataclass(frozen=True, slots=True)
class Cost:
    """The five parts of a cost, as plain integers (see the module docstring)."""

    saves: int = 0
    requests: int = 0
    model_calls: int = 0
    questions: int = 0
    lookups: int = 0

    def as_tuple(self) -> tuple[int, ...]:
        """The parts in PARTS order."""
        return (self.saves, self.requests, self.model_calls, self.questions, self.lookups)

    def to_json(self) -> dict[str, int]:
        """The parts by name, in PARTS order."""
        return dict(zip(PARTS, self.as_tuple(), strict=True))

    def minus(self, other: Cost, times: int = 1) -> Cost:
        """This cost less `times` copies of `other` (a scenarios' sum less the runs they replace)."""
        mine, theirs = self.as_tuple(), other.as_tuple()
        return Cost(*(a - times * b for a, b in zip(mine, theirs, strict=True)))


def point_counters(world: World, job: Job) -> dict[str, int]:
    """The saves and requests that reaching `world`'s crash point completes (pure; read off the point).

    Every completed save passes exactly one `<what>: renamed`, every write request exactly one
    `tracker accepted <call>`, every read request exactly one `tool returned <call>` (section 3
    and 5 of SEMANTICS.md). The request prefixes are tested first: no save's name starts so.
    """
    process = world.process
    if process is None:
        return {}
    point = process.point
    if point.startswith("tracker accepted "):
        return {REQUESTS: 1}
    if point.startswith("tool returned "):
        call = point.removeprefix("tool returned ")
        return {} if job.call(call).writes else {REQUESTS: 1}
    if point.endswith(": renamed"):
        return {SAVES: 1}
    return {}


def cost_of(counters: Mapping[str, int]) -> Cost:
    """The cost a set of summed counters amounts to (questions: the ladder's asks and approvals)."""
    return Cost(
        saves=counters.get(SAVES, 0),
        requests=counters.get(REQUESTS, 0),
        model_calls=counters.get(metrics.MODEL_CALLS, 0),
        questions=counters.get(metrics.ASKS, 0) + counters.get(metrics.APPROVALS, 0),
        lookups=counters.get(metrics.LOOKUPS, 0),
    )
