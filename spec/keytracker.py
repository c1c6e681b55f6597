"""The tracker's part of the state key (spec/key.py; SEMANTICS.md section 11, rules 2 and 3).

Of a tracker the key keeps what the rules read: the (call, run) pairs with a record, whether
some call has more than one record, and the keys held. Under rule 3 (run IDs named by their
age) the pairs are kept per run, as each run's calls, and each key as the run and the name it
was derived from, so that the key can name every run by its age. Both are folded along the
tracker's logs and remembered per log cell, so a step costs the same at any length of the job.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from crashsweep.spec import keys as idempotency
from crashsweep.spec.keyparts import LIMIT, ByIdentity, Members, fold
from crashsweep.spec.records import Log, Record, Tracker

__all__ = ["TrackerKeys"]

Groups = tuple[tuple[str, Members], ...]
"""Per run (in the order of their IDs' text): the members of that run (calls with a record, or key names)."""
Facts = tuple[Members | None, Groups, frozenset[str]]
"""Of a record log up to a cell: its (call, run) pairs, its calls per run, its runs."""
_NO_FACTS: Facts = (None, (), frozenset())
_NamesHeld = tuple[Groups, Members | None]
"""Of a key log up to a cell: the names of its keys per run, and the digests of no known name."""
_DERIVE = idempotency.key.__wrapped__
"""Key(run, name) without its cache: the table of names fills it with no pairs the steps ask for."""


class TrackerKeys:
    """The tracker's shapes for one search, and the tables that remember them per log cell and per tracker."""

    __slots__ = ("_digests", "_keys", "_named", "_names", "_records", "_tracked", "_with")

    def __init__(self, names: Iterable[str], with_member: Callable[[Members | None, Hashable], Members]) -> None:
        self._names = tuple(dict.fromkeys(n for name in names for n in (name, f"{name}.retry")))
        self._with = with_member
        self._digests: dict[str, dict[str, str]] = {}
        """A run -> Key(run, name) -> name, for every name (made when a key of the run is first named)."""
        self._records: ByIdentity[Log, Facts] = ByIdentity()
        """A record log's cell -> the pairs, calls per run and runs up to it."""
        self._keys: ByIdentity[Log, Members | None] = ByIdentity()
        """A key log's cell -> the keys up to it."""
        self._named: ByIdentity[Log, _NamesHeld] = ByIdentity()
        """A key log's cell -> the names of the keys up to it, per run."""
        self._tracked: dict[int, list[Any]] = {}
        """id(tracker) -> [tracker, its records' runs, the count of runs aged for, that shape, the shape with IDs]."""

    def entry(self, tracker: Tracker) -> list[Any]:
        """The tracker's entry: [tracker, its records' runs, aged for, aged shape, shape with its IDs]."""
        entry = self._tracked.get(id(tracker))
        if entry is None or entry[0] is not tracker:
            entry = [tracker, self.facts(tracker)[2], None, None, None]
            if len(self._tracked) >= LIMIT:
                self._tracked.clear()
            self._tracked[id(tracker)] = entry
        return entry

    def exact(self, entry: list[Any]) -> Hashable:
        """(the (call, run) pairs held, whether some call has more than one record, the keys held)."""
        shape: Hashable = entry[4]
        if shape is None:
            tracker: Tracker = entry[0]
            shape = entry[4] = (self.facts(tracker)[0], tracker.duplicated > 0, self._folded(tracker._key_log))
        return shape

    def aged(self, entry: list[Any], age: Callable[[str], int]) -> Hashable:
        """(each run's age with its calls, a duplicate or not, each run's age with its key names, unnamed keys)."""
        tracker: Tracker = entry[0]
        groups, unnamed = self._names_held(tracker._key_log, entry[1])
        return (
            tuple(sorted((age(run), calls) for run, calls in self.facts(tracker)[1])),
            tracker.duplicated > 0,
            tuple(sorted((age(run), names) for run, names in groups)),
            unnamed,
        )

    def facts(self, tracker: Tracker) -> Facts:
        """The pairs, the calls per run and the runs of the tracker's records, folding new cells only."""
        first = tracker._first

        def step(facts: Facts, record: Record, number: int) -> Facts:
            pairs, groups, runs = facts
            if first[record] == number:  # the first record of its pair
                pairs = self._with(pairs, record)
                groups = self._grown(groups, record.run, record.call)
            if record.run not in runs:
                runs = runs | {record.run}
            return pairs, groups, runs

        return fold(self._records, tracker._record_log, tracker.size, _NO_FACTS, step)

    def _grown(self, groups: Groups, run: str, item: Hashable) -> Groups:
        """`groups` with `item` added to `run`'s members (a new group if the run has none)."""
        for place, (known, members) in enumerate(groups):
            if known == run:
                return (*groups[:place], (run, self._with(members, item)), *groups[place + 1 :])
        return tuple(sorted((*groups, (run, self._with(None, item)))))

    def _folded(self, log: Log) -> Members | None:
        """The keys up to `log`'s newest cell, folding only the cells not seen before (a key is held once)."""
        return fold(self._keys, log, 0, None, lambda members, item, _: self._with(members, item[0]))

    def _names_held(self, log: Log, runs: frozenset[str]) -> _NamesHeld:
        """The names the held keys were derived from, per run (a key's run is one of its tracker's `runs`)."""

        def step(held: _NamesHeld, item: Any, _: int) -> _NamesHeld:
            digest = item[0]
            groups, unnamed = held
            for run in sorted(runs):
                name = self._table(run).get(digest)
                if name is not None:
                    return self._grown(groups, run, name), unnamed
            return groups, self._with(unnamed, digest)

        return fold(self._named, log, 0, ((), None), step)

    def _table(self, run: str) -> dict[str, str]:
        """Key(run, name) -> name for every name a key may be derived from."""
        table = self._digests.get(run)
        if table is None:
            if len(self._digests) >= 64:
                self._digests.clear()
            table = self._digests[run] = {_DERIVE(run, name): name for name in self._names}
        return table
