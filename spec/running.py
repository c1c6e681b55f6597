"""A running process as a value: its memory, the instructions it has left, the point it is at.

`crashsweep.spec.world` re-exports `Process` and `make_process`. Many states hold a process at the same
place of the same program with different memories, so processes share their instruction
tuple (and point name) through tables of the values seen so far, and keep the tuple's hash:
the world folds it into its own hash without hashing every instruction again. Sharing never
changes a value: two processes are equal exactly when their memory, instructions and point
are, and the tables start afresh once they grow past a bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from crashsweep.spec.ops import Ops

if TYPE_CHECKING:
    from crashsweep.spec.world import Snapshot


@dataclass(frozen=True, slots=True, eq=False)
class Process:
    """A running process: its memory, the instructions it has left, and the point it is at.

    Processes at the same place of the same program hold one shared tuple of instructions
    (and one point name), hashed once: `_pending_hash` is what the world folds into its hash.
    """

    memory: Snapshot
    pending: Ops
    point: str
    _pending_hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        pending, hashed = _shared_program(self.pending)
        object.__setattr__(self, "pending", pending)
        object.__setattr__(self, "point", _shared_name(self.point))
        object.__setattr__(self, "_pending_hash", hashed)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Process):
            return NotImplemented
        return (
            self.point == other.point
            and self._pending_hash == other._pending_hash
            and self.memory == other.memory
            and self.pending == other.pending
        )

    def __hash__(self) -> int:
        return hash((self.memory._hash, self._pending_hash, self.point))


_PROGRAMS: dict[Ops, tuple[Ops, int]] = {}
_NAMES: dict[str, str] = {}
_SHARED_LIMIT = 1 << 18
"""Entries kept before the tables start afresh: sharing saves memory, it never changes a value."""


def _shared_program(pending: Ops) -> tuple[Ops, int]:
    """The shared tuple equal to `pending`, and its hash."""
    known = _PROGRAMS.get(pending)
    if known is None:
        if len(_PROGRAMS) >= _SHARED_LIMIT:
            _PROGRAMS.clear()
        known = _PROGRAMS[pending] = (pending, hash(pending))
    return known


def _shared_name(name: str) -> str:
    """The shared string equal to `name`."""
    known = _NAMES.get(name)
    if known is None:
        if len(_NAMES) >= _SHARED_LIMIT:
            _NAMES.clear()
        known = _NAMES[name] = name
    return known


_new = object.__new__
_PROCESS_SLOTS = tuple(getattr(Process, name).__set__ for name in ("memory", "pending", "point", "_pending_hash"))


def make_process(memory: Snapshot, pending: Ops, point: str) -> Process:
    """Process(memory, pending, point), made fast."""
    process = _new(Process)
    s_memory, s_pending, s_point, s_pending_hash = _PROCESS_SLOTS
    pending, hashed = _shared_program(pending)
    s_memory(process, memory)
    s_pending(process, pending)
    s_point(process, _shared_name(point))
    s_pending_hash(process, hashed)
    return process
