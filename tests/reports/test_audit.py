"""The audit's report: per invariant, violated in how many runs (the first shown); anomalies by run; the joining."""

from __future__ import annotations

import json

from crashsweep.reports import audit
from crashsweep.spec.anomalies import Anomaly
from crashsweep.spec.auditing import RunAudit
from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import Verdict, Violation
from crashsweep.spec.joining import Joined

EFFECTS = (
    Event("r", 0, 4, "ok", "effect", call="a", effect_id="#1", src="tracker"),
    Event("r", 0, 9, "ok", "effect", call="a"),
)
TWICE = Verdict("no-duplicate", violation=Violation("no-duplicate", "a has 2 records", EFFECTS), witnessed=True)
ONCE = Verdict("no-duplicate", witnessed=True)
BLIND = Verdict("well-formed-transcript", decided=False, why="no session")
DOUBLED = Anomaly("duplicate-effect", True, "r", "a", "a has 2 records", EFFECTS)
UNSETTLED = Anomaly("unknown-never-settled", False, "r", "a", "a's outcome was never settled", EFFECTS[:1])
STRAY = Event("r", 0, 5, "ok", "effect", effect_id="#3", src="ledger.csv:line 4")


def run(unit: str, verdicts: tuple[Verdict, ...], found: tuple[Anomaly, ...] = (), *stray: Event) -> RunAudit:
    """A run's audit with the given verdicts and anomalies; two events joined by runtime key, `stray` unjoined."""
    return RunAudit(unit, "r" if found else "", Joined(History(), (2, 0, 0), stray), verdicts, found)


def test_the_text_counts_violations_shows_the_first_and_says_what_was_not_decided() -> None:
    runs = [run("one", (ONCE, BLIND)), run("two", (TWICE, BLIND), (DOUBLED, UNSETTLED), STRAY)]
    assert audit.text(runs) == (
        "audit of 2 runs\n"
        "  no-duplicate            VIOLATED in 1 of 2, first two (run r):\n"
        "                            a has 2 records (events 4 (tracker #1), 9 (a))\n"
        "  well-formed-transcript  not decided (no session)\n"
        "anomalies: 1 definite, 1 possible\n"
        "  two (run r)\n"
        "    duplicate-effect  definite  a has 2 records\n"
        "      witness: 4 (tracker #1); 9 (a)\n"
        "    unknown-never-settled  possible  a's outcome was never settled\n"
        "      witness: 4 (tracker #1)\n"
        "calls joined: 4 by runtime key, 0 by call ID, 0 by tool and arguments; "
        "1 not joined to any call: two (run r) event 5 (ledger.csv:line 4 #3)\n"
    )


def test_an_invariant_decided_in_some_runs_says_where_it_was_not() -> None:
    runs = [run("one", (ONCE,)), run("two", (Verdict("no-duplicate", decided=False, why="x"),))]
    text = audit.text(runs).splitlines()
    assert text[1] == "  no-duplicate  holds in 1 of 2 (not decided in 1: x)"
    assert text[2] == "anomalies: none"
    assert audit.evidence(EFFECTS[:1]) == "event 4 (tracker #1)"


def test_json_gives_every_run_its_anomalies_and_its_joining() -> None:
    (given,) = json.loads(audit.to_json([run("two", (TWICE,), (DOUBLED,), STRAY)]))["runs"]
    assert given["anomalies"] == [
        {
            "name": "duplicate-effect",
            "definite": True,
            "call": "a",
            "why": "a has 2 records",
            "witness": [{"seq": 4, "src": "tracker"}, {"seq": 9, "src": ""}],
        }
    ]
    assert given["joined"] == {"runtime key": 2, "call ID": 0, "tool and arguments": 0}
    assert given["unjoined"] == [{"seq": 5, "src": "ledger.csv:line 4"}]


def test_junit_fails_a_definite_anomaly_and_skips_a_possible_one() -> None:
    (suite,) = audit.suites([run("two", (ONCE,), (DOUBLED, UNSETTLED))])
    cases = {case.name: case for case in suite.cases}
    assert cases["duplicate-effect 1"].failure is not None
    assert cases["unknown-never-settled 2"].skipped.startswith("possible unknown-never-settled")
    assert cases["no-duplicate"].failure is None
    assert not cases["no-duplicate"].skipped
