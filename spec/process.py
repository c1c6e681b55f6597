"""The process: load, start, and run instructions from one crash point to the next.

This is the one interpreter every design runs on. `boot` is a (re)start: it loads the
checkpoint (never the temp file), begins a fresh run when there is none, exits at once when
the run is done, and otherwise runs the design's start. `advance` goes on from the crash
point the process is at. Both stop at the next crash point or at the process's exit, and
return the counters the stretch incremented (model calls, questions, ladder rungs).
Pure: the same world gives the same result, with no I/O, clock or randomness.
"""

from __future__ import annotations

from dataclasses import replace

from spec import metrics
from spec.design import Design, Env
from spec.ops import (
    CHECKPOINT,
    AppendTurn,
    Approve,
    AskPerson,
    CallModel,
    CompleteTurn,
    Exit,
    Failed,
    Lookup,
    Mark,
    MarkDone,
    Op,
    Ops,
    Point,
    Rename,
    RequestApproval,
    RetryViaModel,
    Send,
    Store,
    WriteTmp,
)
from spec.tracker import READ_ANSWER, apply_write
from spec.world import Checkpoint, LockFile, Process, Snapshot, Turn, World

Counters = dict[str, int]


def boot(world: World, env: Env, design: Design) -> tuple[World, Counters]:
    """A process starts (first start or restart) and runs to its first crash point or exit."""
    assert world.process is None, "boot needs a world with no process"
    assert not world.finished, "boot needs an unfinished world"
    committed = world.checkpoint.committed
    if committed is None:
        world = replace(world, runs=world.runs + 1)
        memory = Snapshot(run=f"run-{world.runs}")
    elif committed.done:
        return replace(world, finished=True), {}
    else:
        memory = committed
    return _run(world, memory, design.start(env), env, design)


def advance(world: World, env: Env, design: Design) -> tuple[World, Counters]:
    """The process goes on from its crash point to the next one, or to its exit."""
    assert world.process is not None, "advance needs a running process"
    return _run(world, world.process.memory, world.process.pending, env, design)


def _run(world: World, memory: Snapshot, pending: Ops, env: Env, design: Design) -> tuple[World, Counters]:
    counters: Counters = {}
    while True:
        if not pending:
            pending = design.plan(memory, env)
            if not pending:
                raise RuntimeError(f"design {design.name!r}: plan returned no instructions")
        op, pending = pending[0], pending[1:]
        if isinstance(op, Point):
            return replace(world, process=Process(memory, pending, op.name)), counters
        if isinstance(op, Exit):
            return replace(world, process=None, finished=True), counters
        if isinstance(op, Failed):
            # A tool error abandons the rest of this attempt (its result save): the loop body
            # runs again and decides, from memory, what a failed call calls for.
            assert memory.last is not None
            memory, pending = memory.with_last(memory.last.with_failure(op.call)), ()
            continue
        world, memory, follow = _execute(op, world, memory, env, counters)
        pending = follow + pending


def _bump(counters: Counters, name: str) -> None:
    counters[name] = counters.get(name, 0) + 1


def _execute(op: Op, world: World, memory: Snapshot, env: Env, counters: Counters) -> tuple[World, Snapshot, Ops]:
    """Run one instruction; return the world, the memory, and instructions to run next."""
    if isinstance(op, WriteTmp):
        if op.file == CHECKPOINT:
            return replace(world, checkpoint=replace(world.checkpoint, tmp=memory)), memory, ()
        return replace(world, lock=replace(world.lock, tmp=memory.run)), memory, ()
    if isinstance(op, Rename):
        if op.file == CHECKPOINT:
            return replace(world, checkpoint=Checkpoint(committed=world.checkpoint.tmp)), memory, ()
        return replace(world, lock=LockFile(holder=world.lock.tmp)), memory, ()
    if isinstance(op, CallModel):
        _bump(counters, metrics.MODEL_CALLS)
        k = len(memory.turns) + 1
        if k > len(env.job.turns):
            return world, memory, (Point("final reply arrived"), MarkDone(), *op.after_final)
        return world, memory, (Point(f"reply {k} arrived"), AppendTurn(), *op.after_reply)
    if isinstance(op, AppendTurn):
        return world, replace(memory, turns=(*memory.turns, Turn(len(memory.turns) + 1))), ()
    if isinstance(op, MarkDone):
        return world, replace(memory, done=True), ()
    if isinstance(op, CompleteTurn):
        assert memory.last is not None
        return world, memory.with_last(replace(memory.last, complete=True)), ()
    if isinstance(op, Mark):
        assert memory.last is not None
        return world, memory.with_last(memory.last.with_marker(op.call)), ()
    if isinstance(op, Store):
        assert memory.last is not None
        return world, memory.with_last(memory.last.with_result(op.call, op.answer)), ()
    if isinstance(op, Send):
        if op.rerun:
            _bump(counters, metrics.RERUNS)
        return _send(op, world, memory, env)
    if isinstance(op, Lookup):
        _bump(counters, metrics.LOOKUPS)
        found = world.tracker.find(op.call, memory.run)
        settled: Ops = (Store(op.call, found),) if found else (Send(op.call, op.keyed),)
        return world, memory, (Point(f"lookup answered {op.call}"), *settled)
    if isinstance(op, RequestApproval):
        _bump(counters, metrics.APPROVALS)
        # The request is out and the person is deciding: a crash here means asking again.
        return world, memory, (Point(f"approval requested {op.call}"), Approve(op.call), Point(f"approved {op.call}"))
    if isinstance(op, Approve):
        assert memory.last is not None
        return world, memory.with_last(memory.last.with_approval(op.call)), ()
    if isinstance(op, RetryViaModel):
        _bump(counters, metrics.MODEL_CALLS)
        retry = Send(op.call, keyed=op.keyed, key_as=f"{op.call}.retry")
        return world, memory, (Point(f"retry reply arrived {op.call}"), retry)
    if isinstance(op, AskPerson):
        _bump(counters, metrics.ASKS)
        found = world.tracker.find(op.call, memory.run)
        # "Yes": take the result and send nothing (no crash point). "No": send now.
        return world, memory, (Store(op.call, found),) if found else (Send(op.call, op.keyed),)
    raise TypeError(f"unknown instruction {op!r}")


def _send(op: Send, world: World, memory: Snapshot, env: Env) -> tuple[World, Snapshot, Ops]:
    call = env.job.call(op.call)
    if not call.writes:
        return world, memory, (Point(f"tool returned {call.id}"), Store(call.id, READ_ANSWER))
    tracker, answer = apply_write(world.tracker, env.tracker, call.id, memory.run, op.keyed, op.key_as)
    if call.fails_after_accept and call.id not in world.struck:
        # The one-time fault: the tracker applied the write, then the tool's transport failed.
        failure: Ops = (Point(f"tracker accepted {call.id}"), Point(f"tool failed {call.id}"), Failed(call.id))
        return replace(world, tracker=tracker, struck=(*world.struck, call.id)), memory, failure
    follow: Ops = (
        Point(f"tracker accepted {call.id}"),
        Point(f"tool returned {call.id}"),
        Store(call.id, answer),
    )
    return replace(world, tracker=tracker), memory, follow
