"""Hand-written joined histories, each with the anomalies `find` must give on it, counted by hand.

FIXTURES maps a name to (History, expected), expected being (rule name, definite, call, the
witness's seqs) for every anomaly of the whole `find`, in its order (RULES order, then each
rule's by its witness's first event). Each anomaly of spec/HISTORY.md 8 has a fixture that holds
it and a near-miss that does not; the comment above each says why its expectation is what it is.
Events are numbered 1, 2, ... in the order written (`history`), so a seq is the line's place.
Other tests (an importer's, the audit's) may reuse them.
"""

from __future__ import annotations

from dataclasses import replace

from crashsweep.spec.anomalies import Anomaly
from crashsweep.spec.history import FACTS, Event, History

Expected = tuple[tuple[str, bool, str, tuple[int, ...]], ...]


def event(f: str, type_: str, call: str = "", run: str = "r1", inc: int = 0, **fields: str) -> Event:
    """One event of run `run`, incarnation `inc` (its seq set by `history`)."""
    return Event.from_json({"run": run, "incarnation": inc, "seq": 0, "type": type_, "f": f, "call": call, **fields})


def effect(call: str, number: str = "", type_: str = "ok", run: str = "r1", **fields: str) -> Event:
    """The receiver's record `number` ("#1") of `call`."""
    return event("effect", type_, call, run, 0, effect_id=number, src="tracker", **fields)


def status(what: str, detail: str = "", run: str = "r1") -> Event:
    """The run's status: `ok` for finished, `fail` otherwise."""
    return event("run_status", "ok" if what == "finished" else "fail", run=run, status=what, detail=detail)


def ask(inc: int = 0) -> Event:
    """A model call sent the conversation as it stands."""
    return event("model_call", "invoke", inc=inc)


def refused(detail: str, inc: int = 0) -> Event:
    """The model call refused, and why."""
    return event("model_call", "fail", inc=inc, detail=detail)


def asked(call: str, inc: int = 0) -> Event:
    """The model's request for `call`, with the model's ID of it."""
    return event("tool_call", "invoke", call, inc=inc, call_id=f"id-{call}", tool="create_issue")


def saved(call: str, inc: int = 0) -> Event:
    """`call`'s result saved into the conversation."""
    return event("result_saved", "ok", call, inc=inc, call_id=f"id-{call}")


def attempt(call: str, type_: str, inc: int = 0, **fields: str) -> Event:
    """One event of an attempt of `call`'s tool body."""
    return event("tool_run", type_, call, inc=inc, **fields)


def grant(call: str, entry: str, args: str = "v1", run: str = "r1") -> Event:
    """A person's approval `entry` of `call` with arguments `args`."""
    return event("approval_grant", "ok", call, run, approval=entry, args_digest=args, src="person")


def history(
    *events: Event, expected: tuple[str, ...] = (), gated: tuple[str, ...] = (), **kw: frozenset[str]
) -> History:
    """The events numbered 1, 2, ... in order, with the job's facts."""
    numbered = tuple(replace(e, seq=n) for n, e in enumerate(events, 1))
    return History(numbered, expected, gated, kw.get("facts", frozenset(FACTS)))


AB = ("a", "b")
FIXTURES: dict[str, tuple[History, Expected]] = {
    # a has records #1 and #3: two effects `ok` of one call, the first two the witness.
    "duplicate-effect": (
        history(effect("a", "#1"), effect("b", "#2"), effect("a", "#3"), expected=AB),
        (("duplicate-effect", True, "a", (1, 3)),),
    ),
    # one `ok` and one `info` of a: possible, its witness the two in history order.
    "duplicate-effect-possible": (
        history(effect("a", type_="info"), effect("a", "#1"), expected=("a",)),
        (("duplicate-effect", False, "a", (1, 2)),),
    ),
    # two effects of two calls, and two effects with no call (unjoined: in no anomaly about calls).
    "duplicate-effect-near-miss": (
        history(effect("a", "#1"), effect("b", "#2"), effect("", "#3"), effect("", "#4"), expected=AB),
        (),
    ),
    # finished with b and c expected and unapplied: b's last event is its failed attempt (3); c is
    # never named, so its witness is the finishing event (4) alone.
    "lost-effect": (
        history(
            effect("a", "#1"),
            attempt("b", "invoke"),
            attempt("b", "fail"),
            status("finished"),
            expected=("a", "b", "c"),
        ),
        (("lost-effect", True, "b", (3, 4)), ("lost-effect", True, "c", (4,))),
    ),
    # a's only attempt never completed: lost is possible, and the attempt is unknown and never settled.
    "lost-effect-possible": (
        history(attempt("a", "invoke", key="k1"), status("finished"), expected=("a",)),
        (("lost-effect", False, "a", (1, 2)), ("unknown-never-settled", False, "a", (1, 2))),
    ),
    # not expected, but writes: g is gated and its approval granted (1); b shares a's tool
    # create_issue and its attempt returned ok (4). read_x's tool get_issue is no write's tool.
    "lost-effect-began": (
        history(
            grant("g", "g@1#1"),
            effect("a", "#1", tool="create_issue"),
            attempt("b", "invoke", tool="create_issue"),
            attempt("b", "ok", tool="create_issue"),
            attempt("read_x", "ok", tool="get_issue"),
            status("finished"),
            expected=("a",),
            gated=("g",),
        ),
        (("lost-effect", True, "g", (1, 6)), ("lost-effect", True, "b", (4, 6))),
    ),
    # every expected write applied before the run finished.
    "lost-effect-near-miss": (history(effect("a", "#1"), effect("b", "#2"), status("finished"), expected=AB), ()),
    # b has no record, but no run finished (its attempt failed, the record ends).
    "lost-effect-not-finished": (
        history(effect("a", "#1"), attempt("b", "invoke"), attempt("b", "fail"), expected=AB),
        (),
    ),
    # no receiver's records were seen: an attempt returned ok, but nothing says the write is missing.
    "lost-effect-unseen": (
        history(
            attempt("a", "invoke"),
            attempt("a", "ok"),
            status("finished"),
            expected=("a",),
            facts=frozenset({"transcript", "status", "approvals"}),
        ),
        (),
    ),
    # the model was sent a's call without its result (3) and refused (4); the run is stuck (5).
    "orphaned-call": (
        history(
            ask(),
            asked("a"),
            ask(),
            refused("tool_use without tool_result"),
            status("stuck", "refused"),
            expected=("a",),
        ),
        (("orphaned-call", True, "a", (2, 3, 4)), ("stuck-run", True, "", (5,))),
    ),
    # the conversation ends with a's call and no result, and the run did not finish.
    "orphaned-call-possible": (history(ask(), asked("a"), expected=("a",)), (("orphaned-call", False, "a", (2,)),)),
    # incarnation 0 ends with a's call, but a restart (incarnation 1) loaded it and saved its
    # result; b has no result at the end, but the run finished.
    "orphaned-call-near-miss": (
        history(
            ask(),
            asked("a"),
            ask(1),
            asked("a", 1),
            effect("a", "#1"),
            saved("a", 1),
            ask(1),
            asked("b", 1),
            effect("b", "#2"),
            status("finished"),
            expected=AB,
        ),
        (),
    ),
    # a result of a with no call of it before, in its conversation.
    "result-without-call": (history(ask(), saved("a"), expected=("a",)), (("result-without-call", True, "a", (2,)),)),
    # a's result after its call, then the model call: the conversation is whole.
    "result-without-call-near-miss": (history(ask(), asked("a"), saved("a"), ask(), expected=("a",)), ()),
    # a's two results in one conversation: the witness is both (3, 4).
    "duplicate-result": (
        history(ask(), asked("a"), saved("a"), saved("a"), ask(), expected=("a",)),
        (("duplicate-result", True, "a", (3, 4)),),
    ),
    # one result of a in each of two conversations, each after its call.
    "duplicate-result-near-miss": (
        history(ask(), asked("a"), saved("a"), ask(1), asked("a", 1), saved("a", 1), ask(1), expected=("a",)),
        (),
    ),
    # a is gated and applied with no approval.
    "unapproved-effect": (
        history(effect("a", "#1"), expected=("a",), gated=("a",)),
        (("unapproved-effect", True, "a", (1,)),),
    ),
    # a applied under its approval; b applied with none, but b is not gated.
    "unapproved-effect-near-miss": (
        history(grant("a", "a@1#1"), effect("a", "#1", approval="a@1#1"), effect("b", "#2"), expected=AB, gated=("a",)),
        (),
    ),
    # no approvals were seen: a record without one proves nothing.
    "unapproved-effect-unseen": (
        history(effect("a", "#1"), expected=("a",), gated=("a",), facts=frozenset({"effects", "status", "transcript"})),
        (),
    ),
    # approval #1 was given for a's arguments v1; a was applied with v2 under it.
    "approval-other-arguments": (
        history(
            grant("a", "a@1#1"), effect("a", "#1", approval="a@1#1", args_digest="v2"), expected=("a",), gated=("a",)
        ),
        (("approval-other-arguments", True, "a", (1, 2)),),
    ),
    # b applied under a's approval #1 (1), which a redeemed already (2): other arguments is b's
    # anomaly, the approval redeemed twice is the first effect's call, a.
    "approval-other-call": (
        history(
            grant("a", "a@1#1"),
            effect("a", "#1", approval="a@1#1"),
            effect("b", "#2", approval="a@1#1"),
            expected=AB,
            gated=AB,
        ),
        (("approval-other-arguments", True, "b", (1, 3)), ("approval-redeemed-twice", True, "a", (2, 3))),
    ),
    # the grant the effect names is not in the history: the witness is the effect alone.
    "approval-other-arguments-no-grant": (
        history(effect("a", "#1", approval="a@1#3", args_digest="v2"), expected=("a",), gated=("a",)),
        (("approval-other-arguments", True, "a", (1,)),),
    ),
    # b's entry "yes" is not `call@version#number`: it names no call and version.
    "approval-other-arguments-malformed": (
        history(effect("a", "#1", approval="a@1#3"), effect("b", "#2", approval="yes"), expected=AB, gated=AB),
        (("approval-other-arguments", True, "b", (2,)),),
    ),
    # a's approval for v2 redeemed by a with v2.
    "approval-other-arguments-near-miss": (
        history(
            grant("a", "a@2#1", "v2"),
            effect("a", "#1", approval="a@2#1", args_digest="v2"),
            expected=("a",),
            gated=("a",),
        ),
        (),
    ),
    # a applied twice under approval #1: a duplicate, and the approval redeemed twice.
    "approval-redeemed-twice": (
        history(
            grant("a", "a@1#1"),
            effect("a", "#1", approval="a@1#1"),
            effect("a", "#2", approval="a@1#1"),
            expected=("a",),
            gated=("a",),
        ),
        (("duplicate-effect", True, "a", (2, 3)), ("approval-redeemed-twice", True, "a", (2, 3))),
    ),
    # two approvals, each redeemed once (a grant after a grant is the person's, not the run going on).
    "approval-redeemed-twice-near-miss": (
        history(
            grant("a", "a@1#1"),
            grant("b", "b@1#2"),
            effect("a", "#1", approval="a@1#1"),
            effect("b", "#2", approval="b@1#2"),
            expected=AB,
            gated=AB,
        ),
        (),
    ),
    "stuck-run": (history(status("stuck", "waits for a tool result")), (("stuck-run", True, "", (1,)),)),
    "stuck-run-near-miss": (history(status("finished")), ()),
    # a applied after its run failed.
    "effect-after-failure": (
        history(status("failed"), effect("a", "#1"), expected=("a",)),
        (("effect-after-failure", True, "a", (1, 2)),),
    ),
    # an effect of unknown outcome after the run was cancelled: possible.
    "effect-after-failure-possible": (
        history(status("cancelled"), effect("a", type_="info"), expected=("a",)),
        (("effect-after-failure", False, "a", (1, 2)),),
    ),
    # a applied before r1 failed; b's effect after it is of another run (r2).
    "effect-after-failure-near-miss": (
        history(effect("a", "#1"), status("failed"), effect("b", "#2", run="r2"), expected=AB),
        (),
    ),
    # one key sent by two calls: the anomaly's call is the first event's.
    "key-reused-calls": (
        history(
            attempt("a", "ok", key="k1", args_digest="v1"), attempt("b", "ok", key="k1", args_digest="v1"), expected=AB
        ),
        (("key-reused", True, "a", (1, 2)),),
    ),
    # one key sent with two arguments' versions by one call: 3 is the first that conflicts, with 1.
    "key-reused-arguments": (
        history(
            attempt("a", "invoke", key="k1", args_digest="v1"),
            attempt("a", "ok", key="k1", args_digest="v1"),
            attempt("a", "invoke", key="k1", args_digest="v2"),
            attempt("a", "ok", key="k1", args_digest="v2"),
            expected=("a",),
        ),
        (("key-reused", True, "a", (1, 3)),),
    ),
    # a's attempt (1) never completed, so whether it sent k1 is not known: possible.
    "key-reused-possible": (
        history(attempt("a", "invoke", key="k1"), attempt("b", "ok", inc=1, key="k1"), expected=AB),
        (("key-reused", False, "a", (1, 2)),),
    ),
    # a's retry with its key and arguments; the receiver's record digests arguments its own way.
    "key-reused-near-miss": (
        history(
            attempt("a", "invoke", key="k1", args_digest="v1"),
            attempt("a", "fail", key="k1"),
            attempt("a", "invoke", key="k1", args_digest="v1"),
            attempt("a", "ok", key="k1"),
            effect("a", "#1", key="k1", args_digest="sha256:9f2c"),
            expected=("a",),
        ),
        (),
    ),
    # a's attempt with k1 crashed (incarnation 0); the retry sent k2, so nothing settled the first.
    "unknown-never-settled": (
        history(
            attempt("a", "invoke", key="k1"),
            attempt("a", "invoke", 1, key="k2"),
            attempt("a", "ok", 1, key="k2"),
            effect("a", "#1"),
            status("finished"),
            expected=("a",),
        ),
        (("unknown-never-settled", False, "a", (1, 5)),),
    ),
    # an attempt ended `info` (2) with no key, then the run got stuck (3).
    "unknown-never-settled-info": (
        history(attempt("a", "invoke"), attempt("a", "info"), status("stuck", "the worker died"), expected=("a",)),
        (("stuck-run", True, "", (3,)), ("unknown-never-settled", False, "a", (2, 3))),
    ),
    # the crashed attempt's retry sent the same key and completed: the receiver settled it.
    "unknown-never-settled-near-miss": (
        history(
            attempt("a", "invoke", key="k1"),
            attempt("a", "invoke", 1, key="k1"),
            attempt("a", "ok", 1, key="k1"),
            effect("a", "#1", key="k1"),
            status("finished"),
            expected=("a",),
        ),
        (),
    ),
    # the unknown attempt is a read (get_issue is no write's tool).
    "unknown-never-settled-read": (
        history(
            effect("a", "#1", tool="create_issue"),
            attempt("read_x", "invoke", tool="get_issue"),
            status("finished"),
            expected=("a",),
        ),
        (),
    ),
    # the record ends while a's attempt runs: no status follows it.
    "unknown-never-settled-record-ends": (history(attempt("a", "invoke", key="k1"), expected=("a",)), ()),
    # approval #1 given, then the run only ended (stuck).
    "approval-not-resumed": (
        history(grant("a", "a@1#1"), status("stuck", "the process exited"), expected=("a",), gated=("a",)),
        (("stuck-run", True, "", (2,)), ("approval-not-resumed", True, "a", (1, 2))),
    ),
    # the record ends after the grant (3); the conversation ends with a's call and no result (2).
    "approval-not-resumed-possible": (
        history(ask(), asked("a"), grant("a", "a@1#1"), expected=("a",), gated=("a",)),
        (("orphaned-call", False, "a", (2,)), ("approval-not-resumed", False, "a", (3,))),
    ),
    "approval-not-resumed-near-miss": (
        history(
            grant("a", "a@1#1"), effect("a", "#1", approval="a@1#1"), status("finished"), expected=("a",), gated=("a",)
        ),
        (),
    ),
    "replay-divergence": (
        history(status("diverged", "nondeterminism: activity create_issue where timer was")),
        (("replay-divergence", True, "", (1,)),),
    ),
    "replay-divergence-near-miss": (history(status("failed")), ()),
}
"""Every fixture: a history and its anomalies, counted by hand (see each comment)."""


def summary(found: tuple[Anomaly, ...]) -> Expected:
    """What a fixture's expectation says of each anomaly: its name, definite, call, and witness's seqs."""
    return tuple((a.name, a.definite, a.call, tuple(e.seq for e in a.witness)) for a in found)


def named(*prefixes: str) -> list[str]:
    """The fixtures whose names begin with one of `prefixes`, in FIXTURES order."""
    return [name for name in FIXTURES if name.startswith(prefixes)]
