"""A second live process (spec/FAULTS.md section 7, `pause`): suspend, wake, and hand back.

The fault `pause` suspends the running process at a crash point instead of killing it: it
keeps its memory and its place, and the supervisor, believing it dead, starts a restart on the
same disk and tracker. The paused process wakes later, at a crash point of the restart of the
explorer's choosing (or, at the latest, when the restart stops), and goes on with its stale
memory while the restart is held at its crash point; once the woken process stops, the held
one goes on. Two live processes at most: no pause strikes while a second process exists.

Each function here is a pure change of the world; the model (variants/loop_model.py) runs the
process that is to go on afterwards. Fencing tokens travel with the processes: the running
process's is `Second.token`, the other's `Second.other_token`.
"""

from __future__ import annotations

from crashsweep.spec.ops import Pause
from crashsweep.spec.running import stuck_why
from crashsweep.spec.world import Second, World, make_world


def pausable(world: World) -> bool:
    """A process runs, at a crash point (not at a pause), and no second process exists."""
    process = world.process
    if process is None or world.second.other is not None:
        return False
    return not (process.pending and isinstance(process.pending[0], Pause))


def suspend(world: World) -> World:
    """The running process is suspended where it is, with its memory and its token; none runs now."""
    w, second = world, world.second
    held = Second(w.process, False, 0, second.token, second.fence)
    return make_world(w.checkpoint, w.tracker, None, w.finished, w.runs, w.lock, w.struck, w.replies, held)


def may_wake(world: World) -> bool:
    """A paused process exists and has not woken yet."""
    second = world.second
    return second.other is not None and not second.woken


def wake(world: World) -> World:
    """The paused process runs again; the running one (if any) is held at its crash point (a stuck one is gone)."""
    w, second = world, world.second
    assert second.other is not None, "wake needs a paused process"
    assert not second.woken, "the paused process woke already"
    if w.process is None or stuck_why(w.process) is not None:  # none runs, or the running one gives up
        swapped = Second(None, False, second.other_token, 0, second.fence)
    else:
        swapped = Second(w.process, True, second.other_token, second.token, second.fence)
    return make_world(w.checkpoint, w.tracker, second.other, False, w.runs, w.lock, w.struck, w.replies, swapped)


def held_goes_on(world: World) -> World:
    """The woken process has stopped (or is stuck, and gives up: rule 11): the held one runs again from its point."""
    w, second = world, world.second
    assert w.process is None or stuck_why(w.process) is not None, "a process still runs"
    assert second.other is not None, "nothing is held"
    assert second.woken, "the other process is paused, not held"
    back = Second(None, False, second.other_token, 0, second.fence)
    return make_world(w.checkpoint, w.tracker, second.other, False, w.runs, w.lock, w.struck, w.replies, back)


def unfinished_while_other_lives(world: World) -> World:
    """A process that ends the run does not end the scenario while another process lives."""
    if not world.finished or world.second.other is None:
        return world
    w = world
    return make_world(w.checkpoint, w.tracker, w.process, False, w.runs, w.lock, w.struck, w.replies, w.second)
