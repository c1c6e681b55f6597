"""The world a crash is played against: what is on disk, what the tracker holds, what is in memory.

Durable and volatile state are different types. `Checkpoint` (the committed file and a stale
temp file) and `Tracker` (the outside world) outlive a crash; `Process` (memory and the rest
of its program) does not. Every type is frozen, slotted and hashable, built from tuples in a
fixed order, so equal histories give equal states whatever PYTHONHASHSEED is.

Each type hashes itself once, when it is made: the explorer hashes a state on every lookup,
and nested values are shared between states, so recomputing the whole tree each time would
dominate the search.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from spec.ops import Ops


@dataclass(frozen=True, slots=True)
class Turn:
    """One tool turn as the loop holds it: results, markers, approvals, failures, completeness."""

    index: int
    results: tuple[tuple[str, str], ...] = ()
    marked: tuple[str, ...] = ()
    complete: bool = False
    approved: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.index, self.results, self.marked, self.complete, self.approved, self.failed))
        )

    def __hash__(self) -> int:
        return self._hash

    def result(self, call: str) -> str | None:
        """The answer received for `call`, or None."""
        for done, answer in self.results:
            if done == call:
                return answer
        return None

    def with_result(self, call: str, answer: str) -> Turn:
        """This turn with `answer` recorded as the result of `call`."""
        return replace(self, results=(*self.results, (call, answer)))

    def with_marker(self, call: str) -> Turn:
        """This turn with an attempt marker for `call`."""
        return self if call in self.marked else replace(self, marked=(*self.marked, call))

    def with_approval(self, call: str) -> Turn:
        """This turn with `call` approved by a person."""
        return self if call in self.approved else replace(self, approved=(*self.approved, call))

    def with_failure(self, call: str) -> Turn:
        """This turn with `call`'s last attempt failed (a transport error, outcome unknown)."""
        return self if call in self.failed else replace(self, failed=(*self.failed, call))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The loop's state as a checkpoint file holds it: run ID, done flag, turns so far."""

    run: str
    done: bool = False
    turns: tuple[Turn, ...] = ()
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.run, self.done, self.turns)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def last(self) -> Turn | None:
        """The last turn, or None before the first reply."""
        return self.turns[-1] if self.turns else None

    def with_last(self, turn: Turn) -> Snapshot:
        """This snapshot with its last turn replaced."""
        return replace(self, turns=(*self.turns[:-1], turn))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The checkpoint on disk: the last file renamed into place, and a temp file a cut save left."""

    committed: Snapshot | None = None
    tmp: Snapshot | None = None
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.committed, self.tmp)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class LockFile:
    """The run lock on disk (agent-loop): the holder's run ID once renamed, and a stale temp."""

    holder: str | None = None
    tmp: str | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """One write the tracker applied, tagged with the call and the run it came from."""

    call: str
    run: str


@dataclass(frozen=True, slots=True)
class Tracker:
    """The outside world: applied writes in order, and remembered key -> first answer."""

    records: tuple[Record, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.records, self.keys)))

    def __hash__(self) -> int:
        return self._hash

    def answer_for(self, key: str) -> str | None:
        """The first answer stored under `key`, or None."""
        for known, answer in self.keys:
            if known == key:
                return answer
        return None

    def count(self, call: str) -> int:
        """How many records `call` has, over every run."""
        return sum(1 for record in self.records if record.call == call)

    def find(self, call: str, run: str) -> str | None:
        """The answer of the first record of `call` in `run` (e.g. "#2"), or None."""
        for number, record in enumerate(self.records, start=1):
            if record == Record(call, run):
                return f"#{number}"
        return None


@dataclass(frozen=True, slots=True)
class Process:
    """A running process: its memory, the instructions it has left, and the point it is at."""

    memory: Snapshot
    pending: Ops
    point: str
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.memory, self.pending, self.point)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class World:
    """Everything: disk, tracker, the process (None when down), and whether the run finished.

    `runs` counts the run IDs handed out so far: it stands for a source of fresh IDs (such as
    a UUID generator) that never repeats, so it lives outside the process. `struck` lists the
    calls whose one-time tool failure (`fails_after_accept`) has already happened.
    """

    checkpoint: Checkpoint = Checkpoint()
    tracker: Tracker = Tracker()
    process: Process | None = None
    finished: bool = False
    runs: int = 0
    lock: LockFile = LockFile()
    struck: tuple[str, ...] = ()
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_hash",
            hash((self.checkpoint, self.tracker, self.process, self.finished, self.runs, self.lock, self.struck)),
        )

    def __hash__(self) -> int:
        return self._hash

    def crashed(self) -> World:
        """The world after a crash: memory is gone, disk and tracker stay."""
        return replace(self, process=None)
