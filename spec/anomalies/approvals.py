"""The anomalies of approvals: a gated write applied unapproved, under another approval, twice; one never used.

unapproved-effect, approval-other-arguments and approval-redeemed-twice are approved-exactly
seen call by call (spec/HISTORY.md 8): each `effect` `ok` of a gated call carries the entry
`call@version#number` it was applied under (spec/entries.py) and its arguments' version
(`args_digest` "vN", v1 when none). They find nothing on a history without the `effects` and
`approvals` facts. approval-not-resumed is found by no invariant.

Choices where section 8 is silent:
- approval-redeemed-twice counts the effects of gated calls only (as approved-exactly does), of
  every run (one approval's number is one approval); one anomaly an approval, its witness the
  first two effects, its call the first effect's;
- an approval is named by its number; an entry that is not `call@version#number` (whole
  numbers) has none: it names no call, version or grant (so it is always "other arguments"),
  and no two effects carry one approval by it;
- the grant an effect names is the first `approval_grant` `ok` with the same number;
- approval-not-resumed: only an `approval_grant` `ok` is an approval given; the run's events
  after it are those of its `run` and of run "" (an event that names no run is every run's);
  another `approval_grant` is the person's, not the run's, so it does not count as the run going
  on; the status of the witness is the first one after.
"""

from __future__ import annotations

import re

from crashsweep.spec.anomalies.calls import Calls, statuses_of
from crashsweep.spec.anomalies.value import Anomaly
from crashsweep.spec.entries import parts
from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import approved_exactly
from crashsweep.spec.invariants.approved_exactly import version

UNAPPROVED_EFFECT = "unapproved-effect"
APPROVAL_OTHER_ARGUMENTS = "approval-other-arguments"
APPROVAL_REDEEMED_TWICE = "approval-redeemed-twice"
APPROVAL_NOT_RESUMED = "approval-not-resumed"
ENTRY = re.compile(r".+@[0-9]+#[0-9]+")
"""An approval's entry (spec/entries.py), its version and number whole numbers."""


def unapproved_effect(history: History) -> tuple[Anomaly, ...]:
    """Each `effect` `ok` of a gated call that carries no approval."""
    calls = _gated(history)
    if calls is None:
        return ()
    found = []
    for event in _effects(history):
        if not event.approval:
            why = f"{_sent(event)} was applied with no approval that matches it"
            found.append(calls.found(UNAPPROVED_EFFECT, event.call, why, (event,)))
    return calls.ordered(found)


def approval_other_arguments(history: History) -> tuple[Anomaly, ...]:
    """Each `effect` `ok` of a gated call whose approval names another call or another version."""
    calls = _gated(history)
    if calls is None:
        return ()
    grants = [e for e in history.events if e.f == "approval_grant" and e.type == "ok" and e.approval]
    found = []
    for event in _effects(history):
        if not event.approval:
            continue
        named = _parts(event.approval)
        if named is not None and named[:2] == (event.call, version(event.args_digest)):
            continue
        if named is None:
            why = f"{_sent(event)} was applied under approval {event.approval}, which names no call and version"
        else:
            given = f"given for {named[0]} with arguments v{named[1]}"
            why = f"{_sent(event)} was applied under approval #{named[2]}, {given}"
        grant = None if named is None else next((g for g in grants if _number(g.approval) == named[2]), None)
        witness = (event,) if grant is None else (grant, event)
        found.append(calls.found(APPROVAL_OTHER_ARGUMENTS, event.call, why, witness))
    return calls.ordered(found)


def approval_redeemed_twice(history: History) -> tuple[Anomaly, ...]:
    """Each approval carried by two or more `effect` `ok` events of gated calls."""
    calls = _gated(history)
    if calls is None:
        return ()
    carried: dict[int, list[Event]] = {}
    for event in _effects(history):
        number = _number(event.approval)
        if number is not None:
            carried.setdefault(number, []).append(event)
    found = []
    for number, effects in carried.items():
        if len(effects) > 1:
            times = "twice" if len(effects) == 2 else f"{len(effects)} times"
            why = f"approval #{number} was redeemed {times}"
            found.append(calls.found(APPROVAL_REDEEMED_TWICE, effects[0].call, why, effects[:2]))
    return calls.ordered(found)


def approval_not_resumed(history: History) -> tuple[Anomaly, ...]:
    """Grants after which their run does nothing but end (definite) or the record ends (possible)."""
    calls = Calls.of(history)
    found = []
    for grant in history.events:
        if grant.f != "approval_grant" or grant.type != "ok":
            continue
        later = calls.after(grant)
        went_on = any(e.run in (grant.run, "") and e.f not in ("run_status", "approval_grant") for e in later)
        if went_on:
            continue
        what = f"approval {grant.approval} of {grant.call}" if grant.approval else f"the approval of {grant.call}"
        ended = statuses_of(grant.run, later)
        if ended:
            why = f"{what} was never used: the run ended ({ended[0].status})"
            found.append(calls.found(APPROVAL_NOT_RESUMED, grant.call, why, (grant, ended[0])))
        else:
            why = f"{what} was not used before the record ends"
            found.append(calls.found(APPROVAL_NOT_RESUMED, grant.call, why, (grant,), definite=False))
    return calls.ordered(found)


def _gated(history: History) -> Calls | None:
    """The history's reading, or None when it lacks a fact approved-exactly needs."""
    return None if history.missing(approved_exactly.INVARIANT.needs) is not None else Calls.of(history)


def _effects(history: History) -> list[Event]:
    """The `effect` `ok` events of gated calls, in order."""
    gated = set(history.gated)
    return [e for e in history.events if e.f == "effect" and e.type == "ok" and e.call and e.call in gated]


def _sent(effect: Event) -> str:
    """How the words name what was applied: `call@version`."""
    return f"{effect.call}@{version(effect.args_digest)}"


def _parts(kept: str) -> tuple[str, int, int] | None:
    """(call, version, number) of an entry, or None when it is not `call@version#number` (whole numbers)."""
    return parts(kept) if ENTRY.fullmatch(kept) else None


def _number(kept: str) -> int | None:
    """What names an approval: its number (None for no entry)."""
    named = _parts(kept)
    return None if named is None else named[2]
