"""trim-context for real (spec/CONVERSATIONS.md 7, FAULTS.md 9): a restart loads its conversation with the oldest cut.

It strikes between two processes, as key-expiry does: at a restart (any process of a scenario
but its first) whose checkpoint holds a turn whose reply is still in the conversation and that
has a result, the sweep cuts the stored conversation of a copy of the world before the restart.
No process is told anything: the restart loads the cut conversation from its own disk.

The checkpoint is the reference loop's (reference/parts.py): `checkpoint.json` in the work
directory, its memory {"run", "done", "turns": [{"index", "results", ...}]}. A turn's place in
the conversation is its `trimmed` entry, as spec/trim.py's `Turn.trimmed`: absent (0), all of
it; 1, its results without its reply (its tool calls); 2, nothing. The loop keeps every turn
whatever the conversation keeps (its results are its record of what was done). Another
program's conversation (a framework's session, which this package cannot import) is handed to
the kind by its adapter (`register`: its chance and its cut); a program neither keeps gives the
kind no chance.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.realsweep.faults.kind import RESTART, Kind
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.world import World
from crashsweep.spec import faults as model

CHECKPOINT = "checkpoint.json"
"""The file whose conversation it cuts: the reference loop's checkpoint (reference/parts.CHECKPOINT_FILE)."""
TRIMMED = "trimmed"
"""A turn's entry that says what the conversation keeps of it: 1, its results alone; 2, nothing."""


Chance = Callable[[World], bool]
"""Whether a saved world's conversation (another program's) holds a turn to cut."""
Cut = Callable[[Path], bool]
"""Cut that conversation once in the work directory given; whether it could."""
OTHERS: list[tuple[Chance, Cut]] = []
"""Other programs' conversations, as their adapters registered them (`register`)."""


def register(chance: Chance, cut: Cut) -> None:
    """Let trim-context cut another program's conversation too: its chance and its cut (once each)."""
    if (chance, cut) not in OTHERS:
        OTHERS.append((chance, cut))


def oldest_whole(memory: Any) -> int | None:
    """The position of the oldest turn whose reply is still in the conversation and that has a result, or None.

    None too for a run that is done, and for anything that is not the reference loop's memory.
    """
    if not isinstance(memory, dict) or memory.get("done") is not False or not isinstance(memory.get("turns"), list):
        return None
    for position, turn in enumerate(memory["turns"]):
        if isinstance(turn, dict) and not turn.get(TRIMMED) and turn.get("results"):
            return position
    return None


def trimmed(memory: dict[str, Any]) -> dict[str, Any]:
    """`memory` with its conversation cut up to and including the reply of the oldest whole turn with a result.

    Every turn before it leaves the conversation whole (2), its reply leaves it (1); later
    turns stay as they are, and every turn keeps its results in the loop's record.
    """
    cut = oldest_whole(memory)
    assert cut is not None, "trim-context strikes only where a turn can be cut"
    turns = [
        {**turn, TRIMMED: 2 if position < cut else 1} if position <= cut else turn
        for position, turn in enumerate(memory["turns"])
    ]
    return {**memory, "turns": turns}


def _memory(data: bytes | None) -> Any:
    """The checkpoint's memory, or None when there is none or it does not read (a power cut's torn file)."""
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


@dataclass(frozen=True)
class TrimContext(Kind):
    """The stored conversation loses its oldest messages, up to and including a turn's reply, before a restart."""

    name = model.TRIM_CONTEXT.name
    at_restart = True

    def restart_chance(self, world: World) -> bool:
        """Whether the checkpoint (or a registered conversation) holds a turn whose reply is in it with a result."""
        if oldest_whole(_memory(world.file(CHECKPOINT))) is not None:
            return True
        return any(chance(world) for chance, _ in OTHERS)

    def before_restart(self, space: Path | None, files: Path | None = None) -> None:
        """Cut the conversation of the checkpoint in the work directory `files` (the tracker is left alone).

        Written as the loop writes it (compact JSON), so that a world the loop saves again
        unchanged is the same world. A work directory without such a checkpoint: the first
        registered conversation that can be cut is.
        """
        assert files is not None, "trim-context cuts the work directory's conversation"
        path = files / CHECKPOINT
        memory = _memory(path.read_bytes()) if path.exists() else None
        if memory is not None and oldest_whole(memory) is not None:
            path.write_bytes(json.dumps(trimmed(memory), separators=(",", ":")).encode("utf-8"))
            return
        cut = next((cut for _, cut in OTHERS if cut(files)), None)
        assert cut is not None, f"{files}: no conversation to cut"

    def restart(self) -> Fault:
        """The move at a restart: "trim-context at restart"."""
        return Fault(self, 0, RESTART)


TRIM_CONTEXT = TrimContext()
