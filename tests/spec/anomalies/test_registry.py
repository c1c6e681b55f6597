"""The rules in the table's order, `find` in that order, and each invariant's rows agreeing with it.

spec/HISTORY.md 8's last paragraph: on a history with no `info` event and no attempt of unknown
outcome, whose writes are all expected, an invariant is violated exactly when a definite anomaly
of its rows is found. It is held here over every fixture that meets that condition and over the
projected history (spec/projection.py) of every state of the explored graphs that
tests/spec/test_projection.py checks (a few designs, jobs and trackers, at depth 2). Where the
history lacks a fact the invariant needs, its rows find nothing definite.
"""

from __future__ import annotations

import pytest

import crashsweep.spec.anomalies as package
from crashsweep.spec import projection
from crashsweep.spec.anomalies import RULES, find, registry
from crashsweep.spec.anomalies.calls import UNKNOWN, Calls
from crashsweep.spec.anomalies.value import Anomaly, Rule
from crashsweep.spec.history import History
from crashsweep.spec.invariants import registered
from tests.spec.anomalies.fixtures import FIXTURES, attempt, effect, history, status, summary
from tests.spec.test_projection import CASES, _explored

TABLE = [
    ("duplicate-effect", "no-duplicate"),
    ("lost-effect", "no-loss"),
    ("orphaned-call", "well-formed-transcript"),
    ("result-without-call", "well-formed-transcript"),
    ("duplicate-result", "well-formed-transcript"),
    ("unapproved-effect", "approved-exactly"),
    ("approval-other-arguments", "approved-exactly"),
    ("approval-redeemed-twice", "approved-exactly"),
    ("stuck-run", "can-finish"),
    ("effect-after-failure", ""),
    ("key-reused", ""),
    ("unknown-never-settled", ""),
    ("approval-not-resumed", ""),
    ("replay-divergence", ""),
]
"""Section 8's table: each row's anomaly and invariant, in order (copied from the spec's text)."""


def test_the_rules_are_the_tables_rows_in_order() -> None:
    assert [(rule.name, rule.invariant) for rule in RULES] == TABLE
    assert all(rule.summary for rule in RULES)
    assert registry.by_name("key-reused") is RULES[10]
    assert (package.RULES, package.find, package.Anomaly, package.Rule) == (registry.RULES, find, Anomaly, Rule)


def test_by_name_refuses_an_unknown_rule() -> None:
    with pytest.raises(KeyError, match="write-skew"):
        registry.by_name("write-skew")


def test_find_is_rule_by_rule_and_each_rules_in_history_order() -> None:
    h = history(
        attempt("b", "ok", key="k"),  # 1
        attempt("a", "ok", key="k"),  # 2: key k reused (1, 2)
        effect("b", "#1"),  # 3
        effect("a", "#2"),  # 4
        effect("b", "#3"),  # 5: b duplicated (3, 5)
        effect("a", "#4"),  # 6: a duplicated (4, 6)
        status("stuck", "x"),  # 7
        expected=("a", "b"),
    )
    assert summary(find(h)) == (
        ("duplicate-effect", True, "b", (3, 5)),
        ("duplicate-effect", True, "a", (4, 6)),
        ("stuck-run", True, "", (7,)),
        ("key-reused", True, "b", (1, 2)),
    )
    assert find(h) == find(h)


def test_every_rule_has_a_fixture_that_holds_it_and_one_that_does_not() -> None:
    for rule in RULES:
        holding = [name for name, (_, expected) in FIXTURES.items() if any(row[0] == rule.name for row in expected)]
        missing = [name for name in FIXTURES if name.startswith(rule.name) and name not in holding]
        assert holding, rule.name
        assert missing, rule.name


def _plain(history: History) -> bool:
    """No `info` event, no attempt of unknown outcome, and every write expected (section 8's condition)."""
    calls = Calls.of(history)
    unknown = any(e.type == "info" for e in history.events) or any(a.outcome == UNKNOWN for a in calls.attempts)
    return not unknown and set(calls.writes) <= set(history.expected)


def _agree(history: History) -> set[str]:
    """Each invariant violated exactly when a definite anomaly of its rows is found; the names of those violated."""
    definite = {anomaly.name for anomaly in find(history) if anomaly.definite}
    violated = set()
    for invariant in registered():
        rows = {rule.name for rule in RULES if rule.invariant == invariant.name}
        if history.missing(invariant.needs) is not None:
            assert not definite & rows, invariant.name
            continue
        broken = invariant.check(history) is not None
        assert broken == bool(definite & rows), (invariant.name, history)
        if broken:
            violated.add(invariant.name)
    return violated


MALFORMED = {"approval-other-arguments-malformed"}
"""Fixtures approved-exactly's check cannot read: it raises on an approval that is not `call@version#number`."""


def test_each_invariant_agrees_with_its_rows_on_every_plain_fixture() -> None:
    plain = [h for name, (h, _) in FIXTURES.items() if _plain(h) and name not in MALFORMED]
    violated = set().union(*(_agree(h) for h in plain))
    assert len(plain) >= 20
    assert violated == {invariant.name for invariant in registered()}  # not vacuous: each is broken somewhere


def test_each_invariant_agrees_with_its_rows_on_every_explored_state() -> None:
    judged = 0
    violated: set[str] = set()
    for case in CASES:
        model, ex = _explored(case)
        for node in range(ex.states):
            h = projection.history(ex.state(node), model.env.job)
            if _plain(h):
                judged += 1
                violated |= _agree(h)
    assert judged > 1000
    assert violated == {invariant.name for invariant in registered()}
