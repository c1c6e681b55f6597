"""What each retry layer of a design costs: the worst scenario of the same design without it (spec/RETRIES.md 1.5).

A layer's share of a stack's worst case is counterfactual: the design is explored again with
that one layer removed (the same job, tracker, depth and faults), and the two worst scenarios
are set side by side. Sums over scenarios are not compared: a layer's retry moves are
scenarios of their own, so the two explorations count different sets; the worst single
scenario is the one figure both have. A layer that adds cost has a smaller worst case
without it; one that saves cost (it catches a failure that would otherwise reach a wider
layer, or the loop) has a larger one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from crashsweep.spec.design import Design

if TYPE_CHECKING:
    from crashsweep.reports.summary import Summary


@dataclass(frozen=True)
class Without:
    """The worst scenario of a design with its layer `index` (from 1, innermost first) removed."""

    index: int
    layer: str
    worst_dups: int
    worst_calls: int
    run_calls: int

    def to_json(self) -> dict[str, Any]:
        """The layer and the worst scenario without it, as JSON."""
        return {
            "layer": self.index,
            "label": self.layer,
            "without": {"dups": self.worst_dups, "model_calls": self.worst_calls, "run_model_calls": self.run_calls},
        }

    def text(self) -> str:
        """In words, as the retries line: "without layer 2 (run x2 on error): worst dups 0, model calls 4 (+1)"."""
        extra = self.worst_calls - self.run_calls
        head = f"without layer {self.index} ({self.layer})"
        return f"{head}: worst dups {self.worst_dups}, model calls {self.worst_calls} (+{extra})"


def without_each(design: Design, row: Callable[[Design], Summary]) -> tuple[Without, ...]:
    """For each layer of `design`'s stack, the worst scenario of `row` (an exploration's row) without it.

    `row` must find the worst scenario of a design without layers too (`summarize(..., worst=True)`).
    """
    stack = design.retries
    found = []
    for i, layer in enumerate(stack):
        reduced = row(replace(design, retries=(*stack[:i], *stack[i + 1 :])))
        found.append(Without(i + 1, layer.label, reduced.worst_dups, reduced.worst_calls, reduced.run_calls))
    return tuple(found)
