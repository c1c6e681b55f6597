"""The CLI's output formats: one registry, where a format is a name and a renderer per kind of result.

Each command prints one or more kinds of result (an explored design's row, the compare tables,
the frontier, a real sweep's row, a conformance table, a replayed trace). Its `--format`
option is `format_option(kind, ...)`: exactly the formats that render every one of those kinds,
in the registry's order, so `--help` lists what works; it prints through `render`, never an
if-chain of its own. A new format is one renderer per kind it supports plus one entry in
`FORMATS`; a command whose kinds it does not render simply does not offer it.

A format is `for_people` when its output is prose: the lines a command adds about the files it
wrote then join stdout, where otherwise they go to stderr so that stdout stays one document.

The real side's renderers (a sweep's row, a conformance table) import it when they run: a
command of the model side does not import the real sweep to start (crashsweep.cli.lazy).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click
from click.decorators import FC

from crashsweep.reports import audit, junit, table, trace
from crashsweep.reports.counterexample import Counterexample
from crashsweep.reports.frontier import Frontier, frontier_json, frontier_markdown, frontier_text
from crashsweep.reports.replay import PROGRAM, command_line, replay_command
from crashsweep.reports.summary import InvariantVerdict, Summary
from crashsweep.spec.auditing import RunAudit

if TYPE_CHECKING:
    from crashsweep.realsweep import api

R = TypeVar("R")


@dataclass(frozen=True, eq=False)
class Kind(Generic[R]):
    """A kind of result a command prints; `R` is the type a renderer of this kind takes."""

    name: str


@dataclass(frozen=True)
class Explored:
    """What explore prints: the row, and the shortest counterexamples with the program their replay lines name."""

    row: Summary
    counterexamples: Sequence[Counterexample] = ()
    program: tuple[str, ...] = PROGRAM


@dataclass(frozen=True)
class Rerun:
    """What the replay commands of compare's rows need beyond each row: the program, job and design files.

    `design_files` maps a design file's design name to the file (absolute), as replay lines name it.
    """

    program: tuple[str, ...] = PROGRAM
    job_file: str | None = None
    design_files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ran:
    """What one compare row's exploration gave beyond the row: its seconds and shortest counterexamples.

    Measured where the exploration runs (crashsweep.cli.main) and passed here as values: no
    renderer reads a clock. JUnit gives each suite its seconds and each failure its trace.
    """

    seconds: float = 0.0
    counterexamples: Sequence[Counterexample] = ()


@dataclass(frozen=True)
class Tables:
    """What compare prints: its tables, each a title (may be empty) and its rows; how to replay them."""

    tables: Sequence[tuple[str, Sequence[Summary]]]
    rerun: Rerun = field(default_factory=Rerun)
    ran: Sequence[Ran] = ()
    """Each row's exploration, in the rows' order across the tables (a row past the end: nothing known)."""


@dataclass(frozen=True)
class Swept:
    """What sweep prints: the row, the sweep it sums up and the command that re-runs it."""

    row: Summary
    result: api.SweepResult
    command: Sequence[str]
    deterministic: int | None = None
    """The start worlds a determinism check ran twice before the sweep (and it held), or None."""


@dataclass(frozen=True)
class Traced:
    """What replay prints: a counterexample and the program its re-run lines name."""

    cx: Counterexample
    program: tuple[str, ...]


ROW: Kind[Explored] = Kind("an explored design's row")
TABLES: Kind[Tables] = Kind("the compare tables")
FRONTIER: Kind[Frontier] = Kind("the frontier")
SWEEP: Kind[Swept] = Kind("a real sweep's row")
CONFORMANCE: Kind[Sequence[api.Conformance]] = Kind("a conformance table")
TRACE: Kind[Traced] = Kind("a replayed trace")
AUDIT: Kind[Sequence[RunAudit]] = Kind("an audit of recorded runs")


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
    from crashsweep.cli import sweep_determinism, sweep_scenarios
    from crashsweep.realsweep import api

    text = api.row_text(swept.row, swept.result, api.counterexamples(swept.result))
    if swept.deterministic is not None:
        text += sweep_determinism.held_line(swept.deterministic)
    extra = sweep_scenarios.unreached_lines(swept.result) + sweep_scenarios.rerun_lines(
        swept.result, swept.command, [v.name for v in swept.row.invariants]
    )
    return text + ("\n".join(extra) + "\n" if extra else "")


def _sweep_json(swept: Swept) -> str:
    """The row as JSON, with the codes of the scenarios not reached."""
    from crashsweep.realsweep import api

    data = json.loads(api.row_json(swept.row, swept.result))
    data["unreached"] = [s.code for s in swept.result.unreached]
    if swept.deterministic is not None:
        data["deterministic"] = {"holds": True, "start_worlds": swept.deterministic}
    return json.dumps(data, indent=2) + "\n"


def _sweep_markdown(swept: Swept) -> str:
    return table.row_markdown(swept.row)


def _conformance(results: Sequence[api.Conformance], *, fmt: str) -> str:
    """The conformance table in `fmt` (text or markdown)."""
    from crashsweep.realsweep import api

    return api.render_conformance(results, fmt=fmt)


def _row(render: Callable[[Summary], str]) -> Callable[[Explored], str]:
    """A renderer of explore's result that renders its row with `render`."""
    return lambda explored: render(explored.row)


def _trace_text(traced: Traced) -> str:
    return trace.text(traced.cx, program=traced.program)


def _trace_json(traced: Traced) -> str:
    return trace.to_json(traced.cx, program=traced.program)


TEXT = Format(
    "text",
    {
        ROW: _row(table.row_text),
        TABLES: partial(_tables, markdown=False),
        FRONTIER: frontier_text,
        SWEEP: _sweep_text,
        CONFORMANCE: partial(_conformance, fmt="text"),
        TRACE: _trace_text,
        AUDIT: audit.text,
    },
    for_people=True,
)
JSON = Format(
    "json",
    {
        ROW: _row(table.to_json),
        TABLES: _tables_json,
        FRONTIER: frontier_json,
        SWEEP: _sweep_json,
        TRACE: _trace_json,
        AUDIT: audit.to_json,
    },
)
MARKDOWN = Format(
    "markdown",
    {
        ROW: _row(table.row_markdown),
        TABLES: partial(_tables, markdown=True),
        FRONTIER: frontier_markdown,
        SWEEP: _sweep_markdown,
        CONFORMANCE: partial(_conformance, fmt="markdown"),
    },
)

# --- JUnit XML (crashsweep.reports.junit): a suite per design, target or pair, a case per invariant or column ---


def _never_seen(verdict: InvariantVerdict) -> str:
    return f"the witness {verdict.witness!r} was never seen: no path exercised {verdict.name}, so it proves nothing"


def _replayed(cx: Counterexample, program: Sequence[str]) -> str:
    """A violated case's text (explore's and compare's): the replay command, then the counterexample's trace."""
    return f"replay: {replay_command(cx, program=program)}\n\n{trace.text(cx, program=program)}"


def _explored_junit(explored: Explored) -> str:
    """A suite of the design: a violated case's text is the replay command, then the trace of its counterexample."""
    found = {cx.invariant: cx for cx in explored.counterexamples}

    def details(verdict: InvariantVerdict) -> str:
        cx = found.get(verdict.name)
        if cx is None or verdict.holds:
            return _never_seen(verdict)
        return _replayed(cx, explored.program)

    return junit.document([junit.row_suite(explored.row, details)])


def _tables_junit(result: Tables) -> str:
    """A suite per row of every table (named NAME@TRACKER when the rows differ in tracker), a case per invariant.

    A suite's time is its exploration's; a violated case's text is, as explore's, the replay
    command and the trace of its shortest counterexample.
    """
    rows = [row for _, shown in result.tables for row in shown]
    several = len({row.tracker for row in rows}) > 1
    rerun = result.rerun

    def suite(row: Summary, ran: Ran) -> junit.Suite:
        found = {cx.invariant: cx for cx in ran.counterexamples}

        def details(verdict: InvariantVerdict) -> str:
            if verdict.holds or verdict.counterexample is None:
                return _never_seen(verdict)
            if verdict.name in found:
                return _replayed(found[verdict.name], rerun.program)
            if row.fsync or row.unreadable:
                return f"path {verdict.counterexample}, explored with {row.environment}: replay takes the design's own"
            command = command_line(
                row.variant, row.depth, row.tracker, verdict.counterexample, job_file=rerun.job_file,
                design_file=rerun.design_files.get(row.variant), faults=row.faults, fresh_ids=row.fresh_ids,
                program=rerun.program,
            )  # fmt: skip
            return f"replay: {command}"

        name = f"{row.variant}@{row.tracker}" if several else row.variant
        return junit.row_suite(row, details, name=name, seconds=ran.seconds)

    ran = [*result.ran, *[Ran()] * (len(rows) - len(result.ran))]
    return junit.document([suite(row, each) for row, each in zip(rows, ran, strict=False)])


def _sweep_junit(swept: Swept) -> str:
    """A suite of the target: a violated case says its first scenario and the command that re-runs it."""
    from crashsweep.cli import sweep_scenarios
    from crashsweep.realsweep import api

    said = api.counterexamples(swept.result)

    def words(verdict: InvariantVerdict) -> str:
        return f"first in scenario {verdict.counterexample}: {said.get(verdict.name, '')}"

    def details(verdict: InvariantVerdict) -> str:
        if verdict.holds:
            return _never_seen(verdict)
        first = next((s for s in swept.result.scenarios if s.code == verdict.counterexample), None)
        if first is None or first.faults:
            return f"scenario {verdict.counterexample} has a fault move: --crash re-runs scenarios of crashes only"
        return f"re-run: {shlex.join([*swept.command, *sweep_scenarios.crash_arguments(first.crashes)])}"

    return junit.document([junit.row_suite(swept.row, details, words)])


def _conformance_junit(results: Sequence[api.Conformance]) -> str:
    """A suite per design (NAME@TRACKER but for keyed), a case per compared column and invariant verdict."""
    from crashsweep.realsweep import api

    suites = []
    for c in results:
        differs = dict(difference.split(": ", 1) for difference in c.differences)
        columns = [
            *api.CONFORMANCE_FIELDS,
            *(["moves"] if c.model.faults else []),
            *(v.name for v in c.real.invariants),
        ]
        cases = [
            junit.Case(column, None if column not in differs else junit.Failure(
                f"{column}: {differs[column]}", "differs", "; ".join(c.differences)
            ))
            for column in columns
        ]  # fmt: skip
        name = c.model.variant if c.model.tracker == "keyed" else f"{c.model.variant}@{c.model.tracker}"
        properties = {**junit.row_properties(c.model), "processes": str(c.sweep.processes)}
        suites.append(junit.Suite(name, cases, properties))
    return junit.document(suites)


JUNIT = Format(
    "junit",
    {
        ROW: _explored_junit,
        TABLES: _tables_junit,
        SWEEP: _sweep_junit,
        CONFORMANCE: _conformance_junit,
        AUDIT: lambda audits: junit.document(audit.suites(audits)),
    },
)

FORMATS: dict[str, Format] = {format.name: format for format in (TEXT, JSON, MARKDOWN, JUNIT)}
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
