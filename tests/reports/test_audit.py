"""The audit's report: per invariant, violated in how many histories (the first shown), holds, or not decided."""

from __future__ import annotations

from crashsweep.reports import audit
from crashsweep.spec.history import Event
from crashsweep.spec.invariants import Verdict, Violation

EFFECTS = (Event("r", 0, 4, "ok", "effect", call="a", effect_id="#1", src="tracker"), Event("r", 0, 9, "ok", "effect"))
TWICE = Verdict("no-duplicate", violation=Violation("no-duplicate", "a has 2 records", EFFECTS), witnessed=True)
ONCE = Verdict("no-duplicate", witnessed=True)
BLIND = Verdict("well-formed-transcript", decided=False, why="no session")


def test_the_text_counts_violations_shows_the_first_and_says_what_was_not_decided() -> None:
    audits = [audit.Audited("one", (ONCE, BLIND)), audit.Audited("two", (TWICE, BLIND))]
    assert audit.text(audits) == (
        "audit of 2 histories\n"
        "  no-duplicate            VIOLATED in 1 of 2, first two:\n"
        "                            a has 2 records (events 4 (tracker #1), 9)\n"
        "  well-formed-transcript  not decided (no session)\n"
    )


def test_an_invariant_decided_in_some_histories_says_where_it_was_not() -> None:
    audits = [audit.Audited("one", (ONCE,)), audit.Audited("two", (Verdict("no-duplicate", decided=False, why="x"),))]
    assert audit.text(audits).splitlines()[1] == "  no-duplicate  holds in 1 of 2 (not decided in 1: x)"
    assert audit.evidence(EFFECTS[:1]) == "event 4 (tracker #1)"
