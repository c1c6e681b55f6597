"""What of a world its future can observe: the state key the explorer merges worlds by.

The rules are in SEMANTICS.md (section 11, the state key). In short, a world's key is the
world with two things left out that no step, crash point, counter, property or measure ever
reads:
- the tools' answers: a record's number ("#3") reaches memory, a checkpoint or an
  instruction still to run, but the loop only ever asks whether a call has a result;
- the tracker's order: of its records the key keeps the (call, run) pairs it holds and how
  many records are extra beyond the first of each pair, and of its keys the set it holds.
A duplicate shifts every later answer and record, so without the key each crash point
starts a tail of states that never meets another; with it, tails with the same figures meet.

Keys are built incrementally, so a step costs the same at any length of the job:
- a turn's shape is a small tuple, one shared object per value;
- the turns before the last are a `Chain` folded from the snapshot's predecessor
  (`Snapshot._from`); equal sequences folded from the same chain are one object;
- the tracker's pairs and keys are `Members`, folded along its logs, remembered per log cell.
Sharing only saves time: equality is exact whatever was shared (tables start afresh past a
bound, and a set reached by two insertion orders compares its members).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from crashsweep.spec.memory import Snapshot, Turn
from crashsweep.spec.ops import CallModel, Op, Ops, Store
from crashsweep.spec.records import Log, Tracker
from crashsweep.spec.running import Process
from crashsweep.spec.world import NO_SECOND, Checkpoint, World

__all__ = ["Chain", "Members", "world_key"]

_LIMIT = 1 << 18
"""Entries a table keeps before it starts afresh: sharing saves time, it never changes a key."""
_MASK = (1 << 64) - 1
K = TypeVar("K")
V = TypeVar("V")


class _ByIdentity(Generic[K, V]):
    """Values remembered by their object's identity; an entry keeps its object alive, so an id stays its own."""

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[int, tuple[K, V]] = {}

    def find(self, key: K) -> tuple[K, V] | None:
        """(key, its value) if remembered, else None."""
        entry = self._table.get(id(key))
        return entry if entry is not None and entry[0] is key else None

    def keep(self, key: K, value: V) -> None:
        """Remember `value` for `key` (the table starts afresh past a bound)."""
        if len(self._table) >= _LIMIT:
            self._table.clear()
        self._table[id(key)] = (key, value)


class Chain:
    """A sequence built one item at a time: `parent` (None: the empty sequence), then `item`."""

    __slots__ = ("_hash", "item", "parent")
    _hash: int

    def __init__(self, parent: Chain | None, item: Hashable) -> None:
        self.parent, self.item = parent, item
        self._hash = hash((None if parent is None else parent._hash, item))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chain):
            return NotImplemented
        one: Chain | None = self
        two: Chain | None = other
        while one is not two:
            if one is None or two is None or one._hash != two._hash or one.item != two.item:
                return False
            one, two = one.parent, two.parent
        return True

    def __hash__(self) -> int:
        return self._hash


class Members:
    """A set built one member at a time; equal to any set with the same members, in any order."""

    __slots__ = ("fold", "item", "parent", "size")
    fold: int
    size: int

    def __init__(self, parent: Members | None, item: Hashable) -> None:
        self.parent, self.item = parent, item
        self.size = 1 if parent is None else parent.size + 1
        self.fold = ((0 if parent is None else parent.fold) + hash(item)) & _MASK  # order-free

    def __iter__(self) -> Iterator[Hashable]:
        members: Members | None = self
        while members is not None:
            yield members.item
            members = members.parent

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Members):
            return NotImplemented
        return self.size == other.size and self.fold == other.fold and frozenset(self) == frozenset(other)

    def __hash__(self) -> int:
        return hash((self.size, self.fold))


_CHAINS: dict[tuple[int, Hashable], Chain] = {}
_MEMBERS: dict[tuple[int, Hashable], Members] = {}


class _Cell(Protocol):
    """A chain or a set: a value made from its parent and one item."""

    @property
    def parent(self) -> object: ...


C = TypeVar("C", bound=_Cell)


def _shared(table: dict[tuple[int, Hashable], C], parent: C | None, item: Hashable, make: Callable[[], C]) -> C:
    """The one value made from `parent` and `item` (the entry keeps `parent` alive: its id stays its own)."""
    known = table.get((id(parent), item))
    if known is not None and known.parent is parent:
        return known
    if len(table) >= _LIMIT:
        table.clear()
    made = table[id(parent), item] = make()
    return made


def _then(chain: Chain | None, item: Hashable) -> Chain:
    """The shared chain `chain` then `item`."""
    return _shared(_CHAINS, chain, item, lambda: Chain(chain, item))


def _with(members: Members | None, item: Hashable) -> Members:
    """The shared set `members` with `item` added (an item not in it)."""
    return _shared(_MEMBERS, members, item, lambda: Members(members, item))


# --- memory: turns with their answers left out ---

_SHAPES: dict[tuple[Any, ...], tuple[Any, ...]] = {}
"""A turn's shape -> the one object of its value (tuples compare by identity first)."""


def turn_shape(turn: Turn) -> tuple[Any, ...]:
    """The turn with its answers left out: which calls have a result, and the rest as it is."""
    calls = tuple(call for call, _ in turn.results)
    shape = (turn.index, calls, turn.marked, turn.complete, turn.approved, turn.failed, turn.ids)
    known = _SHAPES.get(shape)
    if known is None:
        if len(_SHAPES) >= _LIMIT:
            _SHAPES.clear()
        known = _SHAPES[shape] = shape
    return known


_PREFIXES: _ByIdentity[tuple[Turn, ...], Chain | None] = _ByIdentity()
"""A snapshot's prefix -> the chain of its turns' shapes."""


def prefix_chain(snapshot: Snapshot) -> Chain | None:
    """The shapes of the snapshot's turns before the last, as a chain (None: no such turn)."""
    back: list[Snapshot] = []  # snapshots whose prefix is not known yet, newest first
    here: Snapshot | None = snapshot
    chain: Chain | None = None
    while here is not None:
        known = _PREFIXES.find(here._prefix)
        if known is not None:
            chain = known[1]
            break
        base = here._from
        if base is None:  # built whole: fold its prefix turn by turn
            for turn in here._prefix:
                chain = _then(chain, turn_shape(turn))
            _PREFIXES.keep(here._prefix, chain)
            break
        back.append(here)
        here = base
    for later in reversed(back):
        base = later._from
        assert base is not None
        assert base._last is not None
        chain = _then(chain, turn_shape(base._last))
        _PREFIXES.keep(later._prefix, chain)
    return chain


_SNAPSHOTS: _ByIdentity[Snapshot, Hashable] = _ByIdentity()
"""A snapshot -> its shape: a checkpoint's lasts many steps."""


def snapshot_shape(snapshot: Snapshot | None) -> Hashable:
    """The snapshot with its answers left out (None for no snapshot)."""
    if snapshot is None:
        return None
    known = _SNAPSHOTS.find(snapshot)
    if known is not None:
        return known[1]
    last = snapshot._last
    shape = (snapshot.run, snapshot.done, prefix_chain(snapshot), None if last is None else turn_shape(last))
    _SNAPSHOTS.keep(snapshot, shape)
    return shape


# --- instructions still to run: a Store's answer left out ---

_PROGRAMS: _ByIdentity[Ops, Ops] = _ByIdentity()
"""A (shared) program -> its shape."""


def program_shape(program: Ops) -> Ops:
    """The program with every Store's answer left out (nested ones too)."""
    known = _PROGRAMS.find(program)
    if known is not None:
        return known[1]
    shape = tuple(_op_shape(op) for op in program)
    _PROGRAMS.keep(program, shape)
    return shape


def _op_shape(op: Op) -> Op:
    if isinstance(op, Store):
        return Store(op.call, "")
    if isinstance(op, CallModel):
        return CallModel(tuple(map(_op_shape, op.after_reply)), tuple(map(_op_shape, op.after_final)))
    return op


def process_shape(process: Process | None) -> Hashable:
    """The process with its answers left out (None for no process)."""
    if process is None:
        return None
    return (snapshot_shape(process.memory), program_shape(process.pending), process.point)


# --- the tracker: the pairs it holds, the extra records, the keys it holds ---

_SUPPORT: _ByIdentity[Log, Members | None] = _ByIdentity()
"""A record log's cell -> the (call, run) pairs up to it."""
_KEYS: _ByIdentity[Log, Members | None] = _ByIdentity()
"""A key log's cell -> the keys up to it."""
_TRACKERS: _ByIdentity[Tracker, Hashable] = _ByIdentity()
"""A tracker -> its shape: a tracker lasts from one write to the next."""


def tracker_shape(tracker: Tracker) -> Hashable:
    """(the (call, run) pairs held, the records beyond the first of each pair, the keys held)."""
    known = _TRACKERS.find(tracker)
    if known is not None:
        return known[1]
    pairs = _folded(tracker._record_log, tracker.size, _SUPPORT, tracker)
    extra = tracker.size - (0 if pairs is None else pairs.size)
    keys = _folded(tracker._key_log, tracker._keys_size, _KEYS, None)
    shape = (pairs, extra, keys)
    _TRACKERS.keep(tracker, shape)
    return shape


def _folded(log: Log, size: int, table: _ByIdentity[Log, Members | None], firsts: Tracker | None) -> Members | None:
    """The members up to `log`'s newest cell, folding only the cells not seen before.

    With `firsts` (the tracker whose record log this is) a cell adds its record only where it
    is the first record of its pair; without, every cell adds its key (a key log holds a key
    once: a held key is never sent on).
    """
    back: list[tuple[Log, int]] = []
    members: Members | None = None
    position = size
    while log is not None:
        known = table.find(log)
        if known is not None:
            members = known[1]
            break
        back.append((log, position))
        log, position = log[0], position - 1
    for cell, number in reversed(back):
        assert cell is not None
        item = cell[1]
        if firsts is None:
            members = _with(members, item[0])
        elif firsts._first[item] == number:
            members = _with(members, item)
        table.keep(cell, members)
    return members


# --- the world ---


def checkpoint_shape(checkpoint: Checkpoint | None) -> Hashable:
    """The checkpoint (and what a power cut would leave) with the answers left out."""
    if checkpoint is None:
        return None
    return (
        snapshot_shape(checkpoint.committed),
        snapshot_shape(checkpoint.tmp),
        checkpoint.torn,
        checkpoint_shape(checkpoint.at_cut),
    )


def world_key(world: World) -> Hashable:
    """What of `world` its future can observe (SEMANTICS.md section 11): worlds with equal keys are one node."""
    second = world.second
    others: Hashable = None
    if second is not NO_SECOND and second != NO_SECOND:
        others = (process_shape(second.other), second.woken, second.token, second.other_token, second.fence)
    return (
        checkpoint_shape(world.checkpoint),
        tracker_shape(world.tracker),
        process_shape(world.process),
        world.finished,
        world.runs,
        world.lock,
        world.struck,
        world.replies,
        others,
    )
