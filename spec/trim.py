"""Context trimmed on a restart, and the repair of what it leaves (spec/CONVERSATIONS.md 7).

A turn's place in the conversation is `Turn.trimmed`: 0, all of it (its reply, then the result of
each call that has one); 1, its results without its reply, after `trim-context` cut the
conversation between the turn's calls and their results; 2, nothing. The loop keeps every turn
whatever the conversation keeps: its results are the loop's record of what was done, and the
scripted model answers by the run's progress, so a trimmed call is never sent again.

- `trimmable` and `trim` are the fault's chance and strike: at a restart, the stored
  conversation loses its oldest messages up to and including the reply of the oldest turn that
  still has its reply and has a result.
- `repaired` is `transcript_repair = "both-directions"` at the load: a result whose call is not
  in the conversation leaves it.
- `orphan_result` names the first result held without its call: the conversation the provider
  refuses (spec/ops.py `REFUSED`) and `well-formed-transcript` reads as broken.
"""

from __future__ import annotations

from crashsweep.spec.memory import Snapshot
from crashsweep.spec.world import World, make_checkpoint, make_world

TRIM_CONTEXT = "trim-context"
TRIMMED = "context trimmed"
"""The `World.struck` entry of a run whose stored conversation was trimmed: only then can a result be
held without its call, so the interpreter and the invariant look for one only then (O(1) otherwise)."""


def orphan_result(memory: Snapshot) -> str | None:
    """The first call whose result the conversation holds without the call, or None."""
    for turn in memory.turns:
        if turn.trimmed == 1 and turn.results:
            return turn.results[0][0]
    return None


def _oldest_whole(memory: Snapshot) -> int | None:
    """The position of the oldest turn whose reply is still in the conversation and that has a result."""
    for position, turn in enumerate(memory.turns):
        if turn.trimmed == 0 and turn.results:
            return position
    return None


def trimmable(world: World) -> bool:
    """A restart is due (no process, not the first start, no second process) and some turn can be cut."""
    w = world
    if w.process is not None or w.finished or w.runs == 0 or w.second.other is not None:
        return False
    committed = w.checkpoint.committed
    return committed is not None and not committed.done and _oldest_whole(committed) is not None


def trim(world: World) -> World:
    """The stored conversation loses its oldest messages up to and including that turn's reply."""
    w = world
    committed = w.checkpoint.committed
    assert committed is not None
    cut = _oldest_whole(committed)
    assert cut is not None
    turns = tuple(
        turn.with_trim(2 if position < cut else 1) if position <= cut else turn
        for position, turn in enumerate(committed.turns)
    )
    stored = Snapshot(committed.run, committed.done, turns)
    c = w.checkpoint
    disk = make_checkpoint(stored, c.tmp, torn=c.torn, at_cut=c.at_cut)
    struck = w.struck if TRIMMED in w.struck else (*w.struck, TRIMMED)
    return make_world(disk, w.tracker, w.process, w.finished, w.runs, w.lock, struck, w.replies, w.second)


def repaired(memory: Snapshot) -> Snapshot:
    """`memory` with every turn whose reply was trimmed left out of the conversation (both-directions).

    Its results leave it, and so do the results it gets later (a half-done batch run again, a
    call settled after the load): their call is not in the conversation either.
    """
    turns = memory.turns
    if not any(turn.trimmed == 1 for turn in turns):
        return memory
    return Snapshot(memory.run, memory.done, tuple(turn.with_trim(2) if turn.trimmed == 1 else turn for turn in turns))
