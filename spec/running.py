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


_BY_IDS: dict[tuple[int, ...], tuple[Ops, Ops, int]] = {}
"""The ids of a program's instructions -> (that program, the shared program equal to it, its hash)."""
_BY_HASH: dict[int, Ops] = {}
"""A program's hash -> the shared program of that hash (the first one met)."""
_SHARED: dict[int, Ops] = {}
"""id -> program, for the shared programs (which `_BY_IDS` keeps alive)."""
_NAMES: dict[str, str] = {}
_SHARED_LIMIT = 1 << 18
"""Entries kept before the tables start afresh: sharing saves memory, it never changes a value."""


def _shared_program(pending: Ops) -> tuple[Ops, int]:
    """The shared tuple equal to `pending`, and its hash.

    Found by its instructions' identities first: equal programs are mostly made of the very
    same instruction objects (the saves' and the interpreter's are made once), and a tuple
    of ids hashes without a call per instruction. A program of other objects is found by its
    value. An entry keeps its program alive, so the ids it is found by stay its instructions'.
    """
    ids = tuple(map(id, pending))
    known = _BY_IDS.get(ids)
    if known is not None:
        return known[1], known[2]
    if len(_BY_IDS) >= _SHARED_LIMIT:
        _forget()
    hashed = hash(pending)
    shared = _BY_HASH.get(hashed)
    if shared is None or shared != pending:  # new (or another program of the same hash: this one stands alone)
        shared = pending
        _BY_HASH.setdefault(hashed, pending)
        _SHARED[id(pending)] = pending
    _BY_IDS[ids] = (pending, shared, hashed)
    return shared, hashed


def _forget() -> None:
    """Start the tables of programs afresh (past their bound: equal programs made after are other tuples)."""
    _BY_IDS.clear()
    _BY_HASH.clear()
    _SHARED.clear()
    _SUFFIXES.clear()


_SUFFIXES: dict[tuple[int, int], tuple[Ops, Ops, int, str]] = {}
"""(id of a program, start) -> (the program, its shared suffix from start, the suffix's hash, the point's name)."""


def _shared_suffix(program: Ops, start: int, point: str) -> tuple[Ops, int, str]:
    """The shared tuple equal to `program[start:]`, its hash, and the shared string equal to `point`.

    A process that goes on from a crash point mostly stops again at a later point of the same
    shared program: its rest is then found by the program's identity, without slicing and
    hashing it again, with the name of the point it stops at (the one the program's
    instruction before `start` names). An entry keeps its program alive, so an id in the
    table is never another tuple's; the table starts afresh with the programs' table.
    """
    name = _NAMES.get(point) or _shared_name(point)
    if _SHARED.get(id(program)) is not program:  # a fresh tuple: shared from here on
        return (*_shared_program(program[start:]), name)
    suffix, hashed = _shared_program(program[start:])
    if len(_SUFFIXES) >= _SHARED_LIMIT:
        _SUFFIXES.clear()
    _SUFFIXES[id(program), start] = (program, suffix, hashed, name)
    return suffix, hashed, name


def _shared_name(name: str) -> str:
    """The shared string equal to `name`."""
    known = _NAMES.get(name)
    if known is None:
        if len(_NAMES) >= _SHARED_LIMIT:
            _NAMES.clear()
        known = _NAMES[name] = name
    return known


_new = object.__new__


class _ProcessLayout:
    """Process's layout without its frozen __setattr__: filled, then made a Process (as spec/world.py's makers)."""

    __slots__ = ("_pending_hash", "memory", "pending", "point")
    memory: Snapshot
    pending: Ops
    point: str
    _pending_hash: int


if sorted(Process.__slots__) != sorted(_ProcessLayout.__slots__):  # a field added to one and not the other
    raise TypeError(f"_ProcessLayout must have Process's slots: {Process.__slots__}")


def stuck_why(process: Process | None) -> str | None:
    """Why `process` can never go on (its next instruction is Stuck: spec/CONVERSATIONS.md 4), or None."""
    if process is None or not process.pending or not isinstance(process.pending[0], Stuck):
        return None
    return process.pending[0].why


def make_process(memory: Snapshot, pending: Ops, point: str) -> Process:
    """Process(memory, pending, point), made fast."""
    return _made(memory, *_shared_program(pending), _shared_name(point))


def make_process_at(memory: Snapshot, program: Ops, start: int, point: str) -> Process:
    """make_process(memory, program[start:], point), faster when `program` is shared (see `_shared_suffix`)."""
    # `_shared_suffix`'s and `_made`'s common path, inlined: the interpreter calls this once a step.
    # An entry whose program is this one was made for a shared program, and holds it alive.
    known = _SUFFIXES.get((id(program), start))
    if known is None or known[0] is not program:
        return _made(memory, *_shared_suffix(program, start, point))
    _, pending, hashed, name = known
    process = _new(_ProcessLayout)
    process.memory = memory
    process.pending = pending
    process.point = name if name == point else _shared_name(point)  # equal strings: compared by identity first
    process._pending_hash = hashed
    process.__class__ = Process  # type: ignore[assignment]  # the same layout: frozen from here on
    return process  # type: ignore[return-value]


def _made(memory: Snapshot, pending: Ops, hashed: int, point: str) -> Process:
    """A Process of a shared program, its hash and a shared point name, made fast."""
    process = _new(_ProcessLayout)
    process.memory = memory
    process.pending = pending
    process.point = point
    process._pending_hash = hashed
    process.__class__ = Process  # type: ignore[assignment]  # the same layout: frozen from here on
    return process  # type: ignore[return-value]
