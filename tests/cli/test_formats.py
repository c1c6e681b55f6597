"""The format registry: which formats each kind offers, --format built from it, and rendering through it."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from crashsweep.cli import formats
from crashsweep.cli.formats import CONFORMANCE, FORMATS, FRONTIER, ROW, SWEEP, TABLES, TRACE, Format
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepResult
from crashsweep.reports import table
from crashsweep.reports.summary import InvariantVerdict, Summary
from crashsweep.spec.cost import Cost


def _row(name: str, *, safe: bool = True) -> Summary:
    """A hand-made row of one scenario."""
    verdicts = (
        InvariantVerdict("no-duplicate", safe, "some write applied", True),
        InvariantVerdict("no-loss", True, "some run finished", True),
    )
    return Summary(
        variant=name, job="j", depth=1, tracker="keyed", crash_points=1, scenarios={1: 1},
        with_dups=0 if safe else 1, dups=0 if safe else 1, missing=0, asks=0, calls_plus=0, lookups=0,
        reruns=0, approvals=0, states=1, edges=1, invariants=verdicts, run_cost=Cost(), scenario_cost=Cost(),
    )  # fmt: skip


def test_each_kind_offers_the_formats_that_render_it_in_the_registry_order() -> None:
    """Text first (the default); conformance has no JSON, a trace no markdown."""
    assert list(FORMATS) == ["text", "json", "markdown"]
    for kind in (ROW, TABLES, FRONTIER, SWEEP):
        assert formats.offered(kind) == ["text", "json", "markdown"]
    assert formats.offered(CONFORMANCE) == ["text", "markdown"]
    assert formats.offered(TRACE) == ["text", "json"]
    assert formats.offered(CONFORMANCE, TRACE) == ["text"]


def test_only_text_is_for_people() -> None:
    """Notes about written files join stdout in text only: JSON and markdown stay one document."""
    assert [name for name in FORMATS if formats.for_people(name)] == ["text"]


def test_the_compare_tables_are_each_table_with_its_costs_and_json_is_every_row() -> None:
    """Titled tables get a heading (## in markdown) and a blank line between them; JSON lists every row."""
    first, second = [_row("a")], [_row("b", safe=False)]
    tables = formats.Tables([("", first), ("Two", second)])
    expected = table.table_text(first) + "\n" + table.cost_text(first)
    expected += "\nTwo\n\n" + table.table_text(second) + "\n" + table.cost_text(second)
    assert formats.render("text", TABLES, tables) == expected
    assert "\n## Two\n\n" in formats.render("markdown", TABLES, tables)
    assert [row["variant"] for row in json.loads(formats.render("json", TABLES, tables))] == ["a", "b"]


def test_a_sweep_row_in_json_lists_what_was_not_reached() -> None:
    """The JSON row, indented, ends in one newline and names the unreached scenarios by code."""
    done = ScenarioResult((Crash(1, "a"),), Outcome(applied=1), {}, ())
    missed = ScenarioResult((Crash(2, "b"),), Outcome(), {}, (), unreached=1)
    result = SweepResult(1, ScenarioResult((), Outcome(applied=1), {}, ("a", "b")), (done,), 3, 0.5, (missed,))
    out = formats.render("json", SWEEP, formats.Swept(_row("s"), result, ["crashsweep", "sweep"]))
    assert out.endswith("}\n")
    assert json.loads(out)["unreached"] == ["2"]
    assert formats.render("markdown", SWEEP, formats.Swept(_row("s"), result, [])) == table.row_markdown(_row("s"))


def test_a_new_format_is_one_entry_and_is_offered_where_it_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    """A format that renders rows only: in --help and usable for a row command, absent elsewhere."""
    csv = Format("csv", {ROW: lambda row: f"{row.variant},{row.holds}\n"})
    monkeypatch.setitem(FORMATS, "csv", csv)
    assert formats.offered(ROW) == ["text", "json", "markdown", "csv"]
    assert "csv" not in formats.offered(TRACE)

    @click.command()
    @formats.format_option(ROW)
    def show(fmt: str) -> None:
        click.echo(formats.render(fmt, ROW, _row("r")), nl=False)

    runner = CliRunner()
    assert "[text|json|markdown|csv]" in runner.invoke(show, ["--help"]).output
    assert runner.invoke(show, ["--format", "csv"]).output == "r,True\n"
    assert runner.invoke(show, []).output == table.row_text(_row("r"))
