"""Verdicts as JUnit XML, the test report CI systems read (Jenkins, GitLab, GitHub Actions' reporters).

The document is `<testsuites>` holding one `<testsuite>` per design (or per swept target, or
per conformance pair), and in each one `<testcase>` per invariant (or per compared column).
A case that failed carries a `<failure>` whose `message` is one line (what is violated) and
whose text is the counterexample and the command that re-runs it, so a CI page shows what to
type. The elements and attributes are those of the JUnit schema of Jenkins' xUnit plugin
(junit-10.xsd), which GitLab's and GitHub Actions' readers also accept: no attribute beyond it.

This module is pure: `Suite` and `Case` values in, one XML string out (xml.etree.ElementTree,
which escapes text and attributes). `row_suite` makes the suite of an explored or swept row.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from crashsweep.reports.describe import plural
from crashsweep.reports.summary import InvariantVerdict, Summary

CLASSNAME = "crashsweep"
"""The package part of every case's classname: CI pages group the cases under it."""


@dataclass(frozen=True)
class Failure:
    """Why a case failed: one line, its kind (violated, never-exercised, differs) and the details."""

    message: str
    kind: str
    text: str = ""


@dataclass(frozen=True)
class Case:
    """One test case: its name, and its failure (None when it passed)."""

    name: str
    failure: Failure | None = None
    skipped: str = ""
    """Why the case was not decided ("" when it was): a `<skipped>` element."""
    seconds: float = 0.0
    """Its `time`: its share of the work that decided it (given by the caller; this module reads no clock)."""


@dataclass(frozen=True)
class Suite:
    """One suite: a design (or target, or pair) with its cases and the properties it ran under."""

    name: str
    cases: Sequence[Case]
    properties: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    """Its `time`: how long the exploration (or sweep) that decided its cases took."""


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters XML 1.0 cannot hold even escaped (a job's call name or a message could carry one)."""


def xml_safe(text: str) -> str:
    """`text` with each character XML 1.0 cannot hold written as its Python escape, so the document parses."""
    return _NOT_XML.sub(lambda match: repr(match.group())[1:-1], text)


def _time(seconds: float) -> str:
    """A `time` attribute: seconds as a decimal, never negative (the schema's xs:decimal)."""
    return f"{max(seconds, 0.0):.3f}"


def _classname(suite: str) -> str:
    """The classname of a suite's cases: crashsweep.<suite>, dots in the name kept out of the package path."""
    return xml_safe(f"{CLASSNAME}.{suite.replace('.', '_')}")


def _suite_element(parent: ET.Element, suite: Suite, index: int) -> None:
    """`<testsuite>` in the schema's order: properties, the cases, system-out, system-err."""
    failures = sum(case.failure is not None for case in suite.cases)
    skipped = sum(bool(case.skipped) for case in suite.cases)
    counts = {"tests": len(suite.cases), "failures": failures, "errors": 0, "skipped": skipped}
    element = ET.SubElement(
        parent,
        "testsuite",
        {
            "name": xml_safe(suite.name),
            **{k: str(v) for k, v in counts.items()},
            "time": _time(suite.seconds),
            "id": str(index),
        },
    )
    if suite.properties:
        properties = ET.SubElement(element, "properties")
        for name, value in suite.properties.items():
            ET.SubElement(properties, "property", {"name": xml_safe(name), "value": xml_safe(value)})
    for case in suite.cases:
        testcase = ET.SubElement(
            element, "testcase", {"name": xml_safe(case.name), "classname": _classname(suite.name)}
        )
        testcase.set("time", _time(case.seconds))
        if case.failure is not None:
            said = {"message": xml_safe(case.failure.message), "type": xml_safe(case.failure.kind)}
            ET.SubElement(testcase, "failure", said).text = xml_safe(case.failure.text)
        elif case.skipped:
            ET.SubElement(testcase, "skipped", {"message": xml_safe(case.skipped)})
    ET.SubElement(element, "system-out")
    ET.SubElement(element, "system-err")


def document(suites: Sequence[Suite], name: str = CLASSNAME) -> str:
    """The JUnit XML document of `suites` (an XML declaration, then `<testsuites>`), with a final newline."""
    root = ET.Element("testsuites", {"name": xml_safe(name)})
    cases = [case for suite in suites for case in suite.cases]
    root.set("tests", str(len(cases)))
    root.set("failures", str(sum(case.failure is not None for case in cases)))
    root.set("errors", "0")
    root.set("time", _time(sum(suite.seconds for suite in suites)))
    for index, suite in enumerate(suites):
        _suite_element(root, suite, index)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def row_properties(row: Summary) -> dict[str, str]:
    """What a row was explored or swept under: job, tracker, depth and its environment (faults, IDs...)."""
    properties = {"job": row.job, "tracker": row.tracker, "depth": str(row.depth)}
    if row.environment:
        properties["environment"] = row.environment
    return properties


def shortest_words(row: Summary, verdict: InvariantVerdict) -> str:
    """A violated verdict in explore's words: the shortest counterexample's size and path code."""
    size = plural(verdict.crashes or 0, "move" if row.moving else "crash")
    return f"shortest counterexample: {size}, {plural(verdict.steps or 0, 'step')}, path {verdict.counterexample}"


def verdict_failure(verdict: InvariantVerdict, words: str, details: str) -> Failure | None:
    """The failure of an invariant's verdict (None when it holds and was exercised).

    `words` says what the violation's counterexample is; `details` is the failure's text.
    """
    if not verdict.witnessed:
        message = (
            f"{verdict.name} NEVER EXERCISED: witness {verdict.witness!r} was never seen, the check proves nothing"
        )
        return Failure(message, "never-exercised", details)
    if verdict.holds:
        return None
    return Failure(f"{verdict.name} VIOLATED: {words}", "violated", details)


def row_suite(
    row: Summary,
    details: Callable[[InvariantVerdict], str],
    words: Callable[[InvariantVerdict], str] | None = None,
    name: str | None = None,
    seconds: float = 0.0,
) -> Suite:
    """The suite of a row: one case per invariant, named after it.

    A failed case's message is `words(verdict)` (default: explore's shortest counterexample) and
    its text `details(verdict)` (the counterexample and its re-run command). `seconds`: how long
    the row's exploration took, the suite's time; one exploration decides every case at once, so
    each case's time is an equal share, and the cases' times add up to the suite's as CI pages sum them.
    """
    share = seconds / len(row.invariants) if row.invariants else 0.0
    cases = []
    for verdict in row.invariants:
        if not verdict.decided:
            cases.append(Case(verdict.name, skipped=f"not decided: {verdict.why}", seconds=share))
            continue
        if verdict.holds and verdict.witnessed:
            cases.append(Case(verdict.name, seconds=share))
            continue
        said = words(verdict) if words is not None else shortest_words(row, verdict)
        cases.append(Case(verdict.name, verdict_failure(verdict, said, details(verdict)), seconds=share))
    return Suite(name or row.variant, cases, row_properties(row), seconds)
