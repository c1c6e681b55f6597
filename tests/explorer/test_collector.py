"""Tests of crashsweep.explorer.collector: the collector paused around a search, and kept off its result.

Freezing is the interpreter's own state, shared by everything in it (the session's fixtures
keep explorations alive): the cases about freezing run each in a new interpreter, where no
object is frozen and no result is kept out when they begin.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from crashsweep.explorer import collector
from crashsweep.explorer.search import StateLimitExceeded, explore
from tests.explorer.toys import Points

TOP = Path(__file__).resolve().parents[2]


class _Result:
    """A stand-in for a search's result: anything that can be weakly referenced."""


def test_paused_turns_the_collector_off_and_back_on() -> None:
    """Inside the block the collector is off; after it, on again, even when the block raises."""
    with collector.paused() as collecting:
        assert collecting
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("the search failed")
    assert gc.isenabled()


def test_paused_leaves_a_collector_the_program_turned_off() -> None:
    """A program running with the collector off gets it back off."""
    gc.disable()
    try:
        with collector.paused() as collecting:
            assert not collecting
        assert not gc.isenabled()
    finally:
        gc.enable()


def kept_until_freed() -> None:
    """While the result lives the tracked objects are frozen; its end gives them back."""
    result = _Result()
    collector.keep_out(result, collecting=True)
    assert collector.kept_out() == 1
    assert gc.get_freeze_count() > 0
    del result
    assert collector.kept_out() == 0
    assert gc.get_freeze_count() == 0


def frozen_until_the_last_is_freed() -> None:
    """Two results kept out: the first one's end keeps the second's objects frozen."""
    first, second = _Result(), _Result()
    collector.keep_out(first, collecting=True)
    collector.keep_out(second, collecting=True)
    del first
    assert collector.kept_out() == 1
    assert gc.get_freeze_count() > 0
    del second
    assert collector.kept_out() == 0
    assert gc.get_freeze_count() == 0


def nothing_frozen_when_off() -> None:
    """A search run with the collector off leaves nothing frozen: there was nothing to keep out."""
    result = _Result()
    collector.keep_out(result, collecting=False)
    assert collector.kept_out() == 0
    assert gc.get_freeze_count() == 0


def the_program_freeze_is_left_alone() -> None:
    """A program that froze objects itself keeps them frozen after a result it did not make is freed."""
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    result = _Result()
    collector.keep_out(result, collecting=True)
    assert collector.kept_out() == 0
    del result
    assert gc.get_freeze_count() == frozen


def an_exploration_is_kept_out() -> None:
    """explore() freezes what it made; dropping the exploration unfreezes it; its counts are the hand counts."""
    exploration = explore(Points(4), 2)
    assert exploration.counts.scenarios == {0: 1, 1: 4, 2: 16}
    assert collector.kept_out() == 1
    assert gc.get_freeze_count() > 0
    assert gc.isenabled()
    del exploration
    assert collector.kept_out() == 0
    assert gc.get_freeze_count() == 0


def a_failed_search_freezes_nothing() -> None:
    """A search that stops on its state limit leaves nothing frozen and the collector on."""
    with pytest.raises(StateLimitExceeded):
        explore(Points(50), 3, max_states=10)
    assert collector.kept_out() == 0
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


@pytest.mark.parametrize(
    "case",
    [
        kept_until_freed,
        frozen_until_the_last_is_freed,
        nothing_frozen_when_off,
        the_program_freeze_is_left_alone,
        an_exploration_is_kept_out,
        a_failed_search_freezes_nothing,
    ],
    ids=lambda case: case.__name__,
)
def test_freezing_in_a_new_interpreter(case: Callable[[], None]) -> None:
    """Each freezing case passes in an interpreter of its own (its assertions fail the child)."""
    name = case.__name__
    code = f"from tests.explorer.test_collector import {name}; {name}(); print('ok')"
    child = subprocess.run([sys.executable, "-c", code], cwd=TOP, capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"
