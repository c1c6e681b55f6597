"""The world a crash is played against: what is on disk, what the tracker holds, what is in memory.

Durable and volatile state are different types. `Checkpoint` (the committed file and a stale
temp file) and `Tracker` (the outside world) outlive a crash; `Process` (memory and the rest
of its program) does not. Every type is frozen, slotted and hashable, built from tuples in a
fixed order, so equal histories give equal states whatever PYTHONHASHSEED is.

The parts of a world hash themselves once, when they are made, and the explorer hashes each
world once (a world keeps no hash: it is looked up once, and a kept hash would cost memory in
every state). A step changes one thing, so the types that grow with the job make their
successor in constant time and share the rest with it: `Snapshot.with_last` and
`Snapshot.appended` (spec/memory.py, re-exported here) keep the turns before the last as one
shared tuple, with its hash folded once; `Tracker.appended` (spec/records.py, re-exported
here) adds one cell to its logs and one entry to its indexes, so counting, finding and the
duplicate check are lookups, never scans; processes (spec/running.py, re-exported here)
share their instruction tuples. Constructing any type directly still works and gives an
equal value with the same hash.
"""

from __future__ import annotations

from dataclasses import dataclass

from crashsweep.spec.memory import Snapshot, Turn, make_turn
from crashsweep.spec.records import Record, Tracker
from crashsweep.spec.running import Process, make_process

__all__ = [
    "Checkpoint",
    "LockFile",
    "Process",
    "Record",
    "Second",
    "Snapshot",
    "Tracker",
    "Turn",
    "World",
    "make_checkpoint",
    "make_process",
    "make_turn",
    "make_world",
]


@dataclass(frozen=True, slots=True, eq=False)
class Checkpoint:
    """The checkpoint on disk: the last file renamed into place, and a temp file a cut save left.

    Durability (spec/FAULTS.md, power loss), kept only when the environment may cut the power:
    `torn` says the file at the checkpoint's path cannot be read (an unsynced file renamed into
    place, then a power cut); `at_cut` is what a power cut would leave instead of this disk, or
    None when the disk is durable as it is. With power loss off both keep their defaults, and
    the value (and its hash) is the seed's.

    Its hash is not kept: it folds its snapshots' kept hashes in one step, and a kept hash
    would cost an int object in every state whose save wrote the disk.
    """

    committed: Snapshot | None = None
    tmp: Snapshot | None = None
    torn: bool = False
    at_cut: Checkpoint | None = None

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Checkpoint):
            return NotImplemented
        return (
            self.committed == other.committed
            and self.tmp == other.tmp
            and self.torn == other.torn
            and self.at_cut == other.at_cut
        )

    def __hash__(self) -> int:
        return _checkpoint_hash(self.committed, self.tmp, self.torn, self.at_cut)

    @property
    def _hash(self) -> int:
        return _checkpoint_hash(self.committed, self.tmp, self.torn, self.at_cut)


def _checkpoint_hash(
    committed: Snapshot | None, tmp: Snapshot | None, torn: bool = False, at_cut: Checkpoint | None = None
) -> int:
    parts = (None if committed is None else committed._hash, None if tmp is None else tmp._hash)
    if not torn and at_cut is None:
        return hash(parts)  # the seed's checkpoint, hashed as it always was
    return hash((*parts, torn, None if at_cut is None else at_cut._hash))


@dataclass(frozen=True, slots=True)
class LockFile:
    """The run lock on disk (agent-loop): the holder's run ID once renamed, and a stale temp."""

    holder: str | None = None
    tmp: str | None = None


@dataclass(frozen=True, slots=True)
class Second:
    """A second live process and the fencing tokens (spec/FAULTS.md section 7, `pause`).

    `other` is the process that is not running now: the one the adversary paused (`woken`
    False), or, once that one woke, the restart held at its crash point while the woken one
    runs (`woken` True). `token` is the running process's fencing token, `other_token` the
    other's, and `fence` the newest token handed out, which the tracker and the disk have seen
    (`lease+fencing`). All stay at their defaults unless a lease is taken or a process paused.
    """

    other: Process | None = None
    woken: bool = False
    token: int = 0
    other_token: int = 0
    fence: int = 0

    @property
    def stale(self) -> bool:
        """Whether the running process's fencing token is older than the newest one."""
        return self.token < self.fence


NO_SECOND = Second()
"""No second process and no lease: the world of every scenario without `pause` or a lease."""


@dataclass(frozen=True, slots=True, eq=False)
class World:
    """Everything: disk, tracker, the process (None when down), and whether the run finished.

    `runs` counts the run IDs handed out so far: it stands for a source of fresh IDs (such as
    a UUID generator) that never repeats, so it lives outside the process. `struck` lists the
    calls whose one-time tool failure (`fails_after_accept`) has already happened. `replies`
    counts the replies with calls the model handed out when call IDs are fresh (the model's
    source of new IDs, spec/FAULTS.md); it stays 0 when they are stable. `second` holds a
    second live process and the fencing tokens (spec/FAULTS.md section 7).
    """

    checkpoint: Checkpoint = Checkpoint()
    tracker: Tracker = Tracker()  # noqa: RUF009 (a frozen value: one shared default is safe)
    process: Process | None = None
    finished: bool = False
    runs: int = 0
    lock: LockFile = LockFile()
    struck: tuple[str, ...] = ()
    replies: int = 0
    second: Second = NO_SECOND

    def __eq__(self, other: object) -> bool:
        # The fields of the dataclass, each part compared by identity first (and its hash):
        # equal worlds reached by two paths mostly share their parts, and `a is b or a == b`
        # skips a call of the part's own __eq__ when they do.
        if self is other:
            return True
        if not isinstance(other, World):
            return NotImplemented
        a, b = self.process, other.process
        if not (a is b or a == b):
            return False
        c, d = self.checkpoint, other.checkpoint
        e, f = self.tracker, other.tracker
        return (
            self.runs == other.runs
            and self.finished == other.finished
            and (c is d or c == d)
            and (e is f or e == f)
            and (self.lock is other.lock or self.lock == other.lock)
            and self.struck == other.struck
            and self.replies == other.replies
            and (self.second is other.second or self.second == other.second)
        )

    def __hash__(self) -> int:
        # Not kept: the explorer hashes each world once (one dictionary probe), and a kept
        # hash would cost an int object per state; the parts' hashes are kept and folded in
        # one flat tuple (a checkpoint with power-loss fields folds its own hash instead).
        process, checkpoint, lock, second = self.process, self.checkpoint, self.lock, self.second
        committed, tmp = checkpoint.committed, checkpoint.tmp
        if checkpoint.torn or checkpoint.at_cut is not None:
            disk: object = _checkpoint_hash(committed, tmp, checkpoint.torn, checkpoint.at_cut)
        else:
            disk = None if committed is None else committed._hash
        parts = (
            disk,
            None if tmp is None else tmp._hash,
            lock.holder,
            lock.tmp,
            self.tracker._hash,
            None if process is None else process.memory._hash,
            None if process is None else process._pending_hash,
            None if process is None else process.point,
            self.finished,
            self.runs,
            self.struck,
            self.replies,
        )
        return hash(parts) if second is NO_SECOND or second == NO_SECOND else hash((parts, second))

    def crashed(self) -> World:
        """The world after a crash: memory is gone, disk and tracker stay (and a second process)."""
        w = self
        return make_world(w.checkpoint, w.tracker, None, w.finished, w.runs, w.lock, w.struck, w.replies, w.second)


# Fast constructors. A frozen dataclass's __init__ sets each field through object.__setattr__,
# several times slower than plain attribute stores; the interpreter makes a world or two per
# step, so it uses these (spec/memory.py has a turn's). Each fills an object of a class with
# the very same slots on the same base and no frozen __setattr__ (plain stores, the fastest
# Python has), then makes it the frozen class: Python lets an object change its class to one
# of the same layout (a class lays its slots out in the order of their names, and checks the
# two layouts at each change). Each gives a value equal to (and hashed like) the
# constructor's, of that type, frozen from then on.
_new = object.__new__


class _WorldLayout:
    """World's layout without its frozen __setattr__: `make_world` fills one, then makes it a World."""

    __slots__ = ("checkpoint", "finished", "lock", "process", "replies", "runs", "second", "struck", "tracker")
    checkpoint: Checkpoint
    tracker: Tracker
    process: Process | None
    finished: bool
    runs: int
    lock: LockFile
    struck: tuple[str, ...]
    replies: int
    second: Second


class _CheckpointLayout:
    """Checkpoint's layout without its frozen __setattr__ (see `_WorldLayout`)."""

    __slots__ = ("at_cut", "committed", "tmp", "torn")
    committed: Snapshot | None
    tmp: Snapshot | None
    torn: bool
    at_cut: Checkpoint | None


for _frozen, _layout in ((World, _WorldLayout), (Checkpoint, _CheckpointLayout)):
    if sorted(_frozen.__slots__) != sorted(_layout.__slots__):  # a field added to one and not the other
        raise TypeError(f"{_layout.__name__} must have {_frozen.__name__}'s slots: {_frozen.__slots__}")


def make_world(
    checkpoint: Checkpoint,
    tracker: Tracker,
    process: Process | None,
    finished: bool,
    runs: int,
    lock: LockFile,
    struck: tuple[str, ...],
    replies: int = 0,
    second: Second = NO_SECOND,
) -> World:
    """World(checkpoint, tracker, process, finished, runs, lock, struck, replies, second), made fast."""
    world = _new(_WorldLayout)
    world.checkpoint = checkpoint
    world.tracker = tracker
    world.process = process
    world.finished = finished
    world.runs = runs
    world.lock = lock
    world.struck = struck
    world.replies = replies
    world.second = second
    world.__class__ = World  # type: ignore[assignment]  # the same layout: frozen from here on
    return world  # type: ignore[return-value]


def make_checkpoint(
    committed: Snapshot | None, tmp: Snapshot | None, *, torn: bool = False, at_cut: Checkpoint | None = None
) -> Checkpoint:
    """Checkpoint(committed, tmp, torn, at_cut), made fast."""
    checkpoint = _new(_CheckpointLayout)
    checkpoint.committed = committed
    checkpoint.tmp = tmp
    checkpoint.torn = torn
    checkpoint.at_cut = at_cut
    checkpoint.__class__ = Checkpoint  # type: ignore[assignment]  # the same layout: frozen from here on
    return checkpoint  # type: ignore[return-value]
