"""The CLI's output formats: one registry, where a format is a name and a renderer per kind of result.

Each command prints one or more kinds of result (an explored design's row, the compare tables,
the frontier, a real sweep's row, a conformance table, a replayed trace). Its `--format`
option is `format_option(kind, ...)`: exactly the formats that render every one of those kinds,
in the registry's order, so `--help` lists what works; it prints through `render`, never an
if-chain of its own. A new format is one renderer per kind it supports plus one entry in
`FORMATS`; a command whose kinds it does not render simply does not offer it.

A format is `for_people` when its output is prose: the lines a command adds about the files it
wrote then join stdout, where otherwise they go to stderr so that stdout stays one document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

import click
from click.decorators import FC

from crashsweep.cli import sweep_scenarios
from crashsweep.realsweep import api
from crashsweep.reports import table, trace
from crashsweep.reports.counterexample import Counterexample
from crashsweep.reports.frontier import Frontier, frontier_json, frontier_markdown, frontier_text
from crashsweep.reports.summary import Summary

R = TypeVar("R")


@dataclass(frozen=True, eq=False)
class Kind(Generic[R]):
    """A kind of result a command prints; `R` is the type a renderer of this kind takes."""

    name: str


@dataclass(frozen=True)
class Tables:
    """What compare prints: its tables, each a title (may be empty) and its rows."""

    tables: Sequence[tuple[str, Sequence[Summary]]]


@dataclass(frozen=True)
class Swept:
    """What sweep prints: the row, the sweep it sums up and the command that re-runs it."""

    row: Summary
    result: api.SweepResult
    command: Sequence[str]


@dataclass(frozen=True)
class Traced:
    """What replay prints: a counterexample and the program its re-run lines name."""

    cx: Counterexample
    program: tuple[str, ...]


ROW: Kind[Summary] = Kind("an explored design's row")
TABLES: Kind[Tables] = Kind("the compare tables")
FRONTIER: Kind[Frontier] = Kind("the frontier")
SWEEP: Kind[Swept] = Kind("a real sweep's row")
CONFORMANCE: Kind[Sequence[api.Conformance]] = Kind("a conformance table")
TRACE: Kind[Traced] = Kind("a replayed trace")


@dataclass(frozen=True)
class Format:
    """A format: its name, its renderer for each kind it prints and whether its output is prose."""

    name: str
    renderers: Mapping[Kind[Any], Callable[[Any], str]] = field(repr=False)
    for_people: bool = False


def _tables(result: Tables, *, markdown: bool) -> str:
    """Each table (its title, its rows, its costs), a blank line between tables."""
    render = table.table_markdown if markdown else table.table_text
    render_cost = table.cost_markdown if markdown else table.cost_text
    parts = []
    for i, (title, shown) in enumerate(result.tables):
        heading = f"{'## ' if markdown else ''}{title}\n\n" if title else ""
        parts.append(("\n" if i else "") + heading + render(shown) + "\n" + render_cost(shown))
    return "".join(parts)


def _tables_json(result: Tables) -> str:
    """Every row of every table in one JSON list."""
    return table.to_json([row for _, shown in result.tables for row in shown])


def _sweep_text(swept: Swept) -> str:
    """The row with its counterexamples, then what was not reached and how to re-run each finding."""
    text = api.row_text(swept.row, swept.result, api.counterexamples(swept.result))
    extra = sweep_scenarios.unreached_lines(swept.result) + sweep_scenarios.rerun_lines(swept.result, swept.command)
    return text + ("\n".join(extra) + "\n" if extra else "")


def _sweep_json(swept: Swept) -> str:
    """The row as JSON, with the codes of the scenarios not reached."""
    data = json.loads(api.row_json(swept.row, swept.result))
    data["unreached"] = [s.code for s in swept.result.unreached]
    return json.dumps(data, indent=2) + "\n"


def _sweep_markdown(swept: Swept) -> str:
    return table.row_markdown(swept.row)


def _trace_text(traced: Traced) -> str:
    return trace.text(traced.cx, program=traced.program)


def _trace_json(traced: Traced) -> str:
    return trace.to_json(traced.cx, program=traced.program)


TEXT = Format(
    "text",
    {
        ROW: table.row_text,
        TABLES: partial(_tables, markdown=False),
        FRONTIER: frontier_text,
        SWEEP: _sweep_text,
        CONFORMANCE: partial(api.render_conformance, fmt="text"),
        TRACE: _trace_text,
    },
    for_people=True,
)
JSON = Format(
    "json",
    {ROW: table.to_json, TABLES: _tables_json, FRONTIER: frontier_json, SWEEP: _sweep_json, TRACE: _trace_json},
)
MARKDOWN = Format(
    "markdown",
    {
        ROW: table.row_markdown,
        TABLES: partial(_tables, markdown=True),
        FRONTIER: frontier_markdown,
        SWEEP: _sweep_markdown,
        CONFORMANCE: partial(api.render_conformance, fmt="markdown"),
    },
)

FORMATS: dict[str, Format] = {format.name: format for format in (TEXT, JSON, MARKDOWN)}
"""Every format, in the order --help lists them; the first is the default."""


def offered(*kinds: Kind[Any]) -> list[str]:
    """The names of the formats that render every one of `kinds`, in the registry's order."""
    return [name for name, format in FORMATS.items() if all(kind in format.renderers for kind in kinds)]


def format_option(*kinds: Kind[Any]) -> Callable[[FC], FC]:
    """The --format option of a command that prints `kinds`: the formats that render them all."""
    return click.option("--format", "fmt", type=click.Choice(offered(*kinds)), default=TEXT.name, show_default=True)


def render(fmt: str, kind: Kind[R], result: R) -> str:
    """`result` rendered in format `fmt` (a name the command's --format offered)."""
    return FORMATS[fmt].renderers[kind](result)


def for_people(fmt: str) -> bool:
    """Whether format `fmt` is prose, so that notes about written files may join stdout."""
    return FORMATS[fmt].for_people
