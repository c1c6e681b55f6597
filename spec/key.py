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
The tables that share these parts belong to one `WorldKeys`, which a search holds while it
runs: nothing of a finished search stays behind. Sharing only saves time: equality is exact
whatever was shared (tables start afresh past a bound, keys of two tables compare by value,
and a set reached by two insertion orders compares its members).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from crashsweep.spec.memory import Snapshot, Turn
from crashsweep.spec.ops import CallModel, Op, Ops, Store
from crashsweep.spec.records import Log, Tracker
from crashsweep.spec.running import Process
from crashsweep.spec.world import NO_SECOND, Checkpoint, World

__all__ = ["Chain", "Members", "WorldKeys", "world_key"]

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


def _op_shape(op: Op) -> Op:
    """The instruction with a Store's answer left out (nested ones too)."""
    if isinstance(op, Store):
        return Store(op.call, "", op.again)
    if isinstance(op, CallModel):
        return CallModel(tuple(map(_op_shape, op.after_reply)), tuple(map(_op_shape, op.after_final)))
    return op


def world_key(world: World) -> Hashable:
    """The key of one world on its own (tables of its own; a search keeps one `WorldKeys` for all its worlds)."""
    return WorldKeys()(world)


class WorldKeys:
    """The state key of one search's worlds, and the tables that share the key's parts among them.

    A search makes one (LoopModel.key) and calls it on every world it reaches; the tables live
    as long as the search needs them, so nothing of a finished search stays behind in the module.
    """

    __slots__ = (
        "_chains",
        "_keys",
        "_members",
        "_prefixes",
        "_programs",
        "_shapes",
        "_snapshots",
        "_support",
        "_trackers",
    )

    def __init__(self) -> None:
        self._chains: dict[tuple[int, Hashable], Chain] = {}
        self._members: dict[tuple[int, Hashable], Members] = {}
        self._shapes: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        """A turn's shape -> the one object of its value (tuples compare by identity first)."""
        self._prefixes: _ByIdentity[tuple[Turn, ...], Chain | None] = _ByIdentity()
        """A snapshot's prefix -> the chain of its turns' shapes."""
        self._snapshots: _ByIdentity[Snapshot, Hashable] = _ByIdentity()
        """A snapshot -> its shape: a checkpoint's lasts many steps."""
        self._programs: _ByIdentity[Ops, Ops] = _ByIdentity()
        """A (shared) program -> its shape."""
        self._support: _ByIdentity[Log, Members | None] = _ByIdentity()
        """A record log's cell -> the (call, run) pairs up to it."""
        self._keys: _ByIdentity[Log, Members | None] = _ByIdentity()
        """A key log's cell -> the keys up to it."""
        self._trackers: _ByIdentity[Tracker, Hashable] = _ByIdentity()
        """A tracker -> its shape: a tracker lasts from one write to the next."""

    def __call__(self, world: World) -> Hashable:
        """What of `world` its future can observe (SEMANTICS.md section 11): worlds with equal keys are one node."""
        second = world.second
        others: Hashable = None
        if second is not NO_SECOND and second != NO_SECOND:
            others = (self.process(second.other), second.woken, second.token, second.other_token, second.fence)
        return (
            self.checkpoint(world.checkpoint),
            self.tracker(world.tracker),
            self.process(world.process),
            world.finished,
            world.runs,
            world.lock,
            world.struck,
            world.replies,
            others,
        )

    # --- memory: turns with their answers left out ---

    def turn(self, turn: Turn) -> tuple[Any, ...]:
        """The turn with its answers left out: which calls have a result, and the rest as it is."""
        calls = tuple(call for call, _ in turn.results)
        shape = (turn.index, calls, turn.marked, turn.complete, turn.approved, turn.failed, turn.ids, turn.args)
        shapes = self._shapes
        known = shapes.get(shape)
        if known is None:
            if len(shapes) >= _LIMIT:
                shapes.clear()
            known = shapes[shape] = shape
        return known

    def _then(self, chain: Chain | None, item: Hashable) -> Chain:
        """The shared chain `chain` then `item`."""
        return _shared(self._chains, chain, item, lambda: Chain(chain, item))

    def _with(self, members: Members | None, item: Hashable) -> Members:
        """The shared set `members` with `item` added (an item not in it)."""
        return _shared(self._members, members, item, lambda: Members(members, item))

    def prefix(self, snapshot: Snapshot) -> Chain | None:
        """The shapes of the snapshot's turns before the last, as a chain (None: no such turn)."""
        back: list[Snapshot] = []  # snapshots whose prefix is not known yet, newest first
        here: Snapshot | None = snapshot
        chain: Chain | None = None
        while here is not None:
            known = self._prefixes.find(here._prefix)
            if known is not None:
                chain = known[1]
                break
            base = here._from
            if base is None:  # built whole: fold its prefix turn by turn
                for turn in here._prefix:
                    chain = self._then(chain, self.turn(turn))
                self._prefixes.keep(here._prefix, chain)
                break
            back.append(here)
            here = base
        for later in reversed(back):
            base = later._from
            assert base is not None
            assert base._last is not None
            chain = self._then(chain, self.turn(base._last))
            self._prefixes.keep(later._prefix, chain)
        return chain

    def snapshot(self, snapshot: Snapshot | None) -> Hashable:
        """The snapshot with its answers left out (None for no snapshot)."""
        if snapshot is None:
            return None
        known = self._snapshots.find(snapshot)
        if known is not None:
            return known[1]
        last = snapshot._last
        shape = (snapshot.run, snapshot.done, self.prefix(snapshot), None if last is None else self.turn(last))
        self._snapshots.keep(snapshot, shape)
        return shape

    # --- instructions still to run: a Store's answer left out ---

    def program(self, program: Ops) -> Ops:
        """The program with every Store's answer left out (nested ones too)."""
        known = self._programs.find(program)
        if known is not None:
            return known[1]
        shape = tuple(_op_shape(op) for op in program)
        self._programs.keep(program, shape)
        return shape

    def process(self, process: Process | None) -> Hashable:
        """The process with its answers left out (None for no process)."""
        if process is None:
            return None
        return (self.snapshot(process.memory), self.program(process.pending), process.point)

    # --- the tracker: the pairs it holds, the extra records, the keys it holds ---

    def tracker(self, tracker: Tracker) -> Hashable:
        """(the (call, run) pairs held, the records beyond the first of each pair, the keys held)."""
        known = self._trackers.find(tracker)
        if known is not None:
            return known[1]
        pairs = self._folded(tracker._record_log, tracker.size, self._support, tracker)
        extra = tracker.size - (0 if pairs is None else pairs.size)
        keys = self._folded(tracker._key_log, tracker._keys_size, self._keys, None)
        shape = (pairs, extra, keys)
        self._trackers.keep(tracker, shape)
        return shape

    def _folded(
        self, log: Log, size: int, table: _ByIdentity[Log, Members | None], firsts: Tracker | None
    ) -> Members | None:
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
                members = self._with(members, item[0])
            elif firsts._first[item] == number:
                members = self._with(members, item)
            table.keep(cell, members)
        return members

    # --- the world ---

    def checkpoint(self, checkpoint: Checkpoint | None) -> Hashable:
        """The checkpoint (and what a power cut would leave) with the answers left out."""
        if checkpoint is None:
            return None
        return (
            self.snapshot(checkpoint.committed),
            self.snapshot(checkpoint.tmp),
            checkpoint.torn,
            self.checkpoint(checkpoint.at_cut),
        )
