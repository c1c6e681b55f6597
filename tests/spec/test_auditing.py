"""One audit as values (spec/auditing.py): merged, split by run, joined, judged by every invariant and rule.

The unit is two hand-made sources of two runs: a conversation (transcript and status, as a
session or checkpoint gives them) and a receiver's ledger whose records name no run. Every
expected verdict and anomaly is derived by hand below from spec/HISTORY.md 3, 7 and 8.
"""

from __future__ import annotations

import dataclasses

from crashsweep.spec import invariants
from crashsweep.spec.anomalies import Anomaly
from crashsweep.spec.auditing import RunAudit, audit, with_job
from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import Verdict, Violation
from crashsweep.spec.joining import Joined

NO_APPROVALS = "the conversation keeps no approvals"
REFUSED = "HTTP 400: c9 has no result"
STUCK = "the provider refuses the conversation"
DUPLICATED = "create_a has 2 records: #1 and #2"

TALK = History(
    (
        Event("r1", 0, 1, "invoke", "model_call", src="talk:1", time=1.0),
        Event("r1", 0, 2, "invoke", "tool_call", call="create_a", call_id="c1", src="talk:2", time=2.0),
        Event("r1", 0, 3, "ok", "result_saved", call_id="c1", src="talk:3", time=5.0),
        Event("r1", 0, 4, "invoke", "model_call", src="talk:4", time=6.0),
        Event("r1", 0, 5, "ok", "run_status", status="finished", src="talk:5", time=7.0),
        Event("r2", 0, 6, "invoke", "model_call", src="talk:6", time=8.0),
        Event("r2", 0, 7, "invoke", "tool_call", call_id="c9", tool="search", src="talk:7", time=9.0),
        Event("r2", 0, 8, "invoke", "model_call", src="talk:8", time=10.0),
        Event("r2", 0, 9, "fail", "model_call", detail=REFUSED, src="talk:9", time=10.0),
        Event("r2", 0, 10, "fail", "run_status", status="stuck", detail=STUCK, src="talk:10", time=11.0),
    ),
    facts=frozenset({"transcript", "status"}),
    unseen={"effects": "the conversation holds no records", "approvals": NO_APPROVALS},
)
"""r1 calls create_a (ID c1), saves its result, asks again and finishes; r2 asks with search's
call c9 unanswered, is refused, and is stuck."""
LEDGER = History(
    (
        Event("", 0, 1, "ok", "effect", call="create_a", tool="create_issue", effect_id="#1", src="led:1", time=3.0),
        Event("", 0, 2, "ok", "effect", call="create_a", tool="create_issue", effect_id="#2", src="led:2", time=4.0),
    ),
    facts=frozenset({"effects"}),
    unseen={"transcript": "a ledger", "status": "a ledger", "approvals": "the ledger keeps no approvals"},
)
"""Two records of create_a with no run: the ledger's, given to the run that holds create_a (r1)."""


def at(source: History, n: int, seq: int, **changed: str) -> Event:
    """Event n (from 1) of `source` as the audit holds it: numbered `seq` in the merged order, joined."""
    return dataclasses.replace(source.events[n - 1], seq=seq, **changed)  # type: ignore[arg-type]


def test_a_unit_of_two_runs_gives_each_run_its_verdicts_and_anomalies_in_order() -> None:
    """Merged by time: talk 1, 2 (t 1, 2), ledger 1, 2 (t 3, 4), talk 3 to 10 (t 5 to 11), numbered 1 to 12.

    Split: r1 is seqs 1-7 (the ledger's create_a goes to r1, the one run naming it), r2 seqs 8-12.
    Facts: the union, transcript, status and effects; approvals unseen for the first reason given.
    """
    expected = ("create_a",)
    r1, r2 = audit("unit-1", [TALK, LEDGER], expected=expected)
    record_1, record_2 = at(LEDGER, 1, 3), at(LEDGER, 2, 4)
    finished = at(TALK, 5, 7)
    assert (r1.unit, r1.run, r2.unit, r2.run) == ("unit-1", "r1", "unit-1", "r2")
    assert r1.joined.history.events == (
        at(TALK, 1, 1),
        at(TALK, 2, 2),
        record_1,
        record_2,
        at(TALK, 3, 5, call="create_a"),  # rule 2: c1 is create_a's call ID
        at(TALK, 4, 6),
        finished,
    )
    assert r1.joined.history.expected == expected
    # Rule 1 (runtime key) joins the call and both records, rule 2 (call ID) the result.
    assert (r1.joined.joined, r1.joined.unjoined) == ((3, 1, 0), ())
    assert r1.verdicts == (
        Verdict("no-duplicate", violation=Violation("no-duplicate", DUPLICATED, (record_1, record_2)), witnessed=True),
        Verdict("no-loss", witnessed=True),  # create_a has a record; the run finished
        Verdict("well-formed-transcript", witnessed=True),  # model call 6 was sent c1's result
        Verdict("approved-exactly", decided=False, why=NO_APPROVALS),
        Verdict("can-finish", witnessed=True),
    )
    assert [(a.name, a.definite, a.call, a.why, a.witness) for a in r1.found] == [
        ("duplicate-effect", True, "create_a", DUPLICATED, (record_1, record_2))
    ]
    assert r1.failed

    call, asked, refusal, stuck = at(TALK, 7, 9, call="c9"), at(TALK, 8, 10), at(TALK, 9, 11), at(TALK, 10, 12)
    assert r2.joined.history.events == (at(TALK, 6, 8), call, asked, refusal, stuck)
    assert (r2.joined.joined, r2.joined.unjoined) == ((0, 1, 0), ())  # c9 by its call ID, its own call
    orphaned = f"the model was sent a tool call without its result ({REFUSED})"
    assert r2.verdicts == (
        Verdict("no-duplicate", witnessed=False),  # create_a expected, r2 holds no record
        Verdict("no-loss", witnessed=False),  # r2 never finished: nothing lost, nothing witnessed
        Verdict("well-formed-transcript", violation=Violation("well-formed-transcript", orphaned, (call, asked))),
        Verdict("approved-exactly", decided=False, why=NO_APPROVALS),
        Verdict("can-finish", violation=Violation("can-finish", f"the run can never finish: {STUCK}", (stuck,))),
    )
    assert [(a.name, a.definite, a.call, a.why, a.witness) for a in r2.found] == [
        ("orphaned-call", True, "c9", orphaned, (call, asked, refusal)),
        ("stuck-run", True, "", f"the run can never finish: {STUCK}", (stuck,)),
    ]
    assert r2.failed


def test_one_verdict_per_registered_invariant_in_their_order() -> None:
    (run,) = audit("u", [History((Event("r", 0, 1, "invoke", "model_call"),))])
    assert [v.name for v in run.verdicts] == [i.name for i in invariants.registered()]
    assert (run.found, run.failed) == ((), False)


def test_an_event_no_run_can_hold_is_a_run_of_its_own() -> None:
    """A third record, of create_z, which neither run names: a RunAudit of run "" after r1 and r2."""
    stray = Event("", 0, 3, "ok", "effect", call="create_z", effect_id="#3", src="led:3", time=12.0)
    ledger = dataclasses.replace(LEDGER, events=(*LEDGER.events, stray))
    found = audit("u", [TALK, ledger])
    assert [run.run for run in found] == ["r1", "r2", ""]
    assert found[2].joined.history.events == (dataclasses.replace(stray, seq=13),)


def test_an_attempt_of_unknown_outcome_alone_is_a_possible_anomaly_and_no_failure() -> None:
    """create_a's record, then an attempt of it that nothing completed, then finished.

    no-duplicate (one record) and no-loss (it has one) hold, can-finish holds; the transcript
    and approvals are unseen. The attempt is of unknown outcome and the run ended after it with
    no key to settle it: unknown-never-settled, always possible. So the run has not failed.
    """
    history = History(
        (
            Event("r", 0, 1, "ok", "effect", call="create_a", effect_id="#1"),
            Event("r", 0, 2, "invoke", "tool_run", call="create_a", tool="create_issue"),
            Event("r", 0, 3, "ok", "run_status", status="finished"),
        ),
        expected=("create_a",),
        facts=frozenset({"effects", "status"}),
    )
    (run,) = audit("u", [history])
    assert [v.name for v in run.verdicts if v.holds] == ["no-duplicate", "no-loss", "can-finish"]
    assert [(a.name, a.definite, a.witness) for a in run.found] == [
        ("unknown-never-settled", False, (history.events[1], history.events[2]))
    ]
    assert not run.failed


def test_with_job_adds_the_jobs_writes_and_gated_calls_once_each() -> None:
    history = History(expected=("create_a", "create_b"), gated=("create_b",))
    joined = with_job(history, ["create_b", "create_c", "create_c"], ["create_c", "create_b"])
    assert (joined.expected, joined.gated) == (("create_a", "create_b", "create_c"), ("create_b", "create_c"))
    assert with_job(history, [], []) is history


def test_failed_is_a_violation_or_a_definite_anomaly_not_a_possible_one() -> None:
    event = Event("r", 0, 1, "ok", "effect", call="create_a", effect_id="#1")
    joined = Joined(History((event,)), (1, 0, 0), ())
    holds = (Verdict("no-duplicate", witnessed=True), Verdict("approved-exactly", decided=False, why="unseen"))
    violated = (Verdict("no-duplicate", violation=Violation("no-duplicate", "two records", (event,))),)
    possible = Anomaly("duplicate-effect", False, "r", "create_a", "one of unknown outcome", (event,))
    definite = dataclasses.replace(possible, definite=True)
    assert RunAudit("u", "r", joined, violated, ()).failed
    assert RunAudit("u", "r", joined, holds, (possible, definite)).failed
    assert not RunAudit("u", "r", joined, holds, (possible,)).failed
    assert not RunAudit("u", "r", joined, holds, ()).failed
    assert RunAudit("u", "r", joined, (*holds, *violated), (possible,)).violated == violated
