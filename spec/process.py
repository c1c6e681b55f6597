"""The process: load, start, and run instructions from one crash point to the next.

This is the one interpreter every design runs on. `boot` is a (re)start: it loads the
checkpoint (never the temp file), begins a fresh run when there is none, exits at once when
the run is done, and otherwise runs the design's start. `advance` goes on from the crash
point the process is at. Both stop at the next crash point or at the process's exit, and
return the counters the stretch incremented (model calls, questions, ladder rungs).
Pure: the same world gives the same result, with no I/O, clock or randomness.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from crashsweep.spec import approval, durability, loading, metrics, retrying, trim
from crashsweep.spec.design import Design, Env
from crashsweep.spec.ops import (
    CHECKPOINT,
    REFUSED,
    AppendTurn,
    Approve,
    AskPerson,
    CallModel,
    CompleteTurn,
    Exit,
    Failed,
    FsyncDir,
    FsyncTmp,
    Gate,
    Lookup,
    Mark,
    MarkDone,
    Op,
    Ops,
    Pause,
    Point,
    Reload,
    Rename,
    Replan,
    RequestApproval,
    RetryViaModel,
    Send,
    Stop,
    Store,
    Stuck,
    TakeLease,
    TakeOsLock,
    WriteTmp,
)
from crashsweep.spec.retries import failed_for_good
from crashsweep.spec.running import make_process_at
from crashsweep.spec.tracker import READ_ANSWER, apply_write
from crashsweep.spec.world import (
    NO_SECOND,
    Checkpoint,
    LockFile,
    Process,
    Second,
    Snapshot,
    Tracker,
    Turn,
    World,
    make_checkpoint,
    make_process,
    make_world,
)

Counters = dict[str, int]
WRONG_ANSWER = "said to have happened"
"""The result a person's wrong "yes" puts in memory: no record stands behind it."""
OUTCOME_UNKNOWN = "outcome unknown"
"""The result `transcript_on_restart = "repair"` gives a call that has none (spec/CONVERSATIONS.md 1)."""
ASKED = "asked "
"""The `World.struck` entry of each hand-out of reply k (`asked k`), kept only under `changed-args`
(spec/faults.py reads it: that fault strikes only a reply handed out before)."""
CHANGED_ARGS = "changed-args"


def boot(world: World, env: Env, design: Design) -> tuple[World, Counters]:
    """A process starts (first start or restart) and runs to its first crash point or exit."""
    assert world.process is None, "boot needs a world with no process"
    assert not world.finished, "boot needs an unfinished world"
    committed = world.checkpoint.committed
    if world.checkpoint.torn and design.unreadable == "ask-person":
        # An unreadable checkpoint (spec/FAULTS.md 6): the loop refuses to start and asks a person.
        return _world(world, finished=True), {metrics.ASKS: 1}
    if committed is None:
        world = _world(world, runs=world.runs + 1)
        memory = Snapshot(run=f"run-{world.runs}")
    elif committed.done:
        return _world(world, finished=True), {}
    elif world.struck and failed_for_good(world.struck, committed.run):
        # A call's attempt died with its one-attempt budget: the workflow fails at once (RETRIES.md 1.8).
        return _world(world, finished=True), {}
    else:
        memory = loading.loaded(committed, env.job, design)  # spec/loading.py: approvals, a batch, a trim
    start = design.start(env)
    how = loading.reload_how(design)
    if committed is not None and how != "resume-pending":
        start = (*start, Reload(how))
    return _run(world, memory, durability.with_fsyncs(start, design.fsync), env, design)


def advance(world: World, env: Env, design: Design) -> tuple[World, Counters]:
    """The process goes on from its crash point (or pause) to the next one, or to its exit.

    At a pause the environment chose no fault: the paused instruction runs as usual.
    """
    assert world.process is not None, "advance needs a running process"
    pending = world.process.pending
    if pending and isinstance(pending[0], Pause):
        return _run(world, world.process.memory, pending[1:], env, design, resumed=True)
    return _run(world, world.process.memory, pending, env, design)


def resume(world: World, env: Env, design: Design) -> tuple[World, Counters]:
    """After a fault: a stopped world restarts; a running process goes on from where it is."""
    if world.process is None:
        return boot(world, env, design)
    return _run(world, world.process.memory, world.process.pending, env, design, resumed=True)


def boot_new_run(world: World, env: Env, design: Design) -> tuple[World, Counters]:
    """A process starts a new run without reading the checkpoint (a retry of scope `run`, RETRIES.md 1.2)."""
    assert world.process is None, "a new run needs a world with no process"
    begun, memory, start = retrying.new_run(world, env, design)
    return _run(begun, memory, start, env, design)


def paused(world: World) -> bool:
    """Whether the process waits at a pause (a fault's chance that is not a crash point)."""
    process = world.process
    return process is not None and bool(process.pending) and isinstance(process.pending[0], Pause)


def _pauses_at(op: Op, env: Env) -> Pause | None:
    """The pause before `op` when a fault enabled in `env` may strike there (spec/FAULTS.md)."""
    if isinstance(op, AskPerson) and not op.wrong and "wrong-answer" in env.faults:
        return Pause(f"person answers {op.call}")
    return None


def _run(
    world: World, memory: Snapshot, pending: Ops, env: Env, design: Design, resumed: bool = False
) -> tuple[World, Counters]:
    counters: Counters = {}
    at = 0  # the next instruction is pending[at]: the tuple is sliced only where the process stops
    # A save's checkpoint under crashes alone, kept here until the next stop or other instruction
    # makes the world with it (one world a stretch, not one a save step): `_execute`'s own steps.
    disk: Checkpoint | None = None
    plain_disk = durability.POWER_LOSS not in env.faults
    while True:
        if at == len(pending):
            pending, at = _planned(memory, env, design), 0
        op = pending[at]
        at += 1
        if isinstance(op, Point):  # the most frequent instruction first
            process, w = make_process_at(memory, pending, at, op.name), world
            disk = w.checkpoint if disk is None else disk
            after = make_world(disk, w.tracker, process, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)
            return after, counters
        if isinstance(op, _SAVES) and plain_disk and op.file == CHECKPOINT and world.second is NO_SECOND:
            now = world.checkpoint if disk is None else disk
            if isinstance(op, WriteTmp):
                disk, resumed = make_checkpoint(now.committed, memory), False
                continue
            if now.tmp is not None:  # else another process renamed it first: `_execute` stops this one
                disk, resumed = make_checkpoint(now.tmp, None), False
                continue
        if disk is not None:
            world, disk = _world(world, checkpoint=disk), None
        if type(op) in _CONTROL:  # the instructions' classes are final but Stop (an Exit)
            if isinstance(op, Stuck):
                # The process can never go on (spec/CONVERSATIONS.md 4): it stays here, offering no move.
                return _world(world, process=make_process(memory, (op,), op.why)), counters
            if isinstance(op, Replan):
                pending, at = (), 0
                continue
            if env.faults and not resumed:
                pause = _pauses_at(op, env)
                if pause is not None:
                    paused_at = make_process(memory, (pause, *pending[at - 1 :]), pause.name)
                    return _world(world, process=paused_at), counters
            if isinstance(op, Exit):
                # A Stop (refused, fenced, a failed rename) ends the process, not the run.
                return _world(world, process=None, finished=not isinstance(op, Stop)), counters
            if isinstance(op, Failed):
                world, memory, pending = _failed(op, world, memory, pending[at:], env, design, counters)
                at, resumed = 0, False
                continue
        resumed = False
        world, memory, follow = _execute(op, world, memory, env, counters, design)
        if follow:
            pending, at = follow + pending[at:], 0


def _failed(
    op: Failed, world: World, memory: Snapshot, rest: Ops, env: Env, design: Design, counters: Counters
) -> tuple[World, Snapshot, Ops]:
    """The world, memory and instructions after a tool's failure.

    A retry layer may catch the error (spec/RETRIES.md); else the process abandons the rest of
    this attempt (its result save): the loop body runs again and decides, from memory, what a
    failed call calls for.
    """
    retried = retrying.caught(world, memory, op, rest, env, design, counters)
    if retried is not None:
        return retried
    assert memory.last is not None
    return world, memory.with_last(memory.last.with_failure(op.call)), ()


def _planned(memory: Snapshot, env: Env, design: Design) -> Ops:
    """The loop body's next instructions (with the design's fsync steps)."""
    pending = design.plan(memory, env)
    if design.fsync != "none":
        pending = durability.with_fsyncs(pending, design.fsync)
    if not pending:
        raise RuntimeError(f"design {design.name!r}: plan returned no instructions")
    return pending


_SAVES = (WriteTmp, Rename)
"""A save's two steps (a tuple, not `WriteTmp | Rename`: that union would be made at each test)."""
_CONTROL = frozenset({Stuck, Replan, Exit, Stop, Failed, AskPerson})
"""The instructions `_run` handles itself besides a point and a save's steps, and AskPerson (a fault
may pause before it): the others go to `_execute` at once."""


def _world(
    world: World,
    *,
    checkpoint: Checkpoint | None = None,
    tracker: Tracker | None = None,
    process: Process | Literal[False] | None = False,
    finished: bool | None = None,
    runs: int | None = None,
    lock: LockFile | None = None,
    struck: tuple[str, ...] | None = None,
    replies: int | None = None,
) -> World:
    """`world` with the given fields changed (dataclasses.replace without its overhead)."""
    return make_world(
        world.checkpoint if checkpoint is None else checkpoint,
        world.tracker if tracker is None else tracker,
        world.process if process is False else process,
        world.finished if finished is None else finished,
        world.runs if runs is None else runs,
        world.lock if lock is None else lock,
        world.struck if struck is None else struck,
        world.replies if replies is None else replies,
        world.second,
    )


# The instructions a stretch appends are frozen values: each tuple is made once and shared
# (bounded caches), so equal programs hold the same objects and compare by identity.
_FINAL_ARRIVED: Ops = (Point("final reply arrived"), MarkDone())


@lru_cache(maxsize=1 << 14)
def _reply_arrived(k: int, ids: str) -> Ops:
    """Reply k arrives (its call IDs suffixed by `ids`) and becomes the last turn in memory."""
    return (Point(f"reply {k} arrived"), AppendTurn(ids))


@lru_cache(maxsize=1 << 14)
def _returned(call: str, answer: str, accepted: bool, again: Send | None = None) -> Ops:
    """The tool's answer to `call` comes back (after the tracker accepted `again`, for a write) and is stored."""
    returned: Ops = (Point(f"tool returned {call}"), Store(call, answer, again))
    return (Point(f"tracker accepted {call}"), *returned) if accepted else returned


_LOCK_FILES: dict[tuple[str | None, str | None], LockFile] = {}


def _lock_file(holder: str | None, tmp: str | None) -> LockFile:
    """LockFile(holder, tmp), one shared object per value: states hold a few distinct lock files."""
    known = _LOCK_FILES.get((holder, tmp))
    if known is None:
        if len(_LOCK_FILES) >= 1 << 12:
            _LOCK_FILES.clear()
        known = _LOCK_FILES[holder, tmp] = LockFile(holder, tmp)
    return known


def _bump(counters: Counters, name: str) -> None:
    counters[name] = counters.get(name, 0) + 1


def _execute(
    op: Op, world: World, memory: Snapshot, env: Env, counters: Counters, design: Design
) -> tuple[World, Snapshot, Ops]:
    """Run one instruction; return the world, the memory, and instructions to run next."""
    if isinstance(op, WriteTmp):
        w = world
        if w.second.stale:
            return world, memory, (FENCED,)
        if op.file == CHECKPOINT:
            if durability.POWER_LOSS in env.faults:
                return _world(world, checkpoint=durability.write_tmp(w.checkpoint, memory)), memory, ()
            disk = make_checkpoint(w.checkpoint.committed, memory)
            after = make_world(disk, w.tracker, w.process, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)
            return after, memory, ()
        return _world(world, lock=_lock_file(world.lock.holder, memory.run)), memory, ()
    if isinstance(op, Rename):
        w = world
        if w.second.stale:
            return world, memory, (FENCED,)
        if op.file == CHECKPOINT:
            if w.checkpoint.tmp is None:
                return world, memory, (RENAME_FAILED,)  # another process renamed it first
            if durability.POWER_LOSS in env.faults:
                return _world(world, checkpoint=durability.rename(w.checkpoint)), memory, ()
            disk = make_checkpoint(w.checkpoint.tmp, None)
            after = make_world(disk, w.tracker, w.process, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)
            return after, memory, ()
        if w.lock.tmp is None:
            return world, memory, (RENAME_FAILED,)
        return _world(world, lock=_lock_file(world.lock.tmp, None)), memory, ()
    # The instructions in order of how often they run (the classes are disjoint: the order is free).
    if isinstance(op, Send):
        if op.rerun:
            _bump(counters, metrics.RERUNS)
        return _send(op, world, memory, env, design)
    if isinstance(op, Store):
        assert memory.last is not None
        return world, memory.with_last(memory.last.with_result(op.call, op.answer)), ()
    if isinstance(op, FsyncTmp | FsyncDir):
        if durability.POWER_LOSS not in env.faults:
            return world, memory, ()  # under crashes alone an fsync changes nothing on disk
        sync = durability.fsync_tmp if isinstance(op, FsyncTmp) else durability.fsync_dir
        return _world(world, checkpoint=sync(world.checkpoint)), memory, ()
    if isinstance(op, CallModel):
        _bump(counters, metrics.MODEL_CALLS)
        if trim.TRIMMED in world.struck:
            orphan = trim.orphan_result(memory)
            if orphan is not None:  # the provider refuses a result without its call, every time (CONVERSATIONS.md 7)
                return world, memory, (Stuck(f"{REFUSED}the result of {orphan} has no call"),)
        k = memory.size + 1
        if k > len(env.job.turns):
            return world, memory, (*_FINAL_ARRIVED, *op.after_final)
        if CHANGED_ARGS in env.faults:
            world = _world(world, struck=(*world.struck, f"{ASKED}{k}"))
        if env.fresh_ids:
            # The model hands out new call IDs on every request: this reply's suffix is its number.
            world = _world(world, replies=world.replies + 1)
            return world, memory, (*_reply_arrived(k, f"@{world.replies}"), *op.after_reply)
        return world, memory, (*_reply_arrived(k, ""), *op.after_reply)
    if isinstance(op, AppendTurn):
        return world, memory.appended(Turn(memory.size + 1, ids=op.ids, args=op.args)), ()
    if isinstance(op, MarkDone):
        return world, memory.marked_done(), ()
    if isinstance(op, CompleteTurn):
        assert memory.last is not None
        return world, memory.with_last(memory.last.completed()), ()
    if isinstance(op, Mark):
        assert memory.last is not None
        return world, memory.with_last(memory.last.with_marker(op.call)), ()
    if isinstance(op, Lookup):
        if world.second.stale:
            return world, memory, (FENCED,)
        _bump(counters, metrics.LOOKUPS)
        found = world.tracker.find(op.call, memory.run)
        settled: Ops = (Store(op.call, found),) if found else (Send(op.call, op.keyed),)
        return world, memory, (Point(f"lookup answered {op.call}"), *settled)
    if isinstance(op, Gate):
        ask = approval.ask_unless_held(op.call, world, memory, design.approval_binding, design.approval_storage)
        if ask and design.approval_consume == "before-resume" and approval.consumed(op.call, world, memory):
            # The request was consumed at the answer; the person cannot answer it again (CONVERSATIONS.md 5).
            return world, memory, (Stuck(approval.consumed_why(op.call, memory)),)
        return world, memory, (RequestApproval(op.call),) if ask else ()
    if isinstance(op, RequestApproval):
        _bump(counters, metrics.APPROVALS)
        # The request is out and the person is deciding: a crash here means asking again. The
        # approval save is a checkpoint save: it takes the design's fsync steps (FAULTS.md 6.1).
        asked = approval.request(op.call, env.job, design.approval_storage, design.resume_granularity)
        return world, memory, durability.with_fsyncs(asked, design.fsync)
    if isinstance(op, Approve):
        struck, memory = approval.approve(op.call, world, memory, design.approval_storage)
        if design.resume_granularity == "node" and memory.last is not None:
            # The resume re-runs the node from its start: the calls before this one in it run again.
            memory = memory.with_last(memory.last.without(env.job.node_before(op.call)))
        return _world(world, struck=struck), memory, ()
    if isinstance(op, Reload):
        return _reload(op.how, world, memory, env, counters)
    if isinstance(op, RetryViaModel):
        _bump(counters, metrics.MODEL_CALLS)
        retry = Send(op.call, keyed=op.keyed, key_as=f"{op.call}.retry")
        return world, memory, (Point(f"retry reply arrived {op.call}"), retry)
    if isinstance(op, AskPerson):
        _bump(counters, metrics.ASKS)
        found = world.tracker.find(op.call, memory.run)
        if op.wrong:
            # The person errs (spec/FAULTS.md): "no" when it happened (sent again), "yes" when it did not.
            return world, memory, (Send(op.call, op.keyed),) if found else (Store(op.call, WRONG_ANSWER),)
        # "Yes": take the result and send nothing (no crash point). "No": send now.
        return world, memory, (Store(op.call, found),) if found else (Send(op.call, op.keyed),)
    if isinstance(op, TakeOsLock):
        # The OS lock is held while its process lives: a paused process still holds it.
        return world, memory, (LOCK_REFUSED,) if world.second.other is not None else ()
    if isinstance(op, TakeLease):
        return _lease(world), memory, ()
    raise TypeError(f"unknown instruction {op!r}")


# --- A second live process (spec/FAULTS.md section 7) ---

FENCED = Stop("fenced")
"""A stale fencing token: the tracker or the disk refuses, and the process stops."""
RENAME_FAILED = Stop("rename failed")
"""The temp file is gone (another process renamed it first): the rename fails and the process stops."""
LOCK_REFUSED = Stop("lock refused")
"""The OS lock is held by another live process: the start is refused and the process stops."""


def _lease(world: World) -> World:
    """The process takes the next fencing token, which the tracker and the disk now know as the newest."""
    second = world.second
    fence = second.fence + 1
    leased = Second(second.other, second.woken, fence, second.other_token, fence)
    w = world
    return make_world(w.checkpoint, w.tracker, w.process, w.finished, w.runs, w.lock, w.struck, w.replies, leased)


def _reload(how: str, world: World, memory: Snapshot, env: Env, counters: Counters) -> tuple[World, Snapshot, Ops]:
    """What a start does with a loaded last turn whose calls lack a result (spec/CONVERSATIONS.md 1)."""
    turn = memory.last
    if turn is None or turn.complete:
        return world, memory, ()
    orphans = tuple(call.id for call in env.job.turns[turn.index - 1] if turn.result(call.id) is None)
    if not orphans:
        return world, memory, ()
    if how == "repair":
        for call in orphans:
            turn = turn.with_result(call, OUTCOME_UNKNOWN)
        return world, memory.with_last(turn), ()
    # as-is: the model is sent a tool call with no result; the provider refuses it, every time.
    _bump(counters, metrics.MODEL_CALLS)
    return world, memory, (Stuck(f"{REFUSED}{orphans[0]} has no result"),)


def _send(op: Send, world: World, memory: Snapshot, env: Env, design: Design) -> tuple[World, Snapshot, Ops]:
    if world.second.stale:
        return world, memory, (FENCED,)
    call = env.job.call(op.call)
    if not call.writes:
        return world, memory, _returned(call.id, READ_ANSWER, False)
    key_as = op.key_as
    ids = memory.last.ids if memory.last is not None else ""
    if ids:
        # Fresh call IDs: the key is derived from the ID this reply gave the call.
        key_as = f"{key_as or call.id}{ids}"
    tracker, answer = apply_write(world.tracker, env.tracker, call.id, memory.run, op.keyed, key_as)
    if call.approval and tracker.size > world.tracker.size:
        # A gated write's record is redeemed against the approval the loop has (CONVERSATIONS.md 2).
        struck = approval.redeem(call.id, world, memory, design.approval_binding, design.approval_storage)
        world = _world(world, struck=struck)
    again = _again(op)
    if call.fails_after_accept and call.id not in world.struck:
        # The one-time fault: the tracker applied the write, then the tool's transport failed.
        failure: Ops = (Point(f"tracker accepted {call.id}"), Point(f"tool failed {call.id}"), Failed(call.id, again))
        return _world(world, tracker=tracker, struck=(*world.struck, call.id)), memory, failure
    return _world(world, tracker=tracker), memory, _returned(call.id, answer, True, again)


def _again(op: Send) -> Send:
    """The request as a retry layer sends it again: the same call, key and key source, no ladder rerun."""
    return op if not op.rerun else Send(op.call, op.keyed, False, op.key_as)
