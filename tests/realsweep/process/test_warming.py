"""warming: the warm-ups a swept program's imports register for the zygote, each once, in order."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crashsweep.realsweep.process import warming


@pytest.fixture
def empty() -> Iterator[None]:
    """No warm-up registered during the test; those registered before are back after it."""
    kept = list(warming.WARMERS)
    warming.WARMERS.clear()
    yield
    warming.WARMERS[:] = kept


def test_a_warm_up_is_registered_once_and_given_back(empty: None) -> None:
    """register() returns its argument (usable as a decorator); a second registration adds nothing."""
    calls: list[list[str]] = []

    def first(argv: list[str]) -> None:
        calls.append(argv)

    def second(argv: list[str]) -> None:
        calls.append([*argv, "again"])

    assert warming.register(first) is first
    warming.register(second)
    warming.register(first)
    assert [first, second] == warming.WARMERS
    for warm in warming.WARMERS:
        warm(["x"])
    assert calls == [["x"], ["x", "again"]]
