"""JUnit XML: read back with a real JUnit reader (junitparser), counts, failures, properties, escaping."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from junitparser import Failure, JUnitXml, TestSuite

from crashsweep.reports import junit
from crashsweep.reports.summary import InvariantVerdict, Summary


def _row(*, safe: bool, witnessed: bool = True, faults: tuple[str, ...] = ()) -> Summary:
    """A hand-made row: no-duplicate violated (path 10:7=1) unless `safe`."""
    verdicts = (
        InvariantVerdict("no-duplicate", safe, "some write applied", witnessed, None if safe else "10:7=1", 1, 10),
        InvariantVerdict("no-loss", True, "some run finished", True),
    )
    return Summary(
        variant="save-after-reply", job="triage", depth=1, tracker="keyed", crash_points=1, scenarios={1: 1},
        with_dups=0, dups=0, missing=0, asks=0, calls_plus=0, lookups=0, reruns=0, approvals=0, states=1,
        edges=1, invariants=verdicts, faults=faults,
    )  # fmt: skip


def _suites(text: str) -> list[TestSuite]:
    return list(JUnitXml.fromstring(text.encode("utf-8")))


def test_a_row_is_a_suite_with_a_case_per_invariant_read_back_by_a_junit_reader() -> None:
    """The violated case carries a failure (message, type, text); the other passes; counts add up."""
    text = junit.document([junit.row_suite(_row(safe=False), lambda v: f"replay: crashsweep replay --path {v.name}")])
    (suite,) = _suites(text)
    assert (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped) == ("save-after-reply", 2, 1, 0, 0)
    cases = {case.name: case for case in suite}
    assert cases["no-loss"].is_passed
    (failure,) = cases["no-duplicate"].result
    assert isinstance(failure, Failure)
    assert failure.message == "no-duplicate VIOLATED: shortest counterexample: 1 crash, 10 steps, path 10:7=1"
    assert failure.type == "violated"
    assert failure.text == "replay: crashsweep replay --path no-duplicate"
    assert cases["no-duplicate"].classname == "crashsweep.save-after-reply"
    properties = suite.properties()  # type: ignore[no-untyped-call]  # junitparser leaves it unannotated
    assert {p.name: p.value for p in properties} == {"job": "triage", "tracker": "keyed", "depth": "1"}


def test_never_exercised_fails_and_faults_count_moves() -> None:
    """An unwitnessed invariant is a failure of its own kind; with faults the size is in moves."""
    (suite,) = _suites(junit.document([junit.row_suite(_row(safe=True, witnessed=False), lambda v: "why")]))
    failure = next(iter(next(case for case in suite if case.name == "no-duplicate").result))
    assert failure.type == "never-exercised"
    assert "NEVER EXERCISED" in (failure.message or "")
    (suite,) = _suites(junit.document([junit.row_suite(_row(safe=False, faults=("pause",)), lambda v: "")]))
    failure = next(iter(next(case for case in suite if case.name == "no-duplicate").result))
    assert "1 move, 10 steps" in (failure.message or "")


def test_the_root_counts_every_suite_and_a_passing_document_has_no_failure() -> None:
    """<testsuites> sums tests and failures over its suites."""
    suites = [junit.row_suite(_row(safe=True), str), junit.row_suite(_row(safe=False), str, name="other")]
    root = ET.fromstring(junit.document(suites))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "0")
    assert [s.get("name") for s in root.iter("testsuite")] == ["save-after-reply", "other"]
    assert "<failure" not in junit.document(suites[:1])


def test_each_suite_takes_its_exploration_s_seconds_and_its_cases_share_them() -> None:
    """The seconds given are the suite's time; each case's is an equal share; the root's the suites' sum."""
    suites = [junit.row_suite(_row(safe=False), str, seconds=1.5), junit.row_suite(_row(safe=True), str, name="b")]
    root = ET.fromstring(junit.document(suites))
    assert [s.get("time") for s in root.iter("testsuite")] == ["1.500", "0.000"]
    assert [c.get("time") for c in root.iter("testcase")] == ["0.750", "0.750", "0.000", "0.000"]
    assert root.get("time") == "1.500"
    assert _suites(junit.document(suites))[0].time == 1.5


def test_markup_and_control_characters_stay_well_formed_xml() -> None:
    """Quotes, <, & and newlines are escaped; characters XML 1.0 cannot hold are written as escapes."""
    nasty = 'a "b" <c> & d\nnext\x00\x1b end'
    text = junit.document([junit.Suite(nasty, [junit.Case(nasty, junit.Failure(nasty, "violated", nasty))])])
    (suite,) = _suites(text)
    (case,) = list(suite)
    failure = next(iter(case.result))
    assert case.name == suite.name == failure.message == 'a "b" <c> & d\nnext\\x00\\x1b end'
    assert failure.text == 'a "b" <c> & d\nnext\\x00\\x1b end'
