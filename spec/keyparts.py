"""The parts the state key (spec/key.py) is built from: sequences and sets made one item at a time.

A key is rebuilt for every world a search reaches, and most of a world is its predecessor's,
so the key's growing parts are built the same way: a `Chain` (a sequence) or a `Members` (a
set) is its parent and one more item, and a table (`shared`) hands out one object per
(parent, item), so equal parts reached twice are mostly the same object. Sharing only saves
time: equality is exact whatever was shared (a set reached by two insertion orders compares
its members; tables start afresh past a bound).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["LIMIT", "ByIdentity", "Chain", "Hashed", "Members", "fold", "shared"]

LIMIT = 1 << 18
"""Entries a table keeps before it starts afresh: sharing saves time, it never changes a key."""
_MASK = (1 << 64) - 1
K = TypeVar("K")
V = TypeVar("V")


class ByIdentity(Generic[K, V]):
    """Values remembered by their object's identity; an entry keeps its object alive, so an id stays its own."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict[int, tuple[K, V]] = {}
        """id(key) -> (key, value); a hot caller reads it directly (the entry is its key's if entry[0] is key)."""

    def find(self, key: K) -> tuple[K, V] | None:
        """(key, its value) if remembered, else None."""
        entry = self.table.get(id(key))
        return entry if entry is not None and entry[0] is key else None

    def keep(self, key: K, value: V) -> None:
        """Remember `value` for `key` (the table starts afresh past a bound)."""
        if len(self.table) >= LIMIT:
            self.table.clear()
        self.table[id(key)] = (key, value)


def fold(table: ByIdentity[Any, V], cells: Any, size: int, empty: V, step: Callable[[V, Any, int], V]) -> V:
    """`step` folded over a list of cells (spec/cells.py) of `size` items, oldest first, from `empty`.

    Only the cells newer than the newest one `table` remembers are folded (`step(value, item,
    its position from 1)`), each remembered in turn: a list grows by a cell a step, so a fold
    costs the same at any length.
    """
    back: list[tuple[Any, int]] = []
    value = empty
    while cells is not None:
        known = table.find(cells)
        if known is not None:
            value = known[1]
            break
        back.append((cells, size))
        cells, size = cells[0], size - 1
    for cell, position in reversed(back):
        value = step(value, cell[1], position)
        table.keep(cell, value)
    return value


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


class Hashed:
    """A tuple hashed once, when made: a part of many keys (a program's shape), hashed at every probe of one.

    A tuple hashes its items again each time it is hashed (an instruction's hash is a call);
    this keeps the hash. Equal to a Hashed of an equal tuple, the hashes compared first.
    """

    __slots__ = ("_hash", "items")

    def __init__(self, items: tuple[Any, ...], hashed: int | None = None) -> None:
        self.items = items
        self._hash = hash(items) if hashed is None else hashed  # `hashed`: the caller's hash(items), kept

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Hashed):
            return NotImplemented
        return self._hash == other._hash and self.items == other.items

    def __hash__(self) -> int:
        return self._hash


class _Cell(Protocol):
    """A chain or a set: a value made from its parent and one item."""

    @property
    def parent(self) -> object: ...


C = TypeVar("C", bound=_Cell)


def shared(table: dict[tuple[int, Hashable], C], parent: C | None, item: Hashable, make: Callable[[], C]) -> C:
    """The one value made from `parent` and `item` (the entry keeps `parent` alive: its id stays its own)."""
    known = table.get((id(parent), item))
    if known is not None and known.parent is parent:
        return known
    if len(table) >= LIMIT:
        table.clear()
    made = table[id(parent), item] = make()
    return made
