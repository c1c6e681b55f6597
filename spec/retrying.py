"""What a retry layer does when it catches a failure (spec/RETRIES.md 1.2-1.4), as pure changes of the world.

`caught` is called by the interpreter when a tool's error reaches the process (the job's own
failure, a lost reply, or the move `retry`); it returns what the process runs next, or None
when no layer catches the error and the loop answers it by its `on_tool_error`. `fail_here`
and `timeout_here` say where the move `retry` is enabled, and `fail`/`time_out` strike it.
"""

from __future__ import annotations

from crashsweep.spec import durability
from crashsweep.spec.design import Design, Env
from crashsweep.spec.ops import Failed, Op, Ops, Pause, Point, Store
from crashsweep.spec.pause import suspend
from crashsweep.spec.retries import ACCEPTED, FAILURES, RETURNED, TIMEOUTS, Layer, catching, counter, spent_entry
from crashsweep.spec.world import Snapshot, World, make_process, make_world


def _spend(world: World, index: int, where: str) -> World:
    """`world` with one more retry of layer `index` on instance `where` recorded."""
    w = world
    struck = (*w.struck, spent_entry(index, where))
    return make_world(w.checkpoint, w.tracker, w.process, w.finished, w.runs, w.lock, struck, w.replies, w.second)


def new_run(world: World, env: Env, design: Design) -> tuple[World, Snapshot, Ops]:
    """A new run begins (a fresh run ID, empty memory), the checkpoint unread: the design's start comes next."""
    w = world
    runs = w.runs + 1
    begun = make_world(w.checkpoint, w.tracker, w.process, w.finished, runs, w.lock, w.struck, w.replies, w.second)
    return begun, Snapshot(run=f"run-{runs}"), durability.with_fsyncs(design.start(env), design.fsync)


def _without_last_turn(memory: Snapshot) -> Snapshot:
    """Memory as it was before the last turn's reply arrived."""
    return Snapshot(memory.run, memory.done, memory.turns[:-1])


def caught(
    world: World, memory: Snapshot, failed: Failed, rest: Ops, env: Env, design: Design, counters: dict[str, int]
) -> tuple[World, Snapshot, Ops] | None:
    """The innermost layer with an attempt left re-runs its scope; None when no layer catches the error."""
    if not design.retries or memory.last is None:
        return None
    found = catching(design.retries, FAILURES, world.struck, memory.run, failed.call, memory.last.index)
    if found is None:
        return None
    index, layer, where = found
    world = _spend(world, index, where)
    name = counter(layer.scope)
    counters[name] = counters.get(name, 0) + 1
    if layer.scope == "call":
        assert failed.again is not None, f"the failed request of {failed.call} is not known"
        return world, memory, (failed.again, *rest)
    if layer.scope == "turn":
        return world, _without_last_turn(memory), ()
    return new_run(world, env, design)


# --- the move `retry` (RETRIES.md 1.4) ---


def _answer_to_come(world: World) -> Store | None:
    """At `tracker accepted C` with the tool's answer still to come (not the job's own failure): its Store."""
    process = world.process
    if process is None or not process.point.startswith(ACCEPTED) or len(process.pending) < 2:
        return None
    call = process.point[len(ACCEPTED) :]
    first, second = process.pending[0], process.pending[1]
    if first != Point(f"{RETURNED}{call}") or not isinstance(second, Store):
        return None
    return second


def fail_here(world: World, design: Design) -> Layer | None:
    """The layer that would catch an error struck here, where the move may make the attempt fail."""
    store = _answer_to_come(world)
    if store is None or world.second.other is not None:
        return None
    process = world.process
    assert process is not None
    last = process.memory.last
    assert last is not None
    found = catching(design.retries, FAILURES, world.struck, process.memory.run, store.call, last.index)
    return None if found is None else found[1]


def fail(world: World) -> World:
    """The attempt fails: instead of `tool returned C` and its answer, `tool failed C` and the error."""
    store = _answer_to_come(world)
    assert store is not None
    process = world.process
    assert process is not None
    failing: tuple[Op, ...] = (Point(f"tool failed {store.call}"), Failed(store.call, store.again))
    w = world
    erring = make_process(process.memory, (*failing, *process.pending[2:]), process.point)
    return make_world(w.checkpoint, w.tracker, erring, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)


def _where(world: World) -> tuple[str | None, int | None]:
    """The call the process is in (at its accepted or returned point) and the turn under way, if any."""
    process = world.process
    assert process is not None
    point = process.point
    call = None
    for prefix in (ACCEPTED, RETURNED):
        if point.startswith(prefix):
            call = point[len(prefix) :]
    last = process.memory.last
    return call, (None if last is None or last.complete else last.index)


def _timeout(world: World, design: Design) -> tuple[int, Layer, str] | None:
    process = world.process
    if not design.retries or process is None or world.second.other is not None:
        return None
    if process.pending and isinstance(process.pending[0], Pause):
        return None
    call, turn = _where(world)
    return catching(design.retries, TIMEOUTS, world.struck, process.memory.run, call, turn)


def timeout_here(world: World, design: Design) -> Layer | None:
    """The timeout layer that would give up on the attempt here and start another beside it."""
    found = _timeout(world, design)
    return None if found is None else found[1]


def time_out(world: World, design: Design, counters: dict[str, int]) -> tuple[World, Layer]:
    """The attempt is given up on and suspended (it may wake later); the caller starts the new one."""
    found = _timeout(world, design)
    assert found is not None
    index, layer, where = found
    name = counter(layer.scope)
    counters[name] = counters.get(name, 0) + 1
    return suspend(_spend(world, index, where)), layer
