"""The worst scenario (explorer/worst.py): the longest path by a counter, checked on graphs counted by hand."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from crashsweep.explorer import explore
from crashsweep.explorer.model import Action, Property
from crashsweep.explorer.worst import most

STEP = Action("step", "go")
LONG = Action("step", "long way")
CRASH = Action("crash", "crash")


@dataclass(frozen=True)
class Diamond:
    """0 -> 1 by a short (cost 1) or long (cost 3) way, then 1 -> 2 (cost 2), finished; a crash at 1 ends at 3 (cost 5).

    Paths to a finished state: 0-1-2 costs 3 or 5; 0-1-crash-3 costs 6 or 8 (at depth 1).
    The measure at the end is 10 in state 2 and 0 in state 3.
    """

    def initial(self) -> int:
        return 0

    def actions(self, state: int) -> Sequence[Action]:
        return {0: (STEP, LONG), 1: (STEP, CRASH)}.get(state, ())

    def step(self, state: int, action: Action) -> tuple[int, Mapping[str, int]]:
        if state == 0:
            return 1, {"cost": 3 if action == LONG else 1}
        if action == CRASH:
            return 3, {"cost": 5}
        return 2, {"cost": 2}

    def is_finished(self, state: int) -> bool:
        return state in (2, 3)

    def crash_point(self, state: int) -> str | None:
        return "one" if state == 1 else None

    @property
    def properties(self) -> Sequence[Property[int]]:
        return (
            Property.at_end("ends", lambda s: True, witness="ended"),
            Property.sometimes("ended", lambda s: s in (2, 3)),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[int], int]]:
        return {}


def test_the_longest_path_by_a_counter() -> None:
    assert most(explore(Diamond(), 1), "cost") == 8
    assert most(explore(Diamond(), 0), "cost") == 5


def test_a_measure_at_the_end_is_added() -> None:
    def tenth(state: int) -> int:
        return 10 if state == 2 else 0

    assert most(explore(Diamond(), 1), "cost", tenth) == 15  # 5 + 10 beats 8 + 0
    assert most(explore(Diamond(), 1), measure=tenth) == 10


def test_an_unknown_counter_counts_nothing() -> None:
    assert most(explore(Diamond(), 1), "nothing") == 0
