"""Tests of crashsweep.reports.frontier: the safe set, dominance, the frontier and the cheapest, on hand-made rows."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import replace

import pytest

from crashsweep.reports.frontier import (
    Entry,
    cheapest_design_file,
    dominates,
    frontier,
    frontier_json,
    frontier_markdown,
    frontier_text,
    rank,
)
from crashsweep.reports.summary import InvariantVerdict, Summary
from crashsweep.spec.cost import Cost


def _entry(number: int, *, safe: bool, run: Cost, extra: Cost) -> Entry:
    """A design of one scenario whose cost is `run` uninterrupted and `extra` more with the crash."""
    verdicts = (
        InvariantVerdict("no-duplicate", safe, "some write applied", True),
        InvariantVerdict("no-loss", True, "some run finished", True),
    )
    scenario = Cost(*(a + b for a, b in zip(run.as_tuple(), extra.as_tuple(), strict=True)))
    row = Summary(
        variant=f"d{number}",
        job="j",
        depth=1,
        tracker="keyed",
        crash_points=1,
        scenarios={1: 1},
        with_dups=0 if safe else 1,
        dups=0 if safe else 1,
        missing=0,
        asks=0,
        calls_plus=extra.model_calls,
        lookups=0,
        reruns=0,
        approvals=0,
        states=1,
        edges=1,
        invariants=verdicts,
        run_cost=run,
        scenario_cost=scenario,
    )
    return Entry(number, f"design {number} [rung>person]", {"n": number}, row)


# 1: safe, 2 saves, 10 calls+.  2: safe, 3 saves, 5 calls+ (a trade-off with 1: both on the frontier).
# 3: safe, 3 saves, 11 calls+: 1 is no dearer anywhere and cheaper in both, so 3 is dominated.
# 4: unsafe and cheapest of all: never safe, so never on the frontier, and it dominates nobody.
# 5: safe, the very cost of 1: a tie, on the frontier with it, named after it.
# 6: safe, one question on the run and nothing else: cheapest by saves would pick it, but a
#    question to a person comes first in the order, so it ranks last; it is on the frontier
#    (nobody else has 0 saves).
ENTRIES = [
    _entry(1, safe=True, run=Cost(saves=2), extra=Cost(model_calls=10)),
    _entry(2, safe=True, run=Cost(saves=3), extra=Cost(model_calls=5)),
    _entry(3, safe=True, run=Cost(saves=3), extra=Cost(model_calls=11)),
    _entry(4, safe=False, run=Cost(saves=1), extra=Cost()),
    _entry(5, safe=True, run=Cost(saves=2), extra=Cost(model_calls=10)),
    _entry(6, safe=True, run=Cost(questions=1), extra=Cost()),
]


def test_dominance_needs_no_worse_everywhere_and_better_somewhere() -> None:
    """Equal vectors do not dominate each other; a trade-off neither way."""
    assert dominates((1, 2), (1, 3))
    assert not dominates((1, 2), (1, 2))
    assert not dominates((1, 3), (2, 2))
    assert not dominates((2, 2), (1, 3))


def test_safe_set_frontier_cheapest_and_ties() -> None:
    """The worked example above: safe 1 2 3 5 6, frontier 1 5 2 6 (cheapest first), cheapest 1, tie 5."""
    result = frontier(ENTRIES, job="j", tracker="keyed", depth=1)
    assert result.safe == (1, 2, 3, 5, 6)
    assert result.pareto == (1, 5, 2, 6)
    assert result.cheapest == 1
    assert result.ties == (5,)
    assert rank(ENTRIES[5]) > rank(ENTRIES[2])  # a question outranks any number of saves


def test_no_safe_design() -> None:
    """With nothing safe there is no frontier and no cheapest, and the text says so."""
    unsafe = _entry(1, safe=False, run=Cost(saves=1), extra=Cost())
    result = frontier([unsafe], job="j", tracker="keyed", depth=1)
    assert (result.safe, result.pareto, result.cheapest) == ((), (), None)
    assert "no design is safe" in frontier_text(result)


def test_numbers_must_run_in_order() -> None:
    """Entries are numbered 1..n in enumeration order, or the frontier refuses them."""
    with pytest.raises(ValueError, match="numbers must run"):
        frontier([ENTRIES[1]], job="j", tracker="keyed", depth=1)


def test_text_lists_every_design_once_and_names_the_cheapest() -> None:
    """One line per design with its mark; the frontier and the cheapest after the table."""
    text = frontier_text(replace(frontier(ENTRIES, job="j", tracker="keyed", depth=1), every=True))
    assert text.startswith("6 designs (every valid policy combination), job j, tracker keyed, depth 1: 5 hold")
    every, on_frontier = text.split("the frontier, cheapest first (4 designs):")
    for number in range(1, 7):
        assert sum(1 for line in every.splitlines() if re.match(rf"\s*{number}\s+design {number}\s", line)) == 1
    numbered = [line.split()[0] for line in on_frontier.splitlines() if line.split() and line.split()[0].isdigit()]
    assert numbered == ["1", "5", "2", "6"]
    assert "cheapest safe design: #1 design 1" in text
    assert "equal on every cost on this job: #5" in text
    assert "[rung>person]" in text  # square brackets are text, not markup
    line = next(line for line in text.splitlines() if "design 4 " in line)
    assert "no-duplicate violated" in line


def test_markdown_and_json() -> None:
    """Markdown: a header, a rule and 6 rows; JSON: the documented keys, every entry once."""
    result = frontier(ENTRIES, job="j", tracker="keyed", depth=1)
    rows = [line for line in frontier_markdown(replace(result, every=True)).splitlines() if line.startswith("| ")]
    assert len(rows) == 7 + 5  # every design (header and 6), then the frontier (header and 4)
    rows = [line for line in frontier_markdown(result).splitlines() if line.startswith("| ")]
    assert len(rows) == 5  # the frontier alone (header and 4)
    data = json.loads(frontier_json(result))
    assert list(data) == [
        "job",
        "tracker",
        "depth",
        "designs",
        "safe",
        "frontier",
        "cheapest",
        "ties",
        "order",
        "entries",
    ]
    assert [e["number"] for e in data["entries"]] == [1, 2, 3, 4, 5, 6]
    assert data["entries"][0]["on_frontier"] is True
    assert data["entries"][2]["on_frontier"] is False
    assert data["entries"][3]["safe"] is False
    assert data["entries"][0]["row"]["cost"]["extra"]["model_calls"] == 10


def test_cheapest_design_file_is_toml_with_the_policy() -> None:
    """The cheapest as a design file: its name, a summary, the policy fields; None when nothing is safe."""
    data = tomllib.loads(cheapest_design_file(frontier(ENTRIES, job="j", tracker="keyed", depth=1)) or "")
    assert data == {
        "name": "frontier-1",
        "summary": "the cheapest safe design for job j, tracker keyed, depth 1",
        "n": 1,
    }
    unsafe = _entry(1, safe=False, run=Cost(saves=1), extra=Cost())
    assert cheapest_design_file(frontier([unsafe], job="j", tracker="keyed", depth=1)) is None


def test_presets_are_named_in_their_own_column() -> None:
    """A design that is a preset shows the preset's name last, in text, Markdown and JSON."""
    entries = list(ENTRIES)
    entries[1] = Entry(2, entries[1].label, entries[1].policy, entries[1].row, ("idempotency-keys", "dbos"))
    result = frontier(entries, job="j", tracker="keyed", depth=1)
    line = next(line for line in frontier_text(result).splitlines() if re.match(r"\s*2\s+design 2", line))
    assert line.endswith("frontier   idempotency-keys, dbos")
    assert "| frontier | idempotency-keys, dbos |" in frontier_markdown(result)
    assert json.loads(frontier_json(result))["entries"][1]["presets"] == ["idempotency-keys", "dbos"]


def test_the_text_is_a_summary_unless_every_design_is_asked_for() -> None:
    """By default: the headline, the frontier's table and the cheapest, and how to see every row (issue 24, 20)."""
    result = frontier(ENTRIES, job="j", tracker="keyed", depth=1)
    text = frontier_text(result)
    assert "every design:" not in text
    assert "design 3 " not in text  # safe, but not on the frontier: its row is left out
    assert "(every design's row: the same command with --every, or --format json)" in text
    table = text.split("the frontier, cheapest first (4 designs):")[1]
    numbered = [line.split()[0] for line in table.splitlines() if line.split() and line.split()[0].isdigit()]
    assert numbered == ["1", "5", "2", "6"]
    assert "cheapest safe design: #1 design 1" in text
    assert frontier_text(replace(result, every=True)).count("design 3 ") == 1
