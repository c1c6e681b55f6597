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

from crashsweep.spec.ops import Ops, Stuck

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
_SHARED: dict[int, Ops] = {}
"""id -> program, for the programs in `_PROGRAMS` (which keeps them alive)."""
_NAMES: dict[str, str] = {}
_SHARED_LIMIT = 1 << 18
"""Entries kept before the tables start afresh: sharing saves memory, it never changes a value."""


def _shared_program(pending: Ops) -> tuple[Ops, int]:
    """The shared tuple equal to `pending`, and its hash."""
    known = _PROGRAMS.get(pending)
    if known is None:
        if len(_PROGRAMS) >= _SHARED_LIMIT:
            _PROGRAMS.clear()
            _SHARED.clear()
        known = _PROGRAMS[pending] = (pending, hash(pending))
        _SHARED[id(pending)] = pending
    return known


_SUFFIXES: dict[tuple[int, int], tuple[Ops, Ops, int]] = {}
"""(id of a program, start) -> (the program, its shared suffix from start, the suffix's hash)."""


def _shared_suffix(program: Ops, start: int) -> tuple[Ops, int]:
    """The shared tuple equal to `program[start:]`, and its hash.

    A process that goes on from a crash point mostly stops again at a later point of the same
    shared program: its rest is then found by the program's identity, without slicing and
    hashing it again. An entry keeps its program alive, so an id in the table is never
    another tuple's; the table starts afresh with the programs' table.
    """
    if _SHARED.get(id(program)) is not program:  # a fresh tuple: shared from here on
        return _shared_program(program[start:])
    known = _SUFFIXES.get((id(program), start))
    if known is not None and known[0] is program:
        return known[1], known[2]
    suffix, hashed = _shared_program(program[start:])
    if len(_SUFFIXES) >= _SHARED_LIMIT:
        _SUFFIXES.clear()
    _SUFFIXES[id(program), start] = (program, suffix, hashed)
    return suffix, hashed


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


def stuck_why(process: Process | None) -> str | None:
    """Why `process` can never go on (its next instruction is Stuck: spec/CONVERSATIONS.md 4), or None."""
    if process is None or not process.pending or not isinstance(process.pending[0], Stuck):
        return None
    return process.pending[0].why


def make_process(memory: Snapshot, pending: Ops, point: str) -> Process:
    """Process(memory, pending, point), made fast."""
    return _made(memory, *_shared_program(pending), point)


def make_process_at(memory: Snapshot, program: Ops, start: int, point: str) -> Process:
    """make_process(memory, program[start:], point), faster when `program` is shared (see `_shared_suffix`)."""
    # `_shared_suffix`'s and `_made`'s common path, inlined: the interpreter calls this once a step.
    known = _SUFFIXES.get((id(program), start)) if _SHARED.get(id(program)) is program else None
    if known is None or known[0] is not program:
        return _made(memory, *_shared_suffix(program, start), point)
    process = _new(Process)
    s_memory, s_pending, s_point, s_pending_hash = _PROCESS_SLOTS
    s_memory(process, memory)
    s_pending(process, known[1])
    s_point(process, _NAMES.get(point) or _shared_name(point))
    s_pending_hash(process, known[2])
    return process


def _made(memory: Snapshot, pending: Ops, hashed: int, point: str) -> Process:
    process = _new(Process)
    s_memory, s_pending, s_point, s_pending_hash = _PROCESS_SLOTS
    s_memory(process, memory)
    s_pending(process, pending)
    s_point(process, _shared_name(point))
    s_pending_hash(process, hashed)
    return process
