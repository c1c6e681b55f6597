"""Persistent lists built one item at a time: a cell is (the cell before it, its item); None is empty.

A new item shares every earlier cell, so extending a list costs the same at any length: a
snapshot's turns before the last (memory.py) and a tracker's records and keys (records.py)
are kept this way. Two such lists are compared by walking back from their newest cells until
they share one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Cells", "same", "unroll"]

Cells = tuple[Any, Any] | None
"""A list's newest cell: (the cell before, the item), None for the empty list."""


def unroll(cells: Cells, count: int) -> tuple[Any, ...]:
    """The `count` items of a list, oldest first."""
    items: list[Any] = [None] * count
    for position in range(count - 1, -1, -1):
        assert cells is not None
        cells, items[position] = cells
    return tuple(items)


def same(one: Cells, other: Cells) -> bool:
    """Whether two lists of equal length hold equal items, walking back until they share a cell."""
    while one is not other:
        if one is None or other is None or one[1] != other[1]:
            return False
        one, other = one[0], other[0]
    return True
