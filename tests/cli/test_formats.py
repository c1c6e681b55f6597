"""The format registry: which formats each kind offers, --format built from it, and rendering through it."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

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
    assert list(FORMATS) == ["text", "json", "markdown", "junit"]
    for kind in (ROW, TABLES, SWEEP):
        assert formats.offered(kind) == ["text", "json", "markdown", "junit"]
    assert formats.offered(FRONTIER) == ["text", "json", "markdown"]
    assert formats.offered(CONFORMANCE) == ["text", "markdown", "junit"]
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
    csv = Format("csv", {ROW: lambda explored: f"{explored.row.variant},{explored.row.holds}\n"})
    monkeypatch.setitem(FORMATS, "csv", csv)
    assert formats.offered(ROW) == ["text", "json", "markdown", "junit", "csv"]
    assert "csv" not in formats.offered(TRACE)

    @click.command()
    @formats.format_option(ROW)
    def show(fmt: str) -> None:
        click.echo(formats.render(fmt, ROW, formats.Explored(_row("r"))), nl=False)

    runner = CliRunner()
    assert "[text|json|markdown|junit|csv]" in runner.invoke(show, ["--help"]).output
    assert runner.invoke(show, ["--format", "csv"]).output == "r,True\n"
    assert runner.invoke(show, []).output == table.row_text(_row("r"))


# --- --format junit: every kind read back with a real JUnit reader (junitparser) ---


def _junit(text: str) -> dict[str, dict[str, str | None]]:
    """Per suite, per case: None when it passed, else the failure's message and text joined by a newline."""
    from junitparser import JUnitXml

    read: dict[str, dict[str, str | None]] = {}
    for suite in JUnitXml.fromstring(text.encode("utf-8")):
        cases = read.setdefault(str(suite.name), {})
        for case in suite:
            results = list(case.result)
            cases[str(case.name)] = None if not results else f"{results[0].message}\n{results[0].text}"
    return read


def test_explore_in_junit_names_the_replay_command_crashsweep_prints_for_the_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One suite, a case per invariant; the failure holds the replay line of the text output and the trace."""
    from crashsweep.cli.main import main

    args = ["explore", "--variant", "save-after-reply", "--depth", "1"]
    assert main(args) == 1
    text = capsys.readouterr().out
    replay = next(
        line.split("replay: ", 1)[1] for line in text.splitlines() if line.split()[:2] == ["no-duplicate", "replay:"]
    )
    assert main([*args, "--format", "junit"]) == 1
    cases = _junit(capsys.readouterr().out)["save-after-reply"]
    assert cases["no-loss"] is None
    failure = cases["no-duplicate"]
    assert failure is not None
    assert failure.startswith("no-duplicate VIOLATED: shortest counterexample: 1 crash, 10 steps, path 10:7=1\n")
    assert f"replay: {replay}\n" in failure
    assert "VIOLATED no-duplicate after step 10" in failure


def test_compare_in_junit_gives_each_failure_its_trace_and_each_suite_and_case_its_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As explore's: the replay line and the counterexample's trace; every time a non-negative number of seconds."""
    from crashsweep.cli.main import main

    assert main(["explore", "--variant", "save-after-reply", "--depth", "1", "--format", "junit"]) == 1
    explored = _junit(capsys.readouterr().out)["save-after-reply"]["no-duplicate"]
    args = ["compare", "--variants", "save-after-reply,idempotency-keys", "--depth", "1", "--format", "junit"]
    assert main(args) == 1
    text = capsys.readouterr().out
    read = _junit(text)
    failure = read["save-after-reply"]["no-duplicate"]
    assert failure is not None
    assert "VIOLATED no-duplicate after step 10" in failure
    assert "   7  CRASH    at tracker accepted create_a" in failure
    assert failure == explored
    assert set(read["idempotency-keys"].values()) == {None}
    root = ET.fromstring(text)
    timed = [root, *root.iter("testsuite"), *root.iter("testcase")]
    assert len(timed) == 1 + 2 + 10
    for element in timed:
        assert float(element.get("time", "missing")) >= 0, element.attrib


def test_compare_in_junit_has_a_suite_per_row_with_replay_commands(tmp_path: Path) -> None:
    """Rows of a design file replay with --design FILE, a job file with --job; an overridden fsync has none."""
    first, second = _row("a", safe=False), _row("b", safe=False)
    verdict = InvariantVerdict("no-duplicate", False, "some write applied", True, "4:2=1", 1, 4)
    first = dataclasses.replace(first, invariants=(verdict, first.invariants[1]))
    second = dataclasses.replace(second, invariants=(verdict, second.invariants[1]), fsync="never")
    rerun = formats.Rerun(("crashsweep",), "/jobs/j.toml", {"a": "/designs/a.toml"})
    read = _junit(formats.render("junit", TABLES, formats.Tables([("", [first]), ("Two", [second])], rerun)))
    assert list(read) == ["a", "b"]
    replay = "crashsweep replay --design /designs/a.toml --depth 1 --job /jobs/j.toml --tracker keyed --path 4:2=1"
    assert (
        read["a"]["no-duplicate"]
        == f"no-duplicate VIOLATED: shortest counterexample: 1 crash, 4 steps, path 4:2=1\nreplay: {replay}"
    )
    assert "replay takes the design's own" in str(read["b"]["no-duplicate"])
    mixed = formats.Tables([("", [first, dataclasses.replace(first, tracker="keyless")])])
    assert list(_junit(formats.render("junit", TABLES, mixed))) == ["a@keyed", "a@keyless"]


def test_a_sweep_in_junit_names_its_first_scenario_and_the_command_that_re_runs_it() -> None:
    """The violated case's message names the scenario; its text is sweep's re-run line with --crash."""
    from crashsweep.realsweep import api

    bad = ScenarioResult((Crash(1, "tracker accepted a"),), Outcome(applied=2, dups=1), {}, ())
    result = SweepResult(1, ScenarioResult((), Outcome(applied=1), {}, ("a",)), (bad,), 2, 0.5)
    row = api.sweep_summary(result, variant="s", job="j", tracker="keyed")
    read = _junit(formats.render("junit", SWEEP, formats.Swept(row, result, ["crashsweep", "sweep", "--variant", "s"])))
    failure = read["s"]["no-duplicate"]
    assert failure is not None
    assert failure.startswith("no-duplicate VIOLATED: first in scenario 1: crash at point 1")
    assert failure.endswith("\nre-run: crashsweep sweep --variant s --crash 'tracker accepted a'")
    assert read["s"]["no-loss"] is None


def test_conform_in_junit_has_a_case_per_compared_column_failing_where_the_rows_differ() -> None:
    """Each figure and verdict is a case; a difference fails its column with model and real values."""
    from crashsweep.realsweep import api

    result = SweepResult(1, ScenarioResult((), Outcome(applied=1), {}, ("a",)), (), 1, 0.5)
    model = _row("d")
    agrees = api.Conformance(model, model, result)
    differs = api.Conformance(
        dataclasses.replace(model, tracker="keyless"), dataclasses.replace(model, tracker="keyless", dups=1), result
    )
    read = _junit(formats.render("junit", CONFORMANCE, [agrees, differs]))
    assert list(read) == ["d", "d@keyless"]
    assert list(read["d"]) == [*api.CONFORMANCE_FIELDS, "no-duplicate", "no-loss"]
    assert all(failure is None for failure in read["d"].values())
    assert read["d@keyless"]["dups"] == "dups: model 0, real 1\ndups: model 0, real 1"
    assert sum(failure is not None for failure in read["d@keyless"].values()) == 1
