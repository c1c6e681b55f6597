"""key-expiry for real (spec/FAULTS.md section 3): at a restart the tracker has forgotten every key.

It strikes between two processes, at a restart (any process of a scenario but its first)
while the tracker remembers a key: the sweep makes the tracker forget every key of the saved
world's space before the restart (tracker/store.forget_keys, on a copy of the world). No
process is told anything, so it has no chance inside a process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crashsweep.realsweep.faults.kind import RESTART, Kind
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.tracker.store import KEYS_TABLE, forget_keys
from crashsweep.realsweep.world import World
from crashsweep.spec import faults as model

__all__ = ["KEY_EXPIRY", "RESTART", "KeyExpiry"]


@dataclass(frozen=True)
class KeyExpiry(Kind):
    """The tracker keeps its records and forgets every key, before a restart."""

    name = model.KEY_EXPIRY.name
    at_restart = True

    def restart_chance(self, world: World) -> bool:
        """Whether the saved world's tracker remembers some idempotency key."""
        return any(rows for name, rows in world.tables if name == KEYS_TABLE)

    def before_restart(self, space: Path | None, files: Path | None = None) -> None:
        """Forget every key of the tracker database `space` (the records stay); no database, nothing to forget."""
        if space is not None:
            forget_keys(space)

    def restart(self) -> Fault:
        """The move at a restart: "key-expiry at restart"."""
        return Fault(self, 0, RESTART)


KEY_EXPIRY = KeyExpiry()
