"""Tests of crashsweep.spec.pause: where a pause may strike, and how processes change places."""

from __future__ import annotations

from typing import Literal

from crashsweep.spec.design import Env
from crashsweep.spec.faults import FAULTS, PAUSE
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.pause import held_goes_on, may_wake, pausable, suspend, unfinished_while_other_lives, wake
from crashsweep.spec.process import advance, boot
from crashsweep.spec.tracker import KEYED
from crashsweep.spec.world import NO_SECOND, Checkpoint, LockFile, Process, Second, Tracker, World, make_world
from crashsweep.variants import agent_loop

ENV = Env(TRIAGE, KEYED, ("pause",))
DESIGN = agent_loop.DESIGN


def _at(point: str, world: World | None = None) -> World:
    world, _ = boot(World() if world is None else world, ENV, DESIGN)
    while world.process is not None and world.process.point != point:
        world, _ = advance(world, ENV, DESIGN)
    assert world.process is not None, point
    return world


def test_pause_is_registered_and_strikes_only_a_lone_running_process() -> None:
    assert FAULTS["pause"] is PAUSE
    world = _at("lock: renamed")
    assert pausable(world)
    assert not pausable(World())  # no process runs
    assert not pausable(suspend(world))  # no process runs, one is paused
    restarted, _ = boot(suspend(world), ENV, DESIGN)
    assert restarted.process is not None
    assert not pausable(restarted)  # a second process lives: two at most


def test_suspend_keeps_the_process_whole_and_frees_the_slot() -> None:
    world = _at("start: renamed")
    paused = suspend(world)
    assert paused.process is None
    assert paused.second.other == world.process
    assert not paused.second.woken
    assert may_wake(paused)
    assert paused.checkpoint == world.checkpoint
    assert paused.tracker == world.tracker


def test_wake_swaps_the_processes_and_the_tokens() -> None:
    paused = suspend(_at("lock: renamed"))
    restart, _ = boot(paused, ENV, DESIGN)
    assert restart.process is not None
    woken = wake(restart)
    assert woken.process == paused.second.other  # the stale memory, where it paused
    assert woken.second.other == restart.process
    assert woken.second.woken
    assert not may_wake(woken)
    stopped = make_world(
        woken.checkpoint, woken.tracker, None, False, woken.runs, woken.lock, woken.struck, woken.replies, woken.second
    )
    back = held_goes_on(stopped)
    assert back.process == restart.process
    assert back.second == NO_SECOND


def test_tokens_travel_with_their_processes() -> None:
    """Process 1 holds token 1, the restart token 2: woken, process 1 is stale; handed back, the restart is not."""
    running = make_world(*_fields(_at("lock: renamed")), Second(None, False, 1, 0, 2))
    assert running.second.stale  # a newer token was handed out
    paused = suspend(running)
    assert paused.second.other_token == 1
    restarted = make_world(
        *_fields(paused, process=_at("lock: renamed").process), Second(paused.second.other, False, 2, 1, 2)
    )
    woken = wake(restarted)
    assert woken.second.token == 1
    assert woken.second.stale
    back = held_goes_on(make_world(*_fields(woken, process=None), woken.second))
    assert back.second.token == 2
    assert not back.second.stale


def test_the_run_is_not_finished_while_another_process_lives() -> None:
    finished = make_world(*_fields(World(), finished=True), Second(_at("lock: renamed").process))
    assert not unfinished_while_other_lives(finished).finished
    alone = make_world(*_fields(World(), finished=True))
    assert unfinished_while_other_lives(alone).finished


Fields = tuple[Checkpoint, Tracker, Process | None, bool, int, LockFile, tuple[str, ...], int]


def _fields(world: World, *, process: Process | Literal[False] | None = False, finished: bool | None = None) -> Fields:
    """The first eight fields of make_world, with the process or the finished flag replaced."""
    return (
        world.checkpoint,
        world.tracker,
        world.process if process is False else process,
        world.finished if finished is None else finished,
        world.runs,
        world.lock,
        world.struck,
        world.replies,
    )
