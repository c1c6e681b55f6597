"""The environment's moves beside a crash: fault kinds, each a small value (spec/FAULTS.md).

A fault kind says where it is enabled (`enabled`, a predicate of the world) and what it does
to the world (`strike`); after a strike the process goes on (or, stopped, restarts) as usual.
The model offers every enabled kind as an action of kind "fault", which the explorer counts
against the same budget as crashes. Adding a kind means one value here, its rules in
spec/FAULTS.md and its rule in the tests' replay oracle; nothing else changes.

- `lost-reply`: at `tracker accepted <call>` (the tracker applied the write), the reply is
  lost: the process gets a transport error, as for `fails_after_accept` (SITUATIONS.md 2).
- `key-expiry`: at a restart, the tracker has forgotten every key it remembered.
- `wrong-answer`: at a pause before a person answers on rung 3, the answer is the wrong one.
- `power-loss`: at a crash point where the disk holds something not yet durable, the power
  goes: the process dies and every disk step not made durable is undone (spec/durability.py).
- `pause`: at a crash point the process is suspended, not killed; a restart starts beside it,
  and the paused one wakes later with its stale memory (spec/pause.py, FAULTS.md section 7).
- `changed-args`: at `reply k arrived` of a re-asked reply, the model proposes the same calls
  with other arguments (spec/CONVERSATIONS.md 2.3).
- `trim-context`: at a restart, the conversation is loaded with its oldest messages dropped,
  up to and including a turn's reply whose results stay (spec/CONVERSATIONS.md 7, spec/trim.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crashsweep.spec import durability, trim
from crashsweep.spec.ops import AppendTurn, AskPerson, Failed, Pause, Point, Store
from crashsweep.spec.pause import pausable, suspend
from crashsweep.spec.process import ASKED, CHANGED_ARGS
from crashsweep.spec.records import Tracker
from crashsweep.spec.world import World, make_process, make_world

ACCEPTED = "tracker accepted "


@dataclass(frozen=True, slots=True)
class FaultKind:
    """One kind of fault: its CLI name, a one-line summary, where it is enabled, what it does."""

    name: str
    summary: str
    enabled: Callable[[World], bool]
    strike: Callable[[World], World]
    stops: bool = False
    """The strike ends the process (a power cut): its restart is the next edge, not part of this one."""


def _reply_pending(world: World) -> bool:
    """At `tracker accepted C`, with the tool's reply still to come (`tool returned C` next)."""
    process = world.process
    if process is None or not process.point.startswith(ACCEPTED) or not process.pending:
        return False
    return process.pending[0] == Point(f"tool returned {process.point[len(ACCEPTED) :]}")


def _lose_reply(world: World) -> World:
    """The reply is lost: instead of `tool returned C` and its result, `tool failed C` and the error.

    The error carries the request and the rest of the attempt, for a retry layer that catches it
    (spec/RETRIES.md); without one the interpreter drops the rest, as for any error.
    """
    process = world.process
    assert process is not None
    call = process.point[len(ACCEPTED) :]
    store = process.pending[1]
    again = store.again if isinstance(store, Store) else None
    failing = (Point(f"tool failed {call}"), Failed(call, again), *process.pending[2:])
    lost = make_process(process.memory, failing, process.point)
    w = world
    return make_world(w.checkpoint, w.tracker, lost, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)


def _keys_held_at_restart(world: World) -> bool:
    """A restart is due (no process, not the first start) and the tracker remembers some key."""
    w = world
    return w.process is None and not w.finished and w.runs > 0 and bool(w.tracker.keys) and w.second.other is None


def _forget_keys(world: World) -> World:
    """The tracker keeps its records and forgets every key."""
    w = world
    forgot = Tracker(records=w.tracker.records)
    return make_world(w.checkpoint, forgot, w.process, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)


def _person_about_to_answer(world: World) -> bool:
    """The process waits at the pause before a person's answer."""
    process = world.process
    return process is not None and len(process.pending) > 1 and isinstance(process.pending[1], AskPerson)


def _answer_wrongly(world: World) -> World:
    """The person's answer will be the wrong one."""
    process = world.process
    assert process is not None
    ask = process.pending[1]
    assert isinstance(ask, AskPerson)
    wrong = AskPerson(ask.call, ask.keyed, wrong=True)
    erring = make_process(process.memory, (wrong, *process.pending[2:]), process.point)
    w = world
    return make_world(w.checkpoint, w.tracker, erring, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)


# Power loss (spec/FAULTS.md section 6).


def _power_cut_loses_something(world: World) -> bool:
    """At a crash point (not a pause), with a disk step not yet durable: else a cut is just a crash."""
    process = world.process
    if process is None or (process.pending and isinstance(process.pending[0], Pause)):
        return False
    return durability.at_risk(world.checkpoint)


def _cut_power(world: World) -> World:
    """The process dies and the checkpoint is what the cut leaves of it; the tracker is elsewhere and keeps all."""
    w = world
    disk = durability.power_cut(w.checkpoint)
    return make_world(disk, w.tracker, None, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)


POWER_LOSS = FaultKind(
    durability.POWER_LOSS,
    "the power goes: the process dies and what was not fsynced is lost",
    _power_cut_loses_something,
    _cut_power,
    stops=True,
)

LOST_REPLY = FaultKind("lost-reply", "the tracker applies a write and its reply is lost", _reply_pending, _lose_reply)
KEY_EXPIRY = FaultKind(
    "key-expiry", "at a restart the tracker has forgotten every key", _keys_held_at_restart, _forget_keys
)
WRONG_ANSWER = FaultKind(
    "wrong-answer", "a person asked on rung 3 answers wrongly", _person_about_to_answer, _answer_wrongly
)
# --- changed-args (CONVERSATIONS.md 2.3): the model, asked again, proposes other arguments ---
ARGS_CHANGED = "args changed "


def _reasked_reply_arriving(world: World) -> bool:
    """At `reply k arrived` of a reply handed out before, not yet struck at this arrival (FAULTS.md 8, rule 2).

    A strike appends the reply at once, so at a point this always holds; the guard stays as the rule's statement.
    """
    process = world.process
    if process is None or not process.pending or not process.point.startswith("reply "):
        return False
    append = process.pending[0]
    if not isinstance(append, AppendTurn) or append.args != 1:
        return False
    k = process.memory.size + 1
    return world.struck.count(f"{ASKED}{k}") > 1


def _change_args(world: World) -> World:
    """Every call of the arriving reply carries the next version of its arguments."""
    process = world.process
    assert process is not None
    append = process.pending[0]
    assert isinstance(append, AppendTurn)
    k = process.memory.size + 1
    struck = (*world.struck, f"{ARGS_CHANGED}{k}")
    changed = AppendTurn(append.ids, args=1 + struck.count(f"{ARGS_CHANGED}{k}"))
    moved = make_process(process.memory, (changed, *process.pending[1:]), process.point)
    w = world
    return make_world(w.checkpoint, w.tracker, moved, w.finished, w.runs, w.lock, struck, w.replies, w.second)


# --- pause (FAULTS.md section 7): a second live process ---
PAUSE = FaultKind("pause", "the process is paused, not dead: a restart runs beside it", pausable, suspend)

CHANGED_ARGS_FAULT = FaultKind(
    CHANGED_ARGS,
    "the model, asked again after a crash, proposes the same calls with other arguments",
    _reasked_reply_arriving,
    _change_args,
)

TRIM_CONTEXT = FaultKind(
    trim.TRIM_CONTEXT,
    "at a restart the conversation is loaded with its oldest messages dropped, a turn's results without its calls",
    trim.trimmable,
    trim.trim,
)

FAULTS: dict[str, FaultKind] = {
    kind.name: kind
    for kind in (LOST_REPLY, KEY_EXPIRY, WRONG_ANSWER, POWER_LOSS, PAUSE, CHANGED_ARGS_FAULT, TRIM_CONTEXT)
}
"""Every fault kind, by CLI name, in a fixed order."""

CALL_IDS = ("stable", "fresh")
"""The model's call IDs on a re-ask: the same (`stable`) or new ones (`fresh`)."""


def fault_counter(kind: str) -> str:
    """The counter a fault edge bumps, tallying the faults of `kind` over scenarios (`fault.lost-reply`)."""
    return f"fault.{kind}"


class FaultError(ValueError):
    """A fault list or call-ID mode that cannot be used; the message names the bad value."""


def parse_faults(text: str) -> tuple[str, ...]:
    """The fault kinds named in `text` ("k1,k2"; empty: none), in registry order."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if name not in FAULTS:
            raise FaultError(f"unknown fault {name!r} (known: {', '.join(FAULTS)})")
    return tuple(name for name in FAULTS if name in names)


def parse_call_ids(text: str) -> bool:
    """Whether `text` asks for fresh call IDs ("stable" or "fresh")."""
    if text not in CALL_IDS:
        raise FaultError(f"unknown --call-ids {text!r} (known: {', '.join(CALL_IDS)})")
    return text == "fresh"
