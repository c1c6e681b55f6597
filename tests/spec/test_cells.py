"""cells: persistent lists, unrolled oldest first and compared by walking back to a shared cell."""

from __future__ import annotations

from crashsweep.spec.cells import Cells, same, unroll


def built(*items: object, on: Cells = None) -> Cells:
    """The list `on` with `items` added, oldest first."""
    cells = on
    for item in items:
        cells = (cells, item)
    return cells


def test_unroll_gives_the_items_oldest_first() -> None:
    assert unroll(built("a", "b", "c"), 3) == ("a", "b", "c")
    assert unroll(None, 0) == ()


def test_lists_are_the_same_when_their_items_are_whether_or_not_they_share_cells() -> None:
    shared = built("a", "b")
    assert same(built("c", on=shared), built("c", on=shared))
    assert same(built("a", "b", "c"), built("c", on=shared))
    assert not same(built("a", "x", "c"), built("c", on=shared))
    assert not same(built("a", "b", "d"), built("c", on=shared))
