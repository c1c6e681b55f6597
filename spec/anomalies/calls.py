"""What every anomaly rule reads of a joined History: each call's events, the writes, the attempts.

spec/HISTORY.md 8 names its anomalies call by call, so the rules share one reading of the
history (`Calls.of`): each logical call's events in order (an unjoined event, `call == ""`, is
in none), which calls are writes, and the attempts of `tool_run`. An attempt is a `tool_run`
`invoke` and the first `ok`, `fail` or `info` of the same call after it in its (run,
incarnation), or such an outcome with no `invoke` open before it (a producer that records only
how a step ended); an `invoke` that nothing completes is of unknown outcome, as an `info` is
(Jepsen: a crashed process's operation). An anomaly is definite only when its witness holds no
`info` event and no event of an attempt of unknown outcome (`Calls.found` applies that to every
rule).

Choices where section 8 is silent:
- an outcome completes the earliest open `invoke` of its own call in its (run, incarnation),
  not any open attempt of the process;
- an attempt of an unjoined `tool_run` (`call` "") is paired within its (run, incarnation) like
  any other, so its outcome counts for certainty; no rule about calls reads it;
- a call is a write when it is expected or gated, when it has an `effect` event of any type, or
  when one of its events names the tool of such a call; a history with no expected call, no
  gated call and no `effect` event of a call counts every call as one (an effect with no call
  names no write).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from crashsweep.spec.anomalies.value import Anomaly
from crashsweep.spec.history import Event, History

UNKNOWN = "unknown"
"""The outcome of an attempt that ended `info` or was never completed."""
_ENDS = ("ok", "fail", "info")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of a tool's body: its call, where it ran, the key it sent, its events and outcome."""

    call: str
    run: str
    incarnation: int
    key: str
    events: tuple[Event, ...]
    """Its `invoke` and its outcome, or the one of them the history holds, in order."""
    outcome: str
    """"ok", "fail", or UNKNOWN (an `info`, or an `invoke` never completed)."""

    @property
    def last(self) -> Event:
        """Its outcome's event, or its `invoke` when it was never completed."""
        return self.events[-1]


_LAST: list[Calls] = []
"""The last reading made: every rule of one `find` reads the same history (an identity check, so pure)."""


@dataclass(frozen=True, slots=True, eq=False)
class Calls:
    """One reading of a history for the rules: positions, each call's events, the writes, the attempts."""

    history: History
    by_call: Mapping[str, tuple[Event, ...]]
    """Each joined call's events, in order; calls in the order first named."""
    writes: tuple[str, ...]
    """The calls that are writes: expected, then gated, then the others (those with effects first)."""
    attempts: tuple[Attempt, ...]
    """The attempts, in the order they began (an unjoined one's `call` is "")."""
    _where: Mapping[int, int]
    _uncertain: frozenset[int]

    @classmethod
    def of(cls, history: History) -> Calls:
        """The reading of `history`, made once for all the rules that read it (the last history's is kept)."""
        if _LAST and _LAST[0].history is history:
            return _LAST[0]
        _LAST[:] = [cls._read(history)]
        return _LAST[0]

    @classmethod
    def _read(cls, history: History) -> Calls:
        where: dict[int, int] = {}
        for n, event in enumerate(history.events):
            where.setdefault(id(event), n)
        by_call: dict[str, list[Event]] = {}
        for event in history.events:
            if event.call:
                by_call.setdefault(event.call, []).append(event)
        found = _attempts(history.events)
        uncertain = {where[id(e)] for e in history.events if e.type == "info"}
        uncertain |= {where[id(e)] for a in found if a.outcome == UNKNOWN for e in a.events}
        calls = {call: tuple(events) for call, events in by_call.items()}
        return cls(history, calls, _writes(history, calls), found, where, frozenset(uncertain))

    def where(self, event: Event) -> int:
        """The event's position in the history's events (its first, for an event the history holds twice)."""
        return self._where[id(event)]

    def certain(self, witness: Iterable[Event]) -> bool:
        """No event of `witness` is `info` or part of an attempt of unknown outcome."""
        return not any(self.where(event) in self._uncertain for event in witness)

    def events(self, call: str, f: str, *types: str) -> tuple[Event, ...]:
        """The call's events that are `f` of one of `types` (any type when none given), in order."""
        return tuple(e for e in self.by_call.get(call, ()) if e.f == f and (not types or e.type in types))

    def attempts_of(self, call: str) -> tuple[Attempt, ...]:
        """The (joined) call's attempts, in the order they began."""
        return tuple(a for a in self.attempts if a.call == call) if call else ()

    def found(self, name: str, call: str, why: str, witness: Sequence[Event], definite: bool = True) -> Anomaly:
        """An anomaly of rule `name`: its witness in history order, definite only when the witness is certain."""
        ordered = tuple(sorted(witness, key=self.where))
        sure = definite and self.certain(ordered)
        return Anomaly(name, sure, ordered[0].run, call, why, ordered)

    def ordered(self, found: Iterable[Anomaly]) -> tuple[Anomaly, ...]:
        """Anomalies in the order of their witness's first event (ties keep the order found)."""
        return tuple(sorted(found, key=lambda anomaly: self.where(anomaly.witness[0])))

    def after(self, event: Event) -> tuple[Event, ...]:
        """The history's events after `event`, in order."""
        return self.history.events[self.where(event) + 1 :]


def label(effect: Event) -> str:
    """How the words name an effect: the receiver's ID, else its place in the history."""
    return effect.effect_id or f"event {effect.seq}"


def statuses_of(run: str, events: Iterable[Event]) -> tuple[Event, ...]:
    """The `run_status` events among `events` that are of `run` or of run "" (a status of no known run)."""
    return tuple(e for e in events if e.f == "run_status" and e.run in (run, ""))


def _attempts(events: Sequence[Event]) -> tuple[Attempt, ...]:
    """Each `tool_run` attempt, in the order it began (spec/HISTORY.md 1)."""
    begun: list[list[Event]] = []
    open_: dict[tuple[str, int, str], list[list[Event]]] = {}
    for event in events:
        if event.f != "tool_run":
            continue
        where = (event.run, event.incarnation, event.call)
        if event.type == "invoke":
            attempt = [event]
            begun.append(attempt)
            open_.setdefault(where, []).append(attempt)
        elif event.type in _ENDS:
            waiting = open_.get(where)
            if waiting:
                waiting.pop(0).append(event)
            else:
                begun.append([event])
    return tuple(_attempt(attempt) for attempt in begun)


def _attempt(events: list[Event]) -> Attempt:
    last = events[-1]
    outcome = last.type if last.type in ("ok", "fail") else UNKNOWN
    key = next((e.key for e in events if e.key), "")
    return Attempt(last.call, last.run, last.incarnation, key, tuple(events), outcome)


def _writes(history: History, by_call: Mapping[str, tuple[Event, ...]]) -> tuple[str, ...]:
    """The calls that are writes (spec/HISTORY.md 8): expected, gated, with an effect, then by their tool."""
    applied = [e.call for e in history.events if e.f == "effect" and e.call]
    if not history.expected and not history.gated and not applied:
        return tuple(by_call)
    named = dict.fromkeys((*history.expected, *history.gated, *applied))
    tools = {e.tool for call in named for e in by_call.get(call, ()) if e.tool}
    more = [call for call, events in by_call.items() if any(e.tool in tools for e in events if e.tool)]
    return tuple(dict.fromkeys((*named, *more)))
