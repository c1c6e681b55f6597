"""The tracker's state: its records and remembered keys, as persistent logs with indexes.

`crashsweep.spec.world` re-exports `Record` and `Tracker`: the world holds a tracker, and the tracker is
part of every state the explorer stores. A tracker is equal to another when its `records` and
`keys` tuples are, as for any frozen dataclass; underneath, a tracker made by `appended`
shares everything with the tracker it was made from:

- the records and the keys are logs of cons cells (parent, item), so adding one record adds
  one cell, whatever the length; the tuples are put together when they are read;
- persistent maps (`immutables.Map`) index the count of records per call, the first record
  per (call, run) and the first answer per key, so counting, finding and answering are
  lookups; `duplicated` counts the calls with more than one record;
- the hash folds the records and the keys one by one, carried forward from the parent.

Equality walks the two logs back only until they meet in a shared cell, so two trackers that
differ in their last few records compare in the time of those few.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# A persistent hash map (a HAMT in C): a tracker's successor shares all but one path of its
# parent's indexes instead of copying them, so indexing a record costs the same at any size.
from immutables import Map

from crashsweep.spec.cells import same, unroll

Log = tuple[Any, Any] | None
"""A cons cell (earlier log, item), or None for the empty log."""


@dataclass(frozen=True, slots=True)
class Record:
    """One write the tracker applied, tagged with the call and the run it came from."""

    call: str
    run: str


@dataclass(frozen=True, slots=True, eq=False)
class Tracker:
    """The outside world: applied writes in order, and remembered key -> first answer."""

    records: tuple[Record, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    _record_log: Log = field(init=False, repr=False, compare=False, default=None)
    _key_log: Log = field(init=False, repr=False, compare=False, default=None)
    size: int = field(init=False, repr=False, compare=False, default=0)
    """How many records (len(records), without putting them together)."""
    _keys_size: int = field(init=False, repr=False, compare=False, default=0)
    _counts: Map[str, int] = field(init=False, repr=False, compare=False, default=Map())
    _first: Map[Record, int] = field(init=False, repr=False, compare=False, default=Map())
    _answers: Map[str, str] = field(init=False, repr=False, compare=False, default=Map())
    duplicated: int = field(init=False, repr=False, compare=False, default=0)
    """How many calls have more than one record."""
    _folds: tuple[int, int] = field(init=False, repr=False, compare=False, default=(0, 0))
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        built = _EMPTY if _EMPTY is not None else _start(self)
        for record in self.records:
            built = built.appended(record)
        for known, answer in self.keys:
            built = built._remember(known, answer)
        for name in _DERIVED:
            object.__setattr__(self, name, getattr(built, name))

    def __getattr__(self, name: str) -> tuple[Any, ...]:
        # Called only for a slot never set: `records` or `keys` of a tracker made by `appended`.
        if name == "records":
            return unroll(self._record_log, self.size)
        if name == "keys":
            return unroll(self._key_log, self._keys_size)
        raise AttributeError(f"'Tracker' object has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Tracker):
            return NotImplemented
        return (
            self._hash == other._hash
            and self.size == other.size
            and self._keys_size == other._keys_size
            and same(self._record_log, other._record_log)
            and same(self._key_log, other._key_log)
        )

    def __hash__(self) -> int:
        return self._hash

    @property
    def repeats(self) -> int:
        """The records beyond the first of each call (`metrics.dups` when every record is of a job's write)."""
        return self.size - len(self._counts)

    def answer_for(self, key: str) -> str | None:
        """The first answer stored under `key`, or None."""
        return self._answers.get(key)

    def count(self, call: str) -> int:
        """How many records `call` has, over every run."""
        return self._counts.get(call, 0)

    def find(self, call: str, run: str) -> str | None:
        """The answer of the first record of `call` in `run` (e.g. "#2"), or None."""
        number = self._first.get(Record(call, run))
        return None if number is None else f"#{number}"

    def appended(self, record: Record, key: str | None = None, answer: str | None = None) -> Tracker:
        """This tracker with `record` applied and, if given, `key` remembered with `answer`."""
        record = _shared(record)  # one object per value: logs compare by identity first
        number = self.size + 1
        count = self._counts.get(record.call, 0)
        tracker = _copy(self)
        _set(tracker, "_record_log", (self._record_log, record))
        _set(tracker, "size", number)
        _set(tracker, "_counts", self._counts.set(record.call, count + 1))
        if record not in self._first:
            _set(tracker, "_first", self._first.set(record, number))
        _set(tracker, "duplicated", self.duplicated + (count == 1))
        keys_fold = self._folds[1]
        if key is not None and answer is not None:
            # The key goes into the same new tracker: one object per request, not two.
            keys_fold = _add_key(tracker, self, key, answer)
        folds = (hash((self._folds[0], record.call, record.run)), keys_fold)
        _set(tracker, "_folds", folds)
        _set(tracker, "_hash", hash(folds))
        return tracker

    def _remember(self, key: str, answer: str) -> Tracker:
        """This tracker with (key, answer) added to the keys (a key keeps its first answer)."""
        tracker = _copy(self)
        folds = (self._folds[0], _add_key(tracker, self, key, answer))
        _set(tracker, "_folds", folds)
        _set(tracker, "_hash", hash(folds))
        return tracker


def _add_key(tracker: Tracker, parent: Tracker, key: str, answer: str) -> int:
    """Set `tracker`'s key log and answers to `parent`'s with (key, answer) added; return the keys' fold."""
    _set(tracker, "_key_log", (parent._key_log, (key, answer)))
    _set(tracker, "_keys_size", parent._keys_size + 1)
    if key not in parent._answers:
        _set(tracker, "_answers", parent._answers.set(key, answer))
    return hash((parent._folds[1], key, answer))


_DERIVED = (
    "_record_log",
    "_key_log",
    "size",
    "_keys_size",
    "_counts",
    "_first",
    "_answers",
    "duplicated",
    "_folds",
    "_hash",
)
_EMPTY: Tracker | None = None
_RECORDS: dict[Record, Record] = {}
_set = object.__setattr__


def _shared(record: Record) -> Record:
    """The one Record object equal to `record` (the table starts afresh past 2**18 entries)."""
    known = _RECORDS.get(record)
    if known is None:
        if len(_RECORDS) >= 1 << 18:
            _RECORDS.clear()
        known = _RECORDS[record] = record
    return known


def _start(tracker: Tracker) -> Tracker:
    """Make `tracker` the empty tracker (once, when the module is loaded)."""
    for name, value in (("_counts", Map()), ("_first", Map()), ("_answers", Map()), ("_folds", (0, 0))):
        _set(tracker, name, value)
    _set(tracker, "_record_log", None)
    _set(tracker, "_key_log", None)
    _set(tracker, "size", 0)
    _set(tracker, "_keys_size", 0)
    _set(tracker, "duplicated", 0)
    _set(tracker, "_hash", hash((0, 0)))
    return tracker


def _copy(tracker: Tracker) -> Tracker:
    """A new tracker with `tracker`'s derived fields; `records` and `keys` left unset (read from the logs)."""
    made = object.__new__(Tracker)
    for name in _DERIVED:
        _set(made, name, getattr(tracker, name))
    return made


_EMPTY = Tracker()
