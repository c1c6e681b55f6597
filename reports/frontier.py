"""The design frontier: every design's verdict and cost, which are safe, which are Pareto-optimal.

Rules in spec/COST.md section 2. A design is safe when both invariants hold and were
exercised. Its cost vector is ten figures: the five parts of the uninterrupted run's cost and
the five that crashes add over all scenarios. A safe design is on the frontier when no other
safe design dominates it (no more costly in every figure, less costly in one). The cheapest
safe design is the first in a lexicographic order: the dearest resource first, and what every
run pays before what crashes add; ties go to the design enumerated first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from crashsweep.reports.summary import Summary
from crashsweep.reports.table import COST_EXTRA, COST_RUN, render_table, verdict_words
from crashsweep.spec.cost import Cost
from crashsweep.spec.files import toml_value
from crashsweep.spec.policy import CONVERSATION

COST_MEANING = "on the uninterrupted run, and what crashes add over all scenarios (+)"
ORDER = (
    "run questions, run model calls, run requests, run lookups, run saves, then what crashes add in the same "
    "order (questions+, calls+, requests+, lookups+, saves+), then the order of enumeration"
)


@dataclass(frozen=True)
class Entry:
    """One design of the space: its number (1-based, enumeration order), label, policy and row.

    `presets` names the built-in or framework presets that are this very policy.
    """

    number: int
    label: str
    policy: Mapping[str, object]
    row: Summary
    presets: tuple[str, ...] = ()

    @property
    def run(self) -> Cost:
        """The uninterrupted run's cost (rows of the frontier are always explored with costs)."""
        assert self.row.run_cost is not None, f"design {self.number} was explored without its costs"
        return self.row.run_cost

    @property
    def extra(self) -> Cost:
        """What crashes add over all scenarios."""
        extra = self.row.extra_cost
        assert extra is not None, f"design {self.number} was explored without its costs"
        return extra

    @property
    def costs(self) -> tuple[int, ...]:
        """The ten figures: run saves..lookups, then extra saves..lookups."""
        return (*self.run.as_tuple(), *self.extra.as_tuple())


def _dearest_first(cost: Cost) -> tuple[int, ...]:
    return (cost.questions, cost.model_calls, cost.requests, cost.lookups, cost.saves)


def rank(entry: Entry) -> tuple[int, ...]:
    """The key of the cheapest order (spec/COST.md): run, dearest part first; then extra; then number."""
    return (*_dearest_first(entry.run), *_dearest_first(entry.extra), entry.number)


def dominates(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether cost vector `a` is no more costly than `b` in every figure and less costly in one."""
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(x < y for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class Frontier:
    """Every design with its verdict and cost; the safe ones; the frontier; the cheapest and its ties."""

    job: str
    tracker: str
    depth: int
    entries: tuple[Entry, ...]
    safe: tuple[int, ...]  # design numbers, enumeration order
    pareto: tuple[int, ...]  # design numbers on the frontier, cheapest first
    cheapest: int | None
    ties: tuple[int, ...]  # other safe designs with the cheapest's very cost vector
    faults: tuple[str, ...] = ()  # the fault kinds every design was explored under (spec/FAULTS.md)
    fresh_ids: bool = False  # whether the model handed out new call IDs when asked again
    every: bool = False  # whether text and Markdown list every design, not the frontier alone (--every)

    @property
    def retried(self) -> bool:
        """Whether some design has retry layers (the frontier was crossed with retry stacks)."""
        return any(item.row.retries for item in self.entries)

    @property
    def setting(self) -> str:
        """Job, tracker, depth, and the faults and call IDs when they are not the seed's."""
        words = [f"job {self.job}", f"tracker {self.tracker}", f"depth {self.depth}"]
        if self.faults:
            words.append(f"faults {', '.join(self.faults)}")
        if self.fresh_ids:
            words.append("fresh call IDs")
        return ", ".join(words)

    def entry(self, number: int) -> Entry:
        """The design with this number."""
        return self.entries[number - 1]


def frontier(
    entries: Sequence[Entry],
    *,
    job: str,
    tracker: str,
    depth: int,
    faults: tuple[str, ...] = (),
    fresh_ids: bool = False,
) -> Frontier:
    """The safe set, the Pareto frontier and the cheapest safe design of `entries` (explored under `faults`)."""
    for position, item in enumerate(entries, start=1):
        if item.number != position:
            raise ValueError(f"design numbers must run 1..n in order: found {item.number} at {position}")
    safe = [item for item in entries if item.row.holds]
    vectors = [item.costs for item in safe]  # each built once: the check below is quadratic in the safe designs
    pareto = [a for a, mine in zip(safe, vectors, strict=True) if not any(dominates(b, mine) for b in vectors)]
    pareto.sort(key=rank)
    cheapest = min(safe, key=rank) if safe else None
    ties = tuple(
        item.number for item in safe if cheapest is not None and item is not cheapest and item.costs == cheapest.costs
    )
    return Frontier(
        job=job,
        tracker=tracker,
        depth=depth,
        entries=tuple(entries),
        safe=tuple(item.number for item in safe),
        pareto=tuple(item.number for item in pareto),
        cheapest=cheapest.number if cheapest is not None else None,
        ties=ties,
        faults=faults,
        fresh_ids=fresh_ids,
    )


def _mark(result: Frontier, number: int) -> str:
    if number == result.cheapest:
        return "cheapest"
    if number in result.ties:
        return "tie"
    return "frontier" if number in result.pareto else ""


def row_cells(result: Frontier, item: Entry) -> list[str]:
    """A design's table cells: number, label, verdict, the ten cost figures, [its worst scenario,] its mark, presets."""
    verdict = "safe" if item.row.holds else verdict_words(item.row)
    costs = [str(n) for n in item.costs]
    worst = [str(n) for n in worst_case(item.row)] if result.retried else []
    return [str(item.number), item.label, verdict, *costs, *worst, _mark(result, item.number), ", ".join(item.presets)]


def worst_case(row: Summary) -> tuple[int, int]:
    """The worst single scenario of a design (spec/RETRIES.md 1.5): its duplicates, its model calls beyond the run's."""
    return row.worst_dups, row.worst_calls - row.run_calls


HEADER = ("#", "design", "verdict", *COST_RUN, *COST_EXTRA, "frontier", "preset")
WORST = ("worst dups", "worst calls+")
"""The worst scenario's columns, shown when the designs were crossed with retry stacks."""
_WORDS = ("design", "verdict", "frontier", "preset")


def header(result: Frontier) -> tuple[str, ...]:
    """The table's columns: the worst scenario's before the mark when retry stacks were crossed."""
    if not result.retried:
        return HEADER
    return (*HEADER[:-2], *WORST, *HEADER[-2:])


def headline(result: Frontier) -> str:
    """How many designs, how many safe, how many on the frontier."""
    return (
        f"{len(result.entries)} designs (every valid policy combination{_crossed(result)}), {result.setting}: "
        f"{len(result.safe)} hold every invariant, "
        f"{len(result.pareto)} of them on the frontier (no other safe design is cheaper on every cost)"
    )


def _crossed(result: Frontier) -> str:
    return ", each with every retry stack" if result.retried else ""


def verdict_lines(result: Frontier) -> list[str]:
    """The cheapest safe design, its ties and the order that makes it the cheapest."""
    if result.cheapest is None:
        return ["no design is safe for this job and tracker at this depth"]
    best = result.entry(result.cheapest)
    lines = [f"cheapest safe design: #{best.number} {best.label}"]
    lines.append("  " + ", ".join(f"{name} = {toml_value(value)}" for name, value in best.policy.items()))
    if result.ties:
        same = ", ".join(f"#{n}" for n in result.ties)
        lines.append(f"  equal on every cost on this job: {same} (the first enumerated is named)")
    lines.append(f"  cheapest means first by: {ORDER}")
    return [*lines, *setting_lines(result)]


def setting_lines(result: Frontier) -> list[str]:
    """For each conversation field the designs were crossed with, the values some safe design has.

    `frontier --conversation` crosses the designs with the fields that matter on the job; what a
    user wants to know of each is which setting is safe there and which never is, whatever the
    rest of the design (spec/CONVERSATIONS.md). A field none of the designs sets off its default
    was not crossed and is not named.
    """
    crossed = [name for name in CONVERSATION if any(name in item.policy for item in result.entries)]
    if not crossed or not result.safe:
        return []
    safe = [result.entry(number).policy for number in result.safe]
    lines = ["safe settings of the fields crossed (the values some safe design has):"]
    for name in crossed:
        values = [str(value) for value in CONVERSATION[name]]
        found = {str(policy.get(name, values[0])) for policy in safe}
        text = ", ".join(value for value in values if value in found)
        never = [value for value in values if value not in found]
        lines.append(f"  {name}: {text}" + (f" (never safe: {', '.join(never)})" if never else ""))
    return lines


def _text_table(result: Frontier, numbers: Sequence[int]) -> str:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in header(result):
        table.add_column(name, justify="left" if name in _WORDS else "right")
    for number in numbers:
        table.add_row(*(Text(cell) for cell in row_cells(result, result.entry(number))))  # labels hold [ ]
    return render_table(table, width=400).rstrip("\n")


def _frontier_title(result: Frontier) -> str:
    return f"the frontier, cheapest first ({len(result.pareto)} designs):"


EVERY_HINT = "every design's row: the same command with --every, or --format json"


def frontier_text(result: Frontier) -> str:
    """The frontier's table and the cheapest safe design; with `every`, every design's table first."""
    lines = [headline(result), f"cost: {COST_MEANING}", ""]
    if result.every:
        lines += ["every design:", _text_table(result, [item.number for item in result.entries]), ""]
    else:
        lines += [f"({EVERY_HINT})", ""]
    if result.pareto:
        lines += [_frontier_title(result), _text_table(result, result.pareto), ""]
    return "\n".join([*lines, *verdict_lines(result)]) + "\n"


def _markdown_table(result: Frontier, numbers: Sequence[int]) -> list[str]:
    columns = header(result)
    rule = "|" + "".join("---|" if name in _WORDS else "---:|" for name in columns)
    lines = ["| " + " | ".join(columns) + " |", rule]
    for number in numbers:
        cells = row_cells(result, result.entry(number))
        cells[1] = f"`{cells[1]}`"
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def frontier_markdown(result: Frontier) -> str:
    """The frontier as a Markdown table and the cheapest safe design; with `every`, every design's table first."""
    lines = [headline(result) + ".", "", f"Cost: {COST_MEANING}.", ""]
    if result.every:
        lines += ["Every design:", "", *_markdown_table(result, [item.number for item in result.entries]), ""]
    else:
        lines += [f"({EVERY_HINT[0].upper()}{EVERY_HINT[1:]}.)", ""]
    if result.pareto:
        lines += [_frontier_title(result).capitalize(), "", *_markdown_table(result, result.pareto), ""]
    lines += [line.strip() + "  " for line in verdict_lines(result)]
    return "\n".join(lines).rstrip() + "\n"


def cheapest_design_file(result: Frontier) -> str | None:
    """The cheapest safe design as a design file (`--design FILE`), or None when nothing is safe."""
    if result.cheapest is None:
        return None
    best = result.entry(result.cheapest)
    summary = f"the cheapest safe design for {result.setting}"
    lines = [
        f"# Design #{best.number} of `crashsweep frontier`: {best.label}",
        f"name = {json.dumps(f'frontier-{best.number}')}",
        f"summary = {json.dumps(summary)}",
        *(f"{name} = {toml_value(value)}" for name, value in best.policy.items()),
    ]
    return "\n".join(lines) + "\n"


def frontier_json(result: Frontier) -> str:
    """The whole frontier as one JSON object (keys documented in the README)."""
    data: dict[str, Any] = {
        "job": result.job,
        "tracker": result.tracker,
        "depth": result.depth,
        **(
            {"faults": list(result.faults), "call_ids": "fresh" if result.fresh_ids else "stable"}
            if result.faults or result.fresh_ids
            else {}
        ),
        "designs": len(result.entries),
        "safe": list(result.safe),
        "frontier": list(result.pareto),
        "cheapest": result.cheapest,
        "ties": list(result.ties),
        "order": ORDER,
        "entries": [
            {
                "number": item.number,
                "label": item.label,
                "policy": dict(item.policy),
                "presets": list(item.presets),
                "safe": item.row.holds,
                "on_frontier": item.number in result.pareto,
                "row": item.row.to_json(),
            }
            for item in result.entries
        ],
    }
    return json.dumps(data, indent=2) + "\n"
