"""The anomalies of spec/HISTORY.md section 8: the implementation agrees with the tests' oracle.

`crashsweep.spec.anomalies.registry.find` and tests/audit_oracle.py (written from the spec's
text alone, without reading spec/anomalies/) find the same anomalies, definite or possible,
run, call and witness, on random joined histories: 1-2 runs, 1-2 incarnations, 1-3 calls,
events of every `f` and type, attempts of tools left uncompleted, keys, digests (versions and
others), approvals (entries, and some that are none), every run status, expected and gated
calls, and the facts the producer saw (all four in most examples, so that every rule is
exercised; some left out in the others). The oracle itself is held to section 8's last
paragraph here too: on a history with no `info` event and no attempt of unknown outcome whose
writes are all expected, each invariant is violated exactly when a definite anomaly of its rows
is found, and, where the history lacks a fact it needs, its rows find nothing.

The generated histories keep three things real producers keep, where the spec's words would
otherwise leave a choice: the `tool_run` events of one (run, incarnation, call) are one
sequence of attempts, one after the other (an invoke left uncompleted is its last); a run's
incarnations come one after the other; a `run_status` of run "" (the sweep's) says `finished`
or `stuck`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep.spec.anomalies.registry import find
from crashsweep.spec.anomalies.value import Anomaly
from crashsweep.spec.history import FACTS, FS, STATUSES, TYPES, Event, History
from crashsweep.spec.invariants.registry import INVARIANTS
from tests.audit_oracle import NEEDS, ROWS, Found, anomalies

EXAMPLES = 2 * settings().max_examples
"""200 under the ci profile: each example is a few milliseconds."""
CALLS = ("a", "b", "c")
TOOLS = ("t1", "t2")
WITH_CALL = ("tool_call", "result_saved", "effect", "approval_request", "approval_grant", "approval_redeem")
OFTEN = ("effect", "effect", "result_saved", "approval_grant", "run_status")
"""What most anomalies are about, drawn more often than the others (half the draws pick among these)."""
KINDS = ("ok", "fail", "info", "invoke-ok", "invoke-fail", "invoke-info")
"""An attempt: a completion alone (a runtime that records only ends), or an invoke and its completion."""
DIGESTS = ("", "v1", "v2", "sha256:0f")
"""Arguments: none recorded, versions, and a digest that is no version (read as v1 by approvals)."""
CANONICAL = {"finished": "ok"}
"""A status's type (CONVERSATIONS.md 4, HISTORY.md 1): `ok` for finished, `fail` for the others."""


def found(anomalies_: Iterable[Anomaly]) -> list[Found]:
    """The implementation's anomalies as the oracle gives them."""
    return sorted((a.name, a.definite, a.run, a.call, tuple(e.seq for e in a.witness)) for a in anomalies_)


@st.composite
def attempts(draw: st.DrawFn, run: str, incarnation: int, call: str, tool: str, certain: bool) -> list[Event]:
    """The tool_run events of one (run, incarnation, call): attempts one after the other."""
    events = []
    kinds = [k for k in KINDS if not (certain and k.endswith("info"))]
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=2)):
        key = draw(st.sampled_from(("", "k1", "k2")))
        digest = draw(st.sampled_from(DIGESTS))
        for type_ in kind.split("-"):
            events.append(Event(run, incarnation, 0, type_, "tool_run", call, tool=tool, key=key, args_digest=digest))
    if not certain and draw(st.booleans()):
        key = draw(st.sampled_from(("", "k1", "k2")))
        events.append(Event(run, incarnation, 0, "invoke", "tool_run", call, tool=tool, key=key))
    return events


@st.composite
def single(draw: st.DrawFn, runs: list[str], incarnations: list[int], calls: list[str], certain: bool) -> Event:
    """One event other than a tool_run: any f and type, its fields drawn from small sets."""
    f = draw(st.sampled_from([f for f in FS if f != "tool_run"]) | st.sampled_from(OFTEN))
    if f == "run_status":
        status = draw(st.sampled_from(STATUSES))
        run = draw(st.sampled_from([*runs, ""] if status in ("finished", "stuck") else runs))
        return Event(
            run, 0, 0, CANONICAL.get(status, "fail"), f, status=status, detail=draw(st.sampled_from(("", "x")))
        )
    types = st.sampled_from([t for t in TYPES if not (certain and t == "info")]) | st.just("ok")
    event = Event(draw(st.sampled_from(runs)), draw(st.sampled_from(incarnations)), 0, draw(types), f)
    if f not in WITH_CALL:
        return replace(event, detail=draw(st.sampled_from(("", "refused"))))
    call = draw(st.sampled_from(calls if certain else [*calls, ""]))
    tool = draw(st.sampled_from(("", tool_of(call))))
    event = replace(event, call=call, tool=tool, args_digest=draw(st.sampled_from(DIGESTS)))
    if call and f in ("tool_call", "result_saved"):
        event = replace(event, call_id=draw(st.sampled_from(("", f"{call}-1", f"{call}-2"))))
    if f == "effect":
        event = replace(event, key=draw(st.sampled_from(("", "k1", "k2"))))
    if f in ("effect", "approval_grant") and draw(st.booleans()):
        approved = draw(st.sampled_from(calls) | st.just(call or calls[0]))
        given = f"{approved}@{draw(st.integers(1, 2))}#{draw(st.integers(1, 2))}"
        event = replace(event, approval=draw(st.sampled_from((given, given, given, f"{approved}@v1#1", "#1"))))
    return event


def tool_of(call: str) -> str:
    """The tool of a call: a and c share t1 (a call is a write by its tool too), b has t2; none for an unjoined one."""
    return TOOLS[CALLS.index(call) % 2] if call else ""


@st.composite
def histories(draw: st.DrawFn, certain: bool = False) -> History:
    """A joined history; `certain`: one run, no `info`, no unknown attempt, every call expected."""
    runs = ["r1"] if certain else draw(st.sampled_from((["r1"], ["r1", "r2"])))
    incarnations = draw(st.sampled_from(([0], [0, 1])))
    calls = list(CALLS[: draw(st.integers(1, 3))])
    chunks = [[draw(single(runs, incarnations, calls, certain))] for _ in range(draw(st.integers(0, 14)))]
    joined = st.sampled_from(calls if certain else [*calls, ""])
    who = st.tuples(st.sampled_from(runs), st.sampled_from(incarnations), joined)
    for run, incarnation, call in draw(st.lists(who, max_size=4, unique=True)):
        tool = draw(st.sampled_from((tool_of(call), "")))
        chunks.append(draw(attempts(run, incarnation, call, tool, certain)))
    slots = draw(st.permutations([n for n, chunk in enumerate(chunks) for _ in chunk]))
    events = in_order([chunks[n].pop(0) for n in slots])
    numbered = tuple(replace(e, seq=seq) for seq, e in enumerate(events, 1))
    named = st.lists(st.sampled_from([*calls, "z"]), unique=True)
    expected = tuple(calls) if certain else tuple(draw(named))
    gated = tuple(call for call in calls if draw(st.booleans()))
    return History(numbered, expected, gated, draw(facts()))


def facts() -> st.SearchStrategy[frozenset[str]]:
    """The families a producer saw: all four, or some left out (about one example in five)."""
    left_out = st.booleans().flatmap(
        lambda every: st.just(frozenset()) if every else st.frozensets(st.sampled_from(FACTS))
    )
    return left_out.map(lambda missing: frozenset(FACTS) - missing)


def in_order(events: list[Event]) -> list[Event]:
    """The events with each run's incarnations one after the other (a restart begins after the crash).

    Statuses keep their places: a run's status may come from outside its processes (the sweep's).
    """
    ordered = list(events)
    for run in {e.run for e in events}:
        places = [n for n, e in enumerate(events) if e.run == run and e.f != "run_status"]
        for place, event in zip(places, sorted((events[n] for n in places), key=lambda e: e.incarnation), strict=True):
            ordered[place] = event
    return ordered


@settings(max_examples=EXAMPLES)
@given(histories())
def test_the_implementation_finds_what_the_oracle_finds(history: History) -> None:
    assert found(find(history)) == anomalies(history)


@settings(max_examples=EXAMPLES)
@given(histories(certain=True))
def test_an_invariant_is_violated_exactly_when_a_definite_anomaly_of_its_rows_is_found(history: History) -> None:
    every = anomalies(history)
    definite = {name for name, sure, *_ in every if sure}
    for invariant in INVARIANTS:
        verdict = invariant.judge(history)
        if not verdict.decided:
            # a history that lacks a fact the invariant needs: its rows find nothing at all
            assert not {name for name, *_ in every} & set(ROWS[invariant.name]), invariant.name
        else:
            assert (verdict.violation is not None) == bool(definite & set(ROWS[invariant.name])), invariant.name


def test_the_oracle_reads_the_facts_each_invariant_needs_as_the_registry_says() -> None:
    assert {name: set(needs) for name, needs in NEEDS.items()} == {i.name: set(i.needs) for i in INVARIANTS}
