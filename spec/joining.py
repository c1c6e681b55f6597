"""Recorded runs put together: merging several sources of one audit, splitting by run, joining calls.

spec/HISTORY.md section 7. An audit reads a run's records from several places (a session
database, spans, the receiver's ledger); `merge` puts their events in one order (by `time`,
each source's own order kept), `by_run` gives each run its history (events with no run go to
the one run there is, or to the run that holds their call), and `join` gives each event about
a call its logical call: the runtime's key, else the model's call ID, else the fallback key
(tool and arguments' digest). What cannot be joined is counted and kept aside, never guessed.
Pure functions over values: the audit's reading is in crashsweep/importers/.
"""

from __future__ import annotations

import dataclasses
import heapq
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from crashsweep.spec.history import Event, History

ABOUT_CALLS = frozenset(
    {"tool_call", "result_saved", "effect", "tool_run", "approval_request", "approval_grant", "approval_redeem"}
)
"""The events about one call: each is joined to its logical call (or counted unjoined)."""
RULES = ("runtime key", "call ID", "tool and arguments")
"""The join rules, in the order they are tried (spec/HISTORY.md 7)."""


@dataclass(frozen=True, slots=True)
class Joined:
    """A run's history with every event's logical call, and how each was joined."""

    history: History
    joined: tuple[int, int, int]
    """How many events each of RULES joined."""
    unjoined: tuple[Event, ...]
    """The events about a call that no rule could join (in no anomaly about calls)."""


def merge(sources: Sequence[History]) -> History:
    """The sources' events in one order: by time, each source's own order kept; facts united.

    An event without a time takes the time of the event before it in its source (its place).
    One source is returned as it is; several are numbered again from 1 in the merged order.
    """
    if len(sources) == 1:
        return sources[0]
    if not sources:
        return History(facts=frozenset())
    streams = [_timed(n, source.events) for n, source in enumerate(sources)]
    events = tuple(dataclasses.replace(event, seq=seq) for seq, (*_, event) in enumerate(heapq.merge(*streams), 1))
    facts = frozenset().union(*(source.facts for source in sources))
    unseen: dict[str, str] = {}
    for source in sources:
        for fact, why in source.unseen.items():
            if fact not in facts:
                unseen.setdefault(fact, why)
    expected = tuple(dict.fromkeys(call for source in sources for call in source.expected))
    gated = tuple(dict.fromkeys(call for source in sources for call in source.gated))
    return History(events, expected, gated, facts, unseen)


def _timed(source: int, events: Sequence[Event]) -> Iterator[tuple[float, int, int, Event]]:
    """(time, source, position, event), the time never going back within the source."""
    last = 0.0
    for position, event in enumerate(events):
        last = max(last, event.time)
        yield last, source, position, event


def by_run(history: History) -> tuple[History, ...]:
    """One history a run, in the order runs first appear; events of run "" go where they belong.

    An event with no run belongs to the one run the history names; with several, an event
    about a call goes to the one run that holds that call (by `call`, `call_id`, or tool and
    arguments), and the rest stay in a history of run "" of their own.
    """
    runs = list(dict.fromkeys(event.run for event in history.events if event.run))
    if len(runs) <= 1:
        return (history,)
    owners = _owners(history)
    split: dict[str, list[Event]] = {run: [] for run in [*runs, ""]}
    for event in history.events:
        split[event.run or owners.get(_names(event), "")].append(event)
    return tuple(dataclasses.replace(history, events=tuple(events)) for run, events in split.items() if events or run)


def _names(event: Event) -> tuple[str, ...]:
    """What names an event's call before joining: its call or call ID, else its tool and arguments."""
    name = event.call or event.call_id
    if name:
        return ("call", name)
    return ("args", event.tool, event.args_digest) if event.tool and event.args_digest else ()


def _owners(history: History) -> dict[tuple[str, ...], str]:
    """For each name of a call: the one run whose events name it (a name several runs share has none)."""
    claims: dict[tuple[str, ...], set[str]] = {}
    for event in history.events:
        if event.run and event.f in ABOUT_CALLS:
            for name in (("call", event.call), ("call", event.call_id), ("args", event.tool, event.args_digest)):
                if all(name[1:]):
                    claims.setdefault(name, set()).add(event.run)
    return {name: min(runs) for name, runs in claims.items() if len(runs) == 1}


def join(history: History) -> Joined:
    """Every event about a call given its logical call by the rules of spec/HISTORY.md 7."""
    by_id: dict[str, str] = {}
    for event in history.events:
        if event.f in ABOUT_CALLS and event.call and event.call_id:
            by_id.setdefault(event.call_id, event.call)
    first = [_by_key_or_id(event, by_id) for event in history.events]
    by_args: dict[tuple[str, str], list[str]] = {}
    for event, (call, _) in zip(history.events, first, strict=True):
        if call and event.tool and event.args_digest:
            calls = by_args.setdefault((event.tool, event.args_digest), [])
            if call not in calls:
                calls.append(call)
    counts = [0, 0, 0]
    unjoined: list[Event] = []
    events: list[Event] = []
    for event, (call, rule) in zip(history.events, first, strict=True):
        if event.f in ABOUT_CALLS and not call and event.tool and event.args_digest:
            named = by_args.get((event.tool, event.args_digest), [])
            call, rule = (named[0] if len(named) == 1 else f"{event.tool}({event.args_digest})"), 2
        if event.f in ABOUT_CALLS:
            if call:
                counts[rule] += 1
            else:
                unjoined.append(event)
        events.append(event if call == event.call else _with_call(event, call))
    joined = dataclasses.replace(history, events=tuple(events))
    return Joined(joined, (counts[0], counts[1], counts[2]), tuple(unjoined))


_FIELDS = operator.attrgetter(*(field.name for field in dataclasses.fields(Event)))
_CALL = [field.name for field in dataclasses.fields(Event)].index("call")


def _with_call(event: Event, call: str) -> Event:
    """The event with its logical call (`dataclasses.replace`, at half its cost: a million events are joined)."""
    values = list(_FIELDS(event))
    values[_CALL] = call
    return Event(*values)


def _by_key_or_id(event: Event, by_id: dict[str, str]) -> tuple[str, int]:
    """The event's call by rule 1 (its own) or 2 (its call ID's), and the rule; ("", -1) for neither."""
    if event.call:
        return event.call, 0
    if event.call_id and event.f in ABOUT_CALLS:
        return by_id.get(event.call_id, event.call_id), 1
    return "", -1
