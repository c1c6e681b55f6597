"""The anomaly oracle: spec/HISTORY.md section 8 written again, plainly, from its text alone.

`anomalies(history)` finds the anomalies of section 8's table in a joined History, each a plain
tuple (name, definite, run, call, the seqs of its witness), to be compared with
crashsweep.spec.anomalies.registry.find on random histories (tests/spec/anomalies/
test_oracle_agreement.py). Nothing is read from spec/anomalies/, only spec/history.py's values.
Slow and obvious on purpose: every rule scans the whole history again. Its readings of the text:

- A call is its `call`, one across the history; "" is no call (unjoined: in no rule about
  calls, but in key-reused, effect-after-failure and approval-not-resumed, which are about keys,
  effects and grants). One anomaly per call (orphaned-call too, across conversations), per
  result (result-without-call), per conversation and ID (duplicate-result), per approval
  number, per key, per effect, per attempt, per grant, per status event. A `run_status` of run
  "" is a status of every run.
- A rule whose row names an invariant finds nothing in a history that lacks a fact that
  invariant needs (NEEDS, section 3's table).
- An attempt is a `tool_run` invoke; an `ok`/`fail`/`info` completes the earliest open one of
  its (run, incarnation, call), and one with none open is an attempt by itself (a runtime that
  records only ends). Of unknown outcome: never completed or completed `info`; its events are
  uncertain, as is every `info` event. Definite: the table's word and no uncertain event in the
  witness, listed in history order; the anomaly's run is its first event's run.
- A write: expected, gated, with an `effect` event (any type), or a call with a `tool` of such
  a call; with no expected, no gated and no effect of a call, every call.
- A grant is an `approval_grant` `ok`. An entry is `call@N#M`, N and M whole numbers; what is
  no entry carries no number (it names no grant, and no two effects carry one approval by it).
  An `args_digest` is version N when it is `vN`, else version 1.
- A conversation's unanswered call is a possible orphan only in its run's last conversation
  (the one a resume goes on from) of a run that did not finish.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crashsweep.spec.history import Event, History

Found = tuple[str, bool, str, str, tuple[int, ...]]
"""One anomaly: name, definite, run, call, the seqs of its witness events in the history's order."""
Raw = tuple[str, bool, str, list[Event]]
"""What a rule finds: name, definite by the table's words, call, the witness events."""
CONVERSATION = ("tool_call", "result_saved", "model_call")
NEEDS = {
    "no-duplicate": ("effects",),
    "no-loss": ("effects", "status"),
    "well-formed-transcript": ("transcript",),
    "approved-exactly": ("effects", "approvals"),
    "can-finish": ("status",),
}
"""The facts each invariant needs (section 3's table)."""
ROWS = {
    "no-duplicate": ("duplicate-effect",),
    "no-loss": ("lost-effect",),
    "well-formed-transcript": ("orphaned-call", "result-without-call", "duplicate-result"),
    "approved-exactly": ("unapproved-effect", "approval-other-arguments", "approval-redeemed-twice"),
    "can-finish": ("stuck-run",),
}
"""Section 8's rows of each invariant (the other rows name none)."""
INVARIANT = {name: invariant for invariant, names in ROWS.items() for name in names}
ENTRY = re.compile(r"(.+)@([0-9]+)#([0-9]+)")
VERSION = re.compile(r"v([0-9]+)")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of a tool's body: its first event and its completion (None: never completed)."""

    first: Event
    end: Event | None

    @property
    def unknown(self) -> bool:
        """Never completed, or completed `info`."""
        return self.end is None or self.end.type == "info"

    @property
    def shown_by(self) -> Event:
        """The event that shows its outcome: the completion, else the invoke."""
        return self.end if self.end is not None else self.first

    @property
    def key(self) -> str:
        return self.first.key or (self.end.key if self.end is not None else "")


def attempts(history: History) -> list[Attempt]:
    """Every attempt, in the order each began."""
    found: list[list[Event | None]] = []
    waiting: dict[tuple[str, int, str], list[int]] = {}
    for event in history.events:
        if event.f != "tool_run":
            continue
        open_ = waiting.setdefault((event.run, event.incarnation, event.call), [])
        if event.type == "invoke":
            open_.append(len(found))
            found.append([event, None])
        elif open_:
            found[open_.pop(0)][1] = event
        else:
            found.append([event, event])
    return [Attempt(first, end) for first, end in found if first is not None]


def uncertain(history: History) -> set[int]:
    """The seqs of the `info` events and of the events of attempts of unknown outcome."""
    seqs = {event.seq for event in history.events if event.type == "info"}
    for attempt in attempts(history):
        if attempt.unknown:
            seqs.add(attempt.first.seq)
    return seqs


def statuses(history: History, run: str, *names: str) -> list[Event]:
    """The `run_status` events of `run` (or of run "") whose status is one of `names` (any when none)."""
    return [
        e for e in history.events if e.f == "run_status" and e.run in (run, "") and (not names or e.status in names)
    ]


def of_call(history: History, call: str, f: str = "", type_: str = "") -> list[Event]:
    """The events of `call`, optionally only those that are `f` and `type_`."""
    return [e for e in history.events if e.call == call and (not f or e.f == f) and (not type_ or e.type == type_)]


def calls(history: History) -> list[str]:
    """Every call some event names."""
    return sorted({e.call for e in history.events if e.call})


def writes(history: History) -> set[str]:
    """The calls that are writes (module docstring)."""
    named = calls(history)
    if not history.expected and not history.gated and not any(e.f == "effect" and e.call for e in history.events):
        return set(named)
    first = set(history.expected) | set(history.gated) | {e.call for e in history.of("effect") if e.call}
    tools = {e.tool for e in history.events if e.tool and e.call in first}
    return first | {e.call for e in history.events if e.call and e.tool in tools}


def duplicate_effect(history: History) -> list[Raw]:
    """Two effects `ok` of one call (definite), or one `ok` and some `info` (possible)."""
    found: list[Raw] = []
    for call in calls(history):
        oks = of_call(history, call, "effect", "ok")
        infos = of_call(history, call, "effect", "info")
        if len(oks) >= 2:
            found.append(("duplicate-effect", True, call, oks[:2]))
        elif oks and infos:
            found.append(("duplicate-effect", False, call, [oks[0], infos[0]]))
    return found


def lost_effect(history: History) -> list[Raw]:
    """A run finished, and an expected call (or a granted or returned write) with no `effect` `ok`."""
    found: list[Raw] = []
    ends = [e for e in history.of("run_status") if e.status == "finished"]
    if not ends:
        return found
    write = writes(history)
    unknown = {a.first.call for a in attempts(history) if a.unknown}
    for call in sorted(set(history.expected) | set(calls(history))):
        if of_call(history, call, "effect", "ok"):
            continue
        if call in history.expected:
            doubt = bool(of_call(history, call, "effect", "info")) or call in unknown
        elif call in write and (
            of_call(history, call, "approval_grant", "ok") or of_call(history, call, "tool_run", "ok")
        ):
            doubt = False
        else:
            continue
        found.append(("lost-effect", not doubt, call, [*of_call(history, call)[-1:], ends[-1]]))
    return found


def transcript(history: History) -> list[Raw]:
    """orphaned-call, result-without-call and duplicate-result, conversation by conversation.

    An orphaned call is one a call across the history: its first definite one, else its first possible one.
    """
    found: list[Raw] = []
    said = [e for e in history.events if e.f in CONVERSATION]
    last = {e.run: (e.run, e.incarnation) for e in said}
    for run, incarnation in sorted({(e.run, e.incarnation) for e in said}):
        events = [e for e in said if (e.run, e.incarnation) == (run, incarnation)]
        resumable = last[run] == (run, incarnation) and not statuses(history, run, "finished")
        found += conversation(events, resumable)
    first: dict[str, Raw] = {}
    for orphan in sorted((r for r in found if r[0] == "orphaned-call"), key=sent_first):
        first.setdefault(orphan[2], orphan)
    return [r for r in found if r[0] != "orphaned-call"] + list(first.values())


def sent_first(orphan: Raw) -> tuple[bool, int, int]:
    """Definite orphans first, by the model call they were sent to, then by the call; then possible ones."""
    _, definite, _, witness = orphan
    return (False, witness[1].seq, witness[0].seq) if definite else (True, witness[0].seq, 0)


def conversation(events: list[Event], resumable: bool) -> list[Raw]:
    """The transcript anomalies of one conversation (its events in order); a call is named by call_id, else call.

    `resumable`: the conversation is its run's last (its last event is the run's last conversation
    event) and the run did not finish, so a resume would send the calls it ends with.
    """
    found: list[Raw] = []
    asked: dict[str, Event] = {}
    answered: set[str] = set()
    sent: set[str] = set()
    results: dict[str, list[Event]] = {}
    for n, event in enumerate(events):
        name = event.call_id or event.call
        if event.f == "tool_call" and event.type == "invoke" and event.call:
            asked.setdefault(name, event)
        elif event.f == "result_saved" and event.type == "ok" and event.call:
            results.setdefault(name, []).append(event)
            if name not in asked:
                found.append(("result-without-call", True, event.call, [event]))
            else:
                answered.add(name)
        elif event.f == "model_call" and event.type == "invoke":
            after = [e for e in events[n + 1 :] if e.f == "model_call"][:1]
            refusal = [e for e in after if e.type == "fail"]
            for name, call in asked.items():
                if name not in answered and name not in sent:
                    sent.add(name)
                    found.append(("orphaned-call", True, call.call, [call, event, *refusal]))
    for name, call in asked.items():
        if name not in answered and name not in sent and resumable:
            found.append(("orphaned-call", False, call.call, [call]))
    for both in results.values():
        if len(both) >= 2:
            found.append(("duplicate-result", True, both[0].call, both[:2]))
    return found


def approvals(history: History) -> list[Raw]:
    """unapproved-effect, approval-other-arguments and approval-redeemed-twice, over effects `ok` of gated calls."""
    found: list[Raw] = []
    carried: dict[int, list[Event]] = {}
    for event in history.events:
        if event.f != "effect" or event.type != "ok" or not event.call or event.call not in history.gated:
            continue
        if not event.approval:
            found.append(("unapproved-effect", True, event.call, [event]))
            continue
        parts = entry(event.approval)
        if parts is None:
            found.append(("approval-other-arguments", True, event.call, [event]))
            continue
        call, version, number = parts
        carried.setdefault(number, []).append(event)
        if (call, version) != (event.call, version_of(event.args_digest)):
            grants = [e for e in history.of("approval_grant") if e.type == "ok" and number_of(e.approval) == number]
            found.append(("approval-other-arguments", True, event.call, [event, *grants[:1]]))
    for effects in carried.values():
        if len(effects) >= 2:
            found.append(("approval-redeemed-twice", True, effects[0].call, effects[:2]))
    return found


def entry(approval: str) -> tuple[str, int, int] | None:
    """(call, version, number) of an entry `call@version#number`; None for what is no entry."""
    match = ENTRY.fullmatch(approval)
    return (match[1], int(match[2]), int(match[3])) if match else None


def number_of(approval: str) -> int | None:
    """The approval number of an entry; None for what is no entry."""
    parts = entry(approval)
    return parts[2] if parts else None


def version_of(digest: str) -> int:
    """The version an `args_digest` names: N for `vN`, else 1."""
    match = VERSION.fullmatch(digest)
    return int(match[1]) if match else 1


def statuses_named(history: History) -> list[Raw]:
    """stuck-run and replay-divergence: one a status event."""
    names = {"stuck": "stuck-run", "diverged": "replay-divergence"}
    return [(names[e.status], True, "", [e]) for e in history.events if e.f == "run_status" and e.status in names]


def effect_after_failure(history: History) -> list[Raw]:
    """An effect `ok` (definite) or `info` (possible) after its run was declared failed or cancelled."""
    found: list[Raw] = []
    for event in history.events:
        if event.f == "effect" and event.type in ("ok", "info"):
            before = [s for s in statuses(history, event.run, "failed", "cancelled") if s.seq < event.seq]
            if before:
                found.append(("effect-after-failure", event.type == "ok", event.call, [before[0], event]))
    return found


def key_reused(history: History) -> list[Raw]:
    """One key sent with other arguments or for another call: of each key, the first later event in conflict."""
    found: list[Raw] = []
    for key in sorted({e.key for e in history.events if e.key}):
        sent = [e for e in history.events if e.key == key]
        pair = next(((a, b) for b in sent for a in sent if a.seq < b.seq and clash(a, b)), None)
        if pair is not None:
            found.append(("key-reused", True, pair[0].call, list(pair)))
    return found


def clash(a: Event, b: Event) -> bool:
    """Different non-empty arguments of one `f` (one producer's digests), or different joined calls."""
    digests = a.f == b.f and a.args_digest and b.args_digest and a.args_digest != b.args_digest
    return bool(digests) or bool(a.call and b.call and a.call != b.call)


def unknown_never_settled(history: History) -> list[Raw]:
    """An unknown attempt of a write, a later status of its run, and no later keyed attempt that settled it."""
    found: list[Raw] = []
    every = attempts(history)
    write = writes(history)
    for attempt in every:
        shown, run, call = attempt.shown_by, attempt.first.run, attempt.first.call
        if not attempt.unknown or not call or call not in write:
            continue
        later = [s for s in statuses(history, run) if s.seq > shown.seq]
        settled = any(
            b.first.call == call
            and b.first.seq > attempt.first.seq
            and attempt.key
            and b.key == attempt.key
            and b.end is not None
            and b.end.type in ("ok", "fail")
            for b in every
        )
        if later and not settled:
            found.append(("unknown-never-settled", False, call, [shown, later[0]]))
    return found


def approval_not_resumed(history: History) -> list[Raw]:
    """A grant after which its run has only statuses and grants: definite when a status follows, else possible."""
    found: list[Raw] = []
    for grant in history.of("approval_grant"):
        mine = [e for e in history.events if e.run == grant.run or (e.f == "run_status" and not e.run)]
        after = [e for e in mine if e.seq > grant.seq]
        if grant.type != "ok" or any(e.f not in ("run_status", "approval_grant") for e in after):
            continue
        ends = [e for e in after if e.f == "run_status"]
        found.append(("approval-not-resumed", bool(ends), grant.call, [grant, *ends[:1]]))
    return found


RULES = (
    duplicate_effect,
    lost_effect,
    transcript,
    approvals,
    statuses_named,
    effect_after_failure,
    key_reused,
    unknown_never_settled,
    approval_not_resumed,
)


def seq(event: Event) -> int:
    return event.seq


def anomalies(history: History) -> list[Found]:
    """Every anomaly of section 8 in `history`, sorted; definite only when no witness event is uncertain."""
    doubtful = uncertain(history)
    found: list[Found] = []
    for rule in RULES:
        for name, definite, call, witness in rule(history):
            if name in INVARIANT and not set(NEEDS[INVARIANT[name]]) <= history.facts:
                continue
            ordered = sorted(witness, key=seq)
            seqs = tuple(e.seq for e in ordered)
            found.append((name, definite and not doubtful.intersection(seqs), ordered[0].run, call, seqs))
    return sorted(found)
