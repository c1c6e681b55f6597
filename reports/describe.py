"""Worlds in words and as JSON: short descriptions, and what one step changed (a diff, not a dump).

A step's changes are grouped by where they happened: the checkpoint file (its temp file and
the renamed file), the lock file, the tracker, and the process (up, down, its memory). A
snapshot is written like "run-1, turn 1 (create_a=#1, marker create_b, complete)".
"""

from __future__ import annotations

from typing import Any

from crashsweep.spec import approval, invariants
from crashsweep.spec.faults import ARGS_CHANGED
from crashsweep.spec.retries import lost_attempt, timed_out_call
from crashsweep.spec.world import NO_SECOND, Snapshot, Tracker, Turn, World

MODEL_CALLS = "model_calls"
ASKS = "asks"
LOCK_TMP = "lock: tmp written"


def plural(n: int, word: str) -> str:
    """A count and a noun: 1 crash, 2 crashes, 3 steps."""
    if n != 1 and word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return f"{n} {word[:-1]}ies"
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith(('sh', 's')) else 's'}"


def turn_text(turn: Turn) -> str:
    """A turn as "turn 1 (create_a=#1, marker create_b, complete)"."""
    parts = [f"{call}={answer}" for call, answer in turn.results]
    parts += [f"marker {call}" for call in turn.marked if turn.result(call) is None]
    parts += [f"approved {call}" for call in turn.approved]
    parts += [f"failed {call}" for call in turn.failed]
    if turn.complete:
        parts.append("complete")
    return f"turn {turn.index} ({', '.join(parts) or 'no results'})"


def snapshot_text(snapshot: Snapshot | None) -> str:
    """A checkpoint's (or the memory's) content in one line."""
    if snapshot is None:
        return "none"
    turns = ", ".join(turn_text(turn) for turn in snapshot.turns) or "no turns"
    return f"{snapshot.run}{' (done)' if snapshot.done else ''}, {turns}"


def snapshot_changes(old: Snapshot | None, new: Snapshot | None) -> list[str]:
    """What distinguishes snapshot `new` from `old`, item by item."""
    if new is None:
        return ["gone"] if old is not None else []
    if old is None or old.run != new.run:
        return [snapshot_text(new)]
    changes = []
    for turn in new.turns:
        before = old.turns[turn.index - 1] if turn.index <= len(old.turns) else None
        if before is None:
            changes.append(f"+{turn_text(turn)}")
            continue
        changes += [f"{call}={answer}" for call, answer in turn.results if before.result(call) is None]
        changes += [f"marker {call}" for call in turn.marked if call not in before.marked]
        changes += [f"approved {call}" for call in turn.approved if call not in before.approved]
        changes += [f"failed {call}" for call in turn.failed if call not in before.failed]
        if turn.complete and not before.complete:
            changes.append(f"turn {turn.index} complete")
    changes += [f"-turn {turn.index}" for turn in old.turns[len(new.turns) :]]
    if new.done and not old.done:
        changes.append("done")
    return changes


def _versus(old: Snapshot | None, new: Snapshot | None) -> str:
    changes = snapshot_changes(old, new)
    return ", ".join(changes) if changes else "same content"


def tracker_changes(old: Tracker, new: Tracker) -> list[str]:
    """New records (numbered as the tracker answers them) and remembered keys."""
    if new.records[: len(old.records)] != old.records:
        return [f"records now {len(new.records)}"]
    changes = [
        f"+record #{number} {record.call} ({record.run})"
        for number, record in enumerate(new.records, start=1)
        if number > len(old.records)
    ]
    changes += [f"+key {key[:8]}... -> {answer}" for key, answer in new.keys[len(old.keys) :]]
    return changes


def world_text(world: World) -> str:
    """The whole world in one line (for the initial state)."""
    disk = f"checkpoint {snapshot_text(world.checkpoint.committed)}"
    if world.checkpoint.tmp is not None:
        disk += f", temp file {snapshot_text(world.checkpoint.tmp)}"
    records = ", ".join(f"#{n} {r.call}" for n, r in enumerate(world.tracker.records, 1)) or "no records"
    process = f"process at {world.process.point}" if world.process is not None else "no process"
    return f"{disk}; tracker {records}; {process}{'; finished' if world.finished else ''}"


def _durability_changes(before: World, after: World) -> list[str]:
    """A power cut, and an unreadable checkpoint (spec/FAULTS.md section 6)."""
    old, new = before.checkpoint, after.checkpoint
    items = []
    point = after.process.point if after.process is not None else ""
    if point.endswith(": tmp synced"):
        items.append("temp file fsynced")
    elif point.endswith(": dir synced"):
        items.append("directory fsynced: the rename is durable")
    if before.process is not None and after.process is None and old.at_cut is not None and new == old.at_cut:
        items.append("POWER CUT: what was not fsynced is lost")
    if new.torn and not old.torn:
        items.append("checkpoint unreadable: renamed into place before its content was fsynced")
    if old.torn and after.finished and not before.finished:
        items.append("checkpoint unreadable: the loop refuses to start")
    return items


def changes(before: World, after: World, counters: dict[str, int]) -> list[str]:
    """What one step changed, as "where: what" items, in a fixed order."""
    items: list[str] = []
    if before.process is not None and after.process is None and not after.finished:
        items.append(f"process down: memory lost ({snapshot_text(before.process.memory)})")
    elif before.process is None and after.process is not None:
        if after.runs > before.runs:
            items.append(f"process up: new run {after.process.memory.run}")
        else:
            items.append(f"process up: loaded {snapshot_text(before.checkpoint.committed)}")
    elif before.process is not None and after.process is not None:
        memory = snapshot_changes(before.process.memory, after.process.memory)
        if memory:
            items.append(f"memory: {', '.join(memory)}")
    if counters.get(MODEL_CALLS):
        items.append("model called")
    if counters.get(ASKS):
        items.append(f"person asked ({counters[ASKS]})")
    point = after.process.point if after.process is not None else ""
    old, new = before.checkpoint, after.checkpoint
    items.extend(_durability_changes(before, after))
    if old.tmp is not None and new.tmp is None and new.committed == old.tmp:
        items.append(f"checkpoint renamed: {_versus(old.committed, new.committed)}")
    elif new.committed != old.committed and not new.torn:
        items.append(f"checkpoint now {snapshot_text(new.committed)}")
    elif new.tmp is not None and (new.tmp != old.tmp or (point.endswith(": tmp written") and point != LOCK_TMP)):
        items.append(f"temp file written: {_versus(old.committed, new.tmp)}")
    lock, relock = before.lock, after.lock
    if lock.tmp is not None and relock.tmp is None and relock.holder == lock.tmp:
        items.append(f"lock renamed: held by {relock.holder}")
    elif relock.holder != lock.holder:
        items.append(f"lock now held by {relock.holder}")
    elif relock.tmp is not None and (relock.tmp != lock.tmp or point == LOCK_TMP):
        items.append(f"lock temp file written: {relock.tmp}")
    tracker = tracker_changes(before.tracker, after.tracker)
    if tracker:
        items.append(f"tracker: {', '.join(tracker)}")
    items.extend(_spent(before.struck, after.struck))
    why = invariants.stuck(after)
    if why is not None and invariants.stuck(before) is None:
        items.append(f"STUCK: {why}")
    if after.finished and not before.finished and not old.torn:
        items.append(_end_words(before))
    return items or ["nothing changed on disk or at the tracker"]


def snapshot_json(snapshot: Snapshot | None) -> dict[str, Any] | None:
    """A snapshot as JSON: run, done, turns with results, markers and completeness."""
    if snapshot is None:
        return None
    return {
        "run": snapshot.run,
        "done": snapshot.done,
        "turns": [
            {
                "index": turn.index,
                "results": [{"call": call, "answer": answer} for call, answer in turn.results],
                "marked": list(turn.marked),
                "approved": list(turn.approved),
                "failed": list(turn.failed),
                "complete": turn.complete,
            }
            for turn in snapshot.turns
        ],
    }


def world_json(world: World) -> dict[str, Any]:
    """A world as JSON (the process's pending instructions are left out; its point is kept)."""
    return {
        "checkpoint": {"file": snapshot_json(world.checkpoint.committed), "tmp": snapshot_json(world.checkpoint.tmp)},
        "lock": {"holder": world.lock.holder, "tmp": world.lock.tmp},
        "tracker": {
            "records": [
                {"number": n, "call": record.call, "run": record.run}
                for n, record in enumerate(world.tracker.records, start=1)
            ],
            "keys": [{"key": key, "answer": answer} for key, answer in world.tracker.keys],
        },
        "process": (
            None
            if world.process is None
            else {"point": world.process.point, "memory": snapshot_json(world.process.memory)}
        ),
        "finished": world.finished,
        "runs": world.runs,
        "struck": list(world.struck),
        **_second_json(world),
    }


def _second_json(world: World) -> dict[str, Any]:
    """The key `second` (spec/FAULTS.md section 7), present only when a second process lives or a lease was taken."""
    second = world.second
    if second == NO_SECOND:
        return {}
    other = second.other
    return {
        "second": {
            "process": None if other is None else {"point": other.point, "memory": snapshot_json(other.memory)},
            "state": "held" if second.woken else "paused",
            "token": second.token,
            "other_token": second.other_token,
            "fence": second.fence,
        }
    }


def _end_words(before: World) -> str:
    """How the run ended on this step: finished, done already at a restart, or failed at it (RETRIES.md 1.8)."""
    if before.process is not None:
        return "run finished"
    committed = before.checkpoint.committed
    timed = None if committed is None or committed.done else timed_out_call(before.struck, committed.run)
    if timed is not None:
        return f"restart finds {timed}'s attempt timed out, no budget left: the run FAILED"
    return "restart found the run done: exit at once"


def _spent(before: tuple[str, ...], after: tuple[str, ...]) -> list[str]:
    """What the environment spent on this step: a tool's one failure, a layer's retry, the deploy (RETRIES.md)."""
    new = after[len(before) :] if after[: len(before)] == before else ()
    words = []
    failures = [entry for entry in new if " " not in entry and entry != "upgraded"]
    if failures:
        words.append(f"tool failure used up: {', '.join(failures)}")
    retried = [entry.split(" ", 2)[2] for entry in new if entry.startswith("retry ")]
    if retried:
        words.append(f"retried by a layer: {', '.join(retried)}")
    timed = [lost[1] for lost in map(lost_attempt, new) if lost is not None]
    if timed:
        words.append(f"attempt of {', '.join(timed)} never answers: its one-attempt budget is spent")
    if "upgraded" in new:
        words.append("the restart runs the upgrade")
    words.extend(_approvals(new))
    return words


def _approvals(new: tuple[str, ...]) -> list[str]:
    """The person's approvals, their redemptions and changed arguments (spec/CONVERSATIONS.md 2)."""
    words = []
    for entry in new:
        if entry.startswith(approval.GIVEN):
            number, _, kept = entry[len(approval.GIVEN) :].split(" ", 2)
            words.append(f"person approved {kept} (approval #{number})")
        elif entry.startswith(approval.REDEEMED):
            words.append(f"approval #{entry[len(approval.REDEEMED) :]} redeemed")
        elif entry.startswith((approval.UNAPPROVED, approval.MISAPPROVED)):
            words.append(entry.replace(" under ", " applied under ", 1))
        elif entry.startswith(ARGS_CHANGED):
            words.append(f"the model changed the arguments of reply {entry[len(ARGS_CHANGED) :]}")
    return words
