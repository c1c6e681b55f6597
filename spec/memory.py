"""What a process holds in memory and saves: its turns (`Turn`) and the run's snapshot (`Snapshot`).

`crashsweep.spec.world` re-exports both: a process's memory, a checkpoint's committed file and its
temp file are snapshots. Both are frozen, slotted and hashable, hashed once when made. A step
changes the last turn, so `Snapshot.with_last` and `Snapshot.appended` keep the turns before the
last as one shared list of cells (spec/cells.py) whose hash is folded once, and make their
successor in constant time.
`make_turn` and the snapshot's own successors fill the slots directly (see the fast
constructors below); constructing either type directly gives an equal value with the same hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crashsweep.spec.cells import same, unroll

__all__ = ["Cells", "Snapshot", "Turn", "make_turn"]


@dataclass(frozen=True, slots=True, eq=False)
class Turn:
    """One tool turn as the loop holds it: results, markers, approvals, failures, completeness.

    Equal when every field but the kept hash is, as for the dataclass; the kept hashes are
    compared first, so two turns that differ mostly differ at once.
    """

    index: int
    results: tuple[tuple[str, str], ...] = ()
    marked: tuple[str, ...] = ()
    complete: bool = False
    approved: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    ids: str = ""
    """The suffix the model gave this reply's call IDs: "" when call IDs are stable (spec/FAULTS.md)."""
    args: int = 1
    """The version of the arguments the reply's calls carry: 1 unless `changed-args` struck (CONVERSATIONS.md 2)."""
    trimmed: int = 0
    """What `trim-context` left of the turn in the conversation (CONVERSATIONS.md 7): 0 all of it,
    1 its results without its reply (its calls), 2 nothing. The loop keeps the turn either way."""
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_hash",
            _turn_hash(
                self.index,
                self.results,
                self.marked,
                self.complete,
                self.approved,
                self.failed,
                self.ids,
                self.args,
                self.trimmed,
            ),
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Turn):
            return NotImplemented
        return (
            self._hash == other._hash
            and self.index == other.index
            and self.results == other.results
            and self.marked == other.marked
            and self.complete == other.complete
            and self.approved == other.approved
            and self.failed == other.failed
            and self.ids == other.ids
            and self.args == other.args
            and self.trimmed == other.trimmed
        )

    def __hash__(self) -> int:
        return self._hash

    def result(self, call: str) -> str | None:
        """The answer received for `call`, or None."""
        for done, answer in self.results:
            if done == call:
                return answer
        return None

    def with_result(self, call: str, answer: str) -> Turn:
        """This turn with `answer` recorded as the result of `call`."""
        results = (*self.results, (call, answer))
        return make_turn(
            self.index,
            results,
            self.marked,
            self.complete,
            self.approved,
            self.failed,
            self.ids,
            self.args,
            self.trimmed,
        )

    def with_marker(self, call: str) -> Turn:
        """This turn with an attempt marker for `call`."""
        if call in self.marked:
            return self
        marked = (*self.marked, call)
        return make_turn(
            self.index,
            self.results,
            marked,
            self.complete,
            self.approved,
            self.failed,
            self.ids,
            self.args,
            self.trimmed,
        )

    def without(self, calls: tuple[str, ...]) -> Turn:
        """This turn with `calls`' results, markers and failures forgotten (a node re-run, CONVERSATIONS.md 3)."""
        results = tuple(entry for entry in self.results if entry[0] not in calls)
        marked = tuple(call for call in self.marked if call not in calls)
        failed = tuple(call for call in self.failed if call not in calls)
        return make_turn(
            self.index, results, marked, self.complete, self.approved, failed, self.ids, self.args, self.trimmed
        )

    def with_approval(self, call: str) -> Turn:
        """This turn with approval entry `call` (a call ID, or `call@version#number`: CONVERSATIONS.md 2)."""
        if call in self.approved:
            return self
        approved = (*self.approved, call)
        return make_turn(
            self.index,
            self.results,
            self.marked,
            self.complete,
            approved,
            self.failed,
            self.ids,
            self.args,
            self.trimmed,
        )

    def with_failure(self, call: str) -> Turn:
        """This turn with `call`'s last attempt failed (a transport error, outcome unknown)."""
        if call in self.failed:
            return self
        failed = (*self.failed, call)
        return make_turn(
            self.index,
            self.results,
            self.marked,
            self.complete,
            self.approved,
            failed,
            self.ids,
            self.args,
            self.trimmed,
        )

    def completed(self) -> Turn:
        """This turn marked complete."""
        return make_turn(
            self.index, self.results, self.marked, True, self.approved, self.failed, self.ids, self.args, self.trimmed
        )

    def with_trim(self, trimmed: int) -> Turn:
        """This turn with `trimmed` as what the conversation keeps of it (CONVERSATIONS.md 7)."""
        return make_turn(
            self.index,
            self.results,
            self.marked,
            self.complete,
            self.approved,
            self.failed,
            self.ids,
            self.args,
            trimmed,
        )


Cells = tuple[Any, Turn] | None
"""A list of turns as cons cells: (earlier cells, turn), None for no turn."""


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    """The loop's state as a checkpoint file holds it: run ID, done flag, turns so far.

    A step changes only the last turn, so a snapshot keeps all its turns but the last as a
    list of cons cells (`_prefix`: (earlier cells, turn), None for none; `_count` of them),
    shared with the snapshots before and after it, and the last (`_last`); a new turn adds one
    cell, whatever the job's length (a tuple would be copied whole: quadratic in the turns),
    and `turns` is put together when it is read. The hash folds the turns one
    by one, `_earlier` being the fold of the prefix, so a successor that replaces or appends
    the last turn is made and hashed in constant time, whatever the job's length. Equality is
    that of (run, done, turns), as for the dataclass it is.
    """

    run: str
    done: bool = False
    turns: tuple[Turn, ...] = ()
    _prefix: Cells = field(init=False, repr=False, compare=False, default=None)
    _count: int = field(init=False, repr=False, compare=False, default=0)
    _last: Turn | None = field(init=False, repr=False, compare=False, default=None)
    _earlier: int = field(init=False, repr=False, compare=False, default=0)
    _hash: int = field(init=False, repr=False, compare=False, default=0)
    _from: Snapshot | None = field(init=False, repr=False, compare=False, default=None)
    """The snapshot whose turns are this one's prefix (set by `appended`, kept by the other
    successors, None for a snapshot built whole): the state key (spec/key.py) folds a prefix
    from its predecessor's in constant time."""

    def __post_init__(self) -> None:
        turns = self.turns
        earlier = 0
        for turn in turns[:-1]:
            earlier = hash((earlier, turn._hash))
        last = turns[-1] if turns else None
        prefix: Cells = None
        for turn in turns[:-1]:
            prefix = (prefix, turn)
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_count", max(0, len(turns) - 1))
        object.__setattr__(self, "_last", last)
        object.__setattr__(self, "_earlier", earlier)
        object.__setattr__(self, "_hash", _snapshot_hash(self.run, self.done, earlier, last))

    def __getattr__(self, name: str) -> tuple[Turn, ...]:
        # Called only for a slot never set: `turns` of a snapshot made by a successor method.
        if name != "turns":
            raise AttributeError(f"'Snapshot' object has no attribute {name!r}")
        last = self._last
        return () if last is None else (*unroll(self._prefix, self._count), last)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Snapshot):
            return NotImplemented
        return (
            self._hash == other._hash
            and self.run == other.run
            and self.done == other.done
            and self._count == other._count
            and self._last == other._last
            and same(self._prefix, other._prefix)
        )

    def __hash__(self) -> int:
        return self._hash

    @property
    def last(self) -> Turn | None:
        """The last turn, or None before the first reply."""
        return self._last

    @property
    def size(self) -> int:
        """How many turns the snapshot holds (len(turns), without putting them together)."""
        return self._count + (self._last is not None)

    def with_last(self, turn: Turn) -> Snapshot:
        """This snapshot with its last turn replaced."""
        return _snapshot(self.run, self.done, self._prefix, self._count, turn, self._earlier, self._from)

    def appended(self, turn: Turn) -> Snapshot:
        """This snapshot with `turn` added after the last."""
        last = self._last
        if last is None:
            return _snapshot(self.run, self.done, None, 0, turn, 0, None)
        earlier = hash((self._earlier, last._hash))
        return _snapshot(self.run, self.done, (self._prefix, last), self._count + 1, turn, earlier, self)

    def marked_done(self) -> Snapshot:
        """This snapshot with the run marked done."""
        return _snapshot(self.run, True, self._prefix, self._count, self._last, self._earlier, self._from)


def _snapshot_hash(run: str, done: bool, earlier: int, last: Turn | None) -> int:
    return hash((run, done, earlier, None if last is None else last._hash))


def _snapshot(
    run: str, done: bool, prefix: Cells, count: int, last: Turn | None, earlier: int, base: Snapshot | None
) -> Snapshot:
    """A Snapshot made without folding its turns again (`earlier` folds `prefix`); `turns` is left unset."""
    snapshot = _new(Snapshot)
    s_run, s_done, s_prefix, s_count, s_last, s_earlier, s_hash, s_from = _SNAPSHOT_SLOTS
    s_run(snapshot, run)
    s_done(snapshot, done)
    s_prefix(snapshot, prefix)
    s_count(snapshot, count)
    s_last(snapshot, last)
    s_earlier(snapshot, earlier)
    s_hash(snapshot, _snapshot_hash(run, done, earlier, last))
    s_from(snapshot, base)
    return snapshot


# Fast constructors. A frozen dataclass's __init__ sets each field through object.__setattr__,
# several times slower than the slots' own descriptors; the interpreter makes a turn or a
# snapshot most steps, so it uses these. Each gives a value equal to (and hashed like) the
# constructor's.
_new = object.__new__
_SNAPSHOT_SLOTS = tuple(
    getattr(Snapshot, name).__set__
    for name in ("run", "done", "_prefix", "_count", "_last", "_earlier", "_hash", "_from")
)
_TURN_SLOTS = tuple(
    getattr(Turn, name).__set__
    for name in ("index", "results", "marked", "complete", "approved", "failed", "ids", "args", "trimmed", "_hash")
)


def _turn_hash(
    index: int,
    results: tuple[tuple[str, str], ...],
    marked: tuple[str, ...],
    complete: bool,
    approved: tuple[str, ...],
    failed: tuple[str, ...],
    ids: str,
    args: int = 1,
    trimmed: int = 0,
) -> int:
    if trimmed:
        return hash((index, results, marked, complete, approved, failed, ids, args, trimmed))
    if args != 1:
        return hash((index, results, marked, complete, approved, failed, ids, args))
    return hash((index, results, marked, complete, approved, failed, ids))


def make_turn(
    index: int,
    results: tuple[tuple[str, str], ...],
    marked: tuple[str, ...],
    complete: bool,
    approved: tuple[str, ...],
    failed: tuple[str, ...],
    ids: str = "",
    args: int = 1,
    trimmed: int = 0,
) -> Turn:
    """Turn(index, results, marked, complete, approved, failed, ids, args, trimmed), made fast."""
    turn = _new(Turn)
    s_index, s_results, s_marked, s_complete, s_approved, s_failed, s_ids, s_args, s_trimmed, s_hash = _TURN_SLOTS
    s_index(turn, index)
    s_results(turn, results)
    s_marked(turn, marked)
    s_complete(turn, complete)
    s_approved(turn, approved)
    s_failed(turn, failed)
    s_ids(turn, ids)
    s_args(turn, args)
    s_trimmed(turn, trimmed)
    s_hash(turn, _turn_hash(index, results, marked, complete, approved, failed, ids, args, trimmed))
    return turn
