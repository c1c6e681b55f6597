"""What of a world its future can observe: the state key the explorer merges worlds by.

The rules are in SEMANTICS.md (section 11, the state key). In short, a world's key is the
world with what no step, crash point, counter, property or measure ever reads left out:
- the tools' answers: a record's number ("#3") reaches memory, a checkpoint or an
  instruction still to run, but the loop only ever asks whether a call has a result;
- the tracker's order and its count of duplicates: of its records the key keeps the
  (call, run) pairs it holds and whether some call has more than one record (the measure
  `dups` is summed along the path instead: variants/loop_model.py), and of its keys the set;
- the names of the runs: each run ID run-N by its age (the count of IDs handed out minus N),
  and of that count only whether it is zero (a fresh ID is new whatever its number);
- a temp file no living process reads before it writes it again.
A duplicate shifts every later answer and record, so without the key each crash point
starts a tail of states that never meets another; with it, tails with the same figures meet.

Keys are built incrementally, so a step costs the same at any length of the job:
- a turn's shape is a small tuple, one shared object per value;
- the turns before the last are a `Chain` folded from the snapshot's predecessor
  (`Snapshot._from`); equal sequences folded from the same chain are one object;
- the tracker's pairs, calls and keys are `Members`, folded along its logs, remembered per
  log cell (spec/keytracker.py, spec/keyparts.py);
- a program's shape is made and hashed once per shared program (spec/keyprograms.py);
- the key is one flat tuple of these parts (a probe hashes it once, and compares parts that
  are mostly the same objects), and a world with no process, whose parts are those of a key
  made before (the crashes along a stretch that changes neither disk nor tracker), gets that key.
The tables that share these parts belong to one `WorldKeys`, which a search holds while it
runs: nothing of a finished search stays behind. Sharing only saves time: equality is exact
whatever was shared.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from operator import itemgetter
from typing import Any

from crashsweep.spec import keyprograms
from crashsweep.spec.cells import unroll
from crashsweep.spec.keyparts import LIMIT, ByIdentity, Chain, Hashed, Members, shared
from crashsweep.spec.keyprograms import Program
from crashsweep.spec.keytracker import TrackerKeys
from crashsweep.spec.memory import Cells, Snapshot, Turn
from crashsweep.spec.ops import Ops
from crashsweep.spec.running import Process
from crashsweep.spec.world import NO_SECOND, Checkpoint, LockFile, Second, World

__all__ = ["Chain", "Members", "WorldKeys", "world_key"]

_STARTED, _UNSTARTED = "some run ID handed out", "no run ID handed out"
"""What a key with its runs named by age keeps of `World.runs` (a string: never equal to a count)."""
_RUN_ID = re.compile(r"\brun-([1-9][0-9]*)\b")
"""A run ID as the model makes them (spec/process.py: run-1, run-2, ... in the order handed out)."""
_RUN_NUMBER = re.compile(r"run-([1-9][0-9]*)")
_CALL = itemgetter(0)
"""A result's call (a turn's results are (call, answer) pairs)."""


def world_key(world: World, names: Iterable[str] = ()) -> Hashable:
    """The key of one world on its own (tables of its own; a search keeps one `WorldKeys` for all its worlds)."""
    return WorldKeys(names)(world)


class WorldKeys:
    """The state key of one search's worlds, and the tables that share the key's parts among them.

    A search makes one (LoopModel.key) and calls it on every world it reaches; the tables live
    as long as the search needs them, so nothing of a finished search stays behind in the module.
    `names` are the names a key may be derived from (the job's writes: the key of a world whose
    runs are renamed keeps a key as its name; a key derived from another name stays a digest).
    """

    __slots__ = (
        "_aging",
        "_chains",
        "_checkpoints",
        "_idle",
        "_members",
        "_numbers",
        "_prefixes",
        "_programs",
        "_shapes",
        "_slots",
        "_snapshots",
        "_struck",
        "_trackers",
    )

    def __init__(self, names: Iterable[str] = (), texts: Iterable[str] = ()) -> None:
        self._chains: dict[tuple[int, Hashable], Chain] = {}
        self._members: dict[tuple[int, Hashable], Members] = {}
        self._trackers = TrackerKeys(names, self._with)
        self._aging = not any(_RUN_ID.search(text) for text in (*names, *texts))
        """Whether run IDs may be named by their age: no call ID looks like one (rule 3)."""
        self._numbers: dict[str, int | None] = {}
        """A run ID -> its number (run-3: 3), or None for an ID of another form."""
        self._shapes: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        """A turn's shape -> the one object of its value (tuples compare by identity first)."""
        self._prefixes: ByIdentity[Cells, Chain | None] = ByIdentity()
        """A snapshot's prefix -> the chain of its turns' shapes."""
        self._snapshots: ByIdentity[Snapshot, Hashable] = ByIdentity()
        """A snapshot -> its shape (its run left out): a checkpoint's lasts many steps."""
        self._checkpoints: ByIdentity[Checkpoint, Hashable] = ByIdentity()
        """A checkpoint -> its shape: a disk lasts from one save to the next."""
        self._programs: ByIdentity[Ops, Program] = ByIdentity()
        """A (shared) program -> its shape, and whether it reads a temp file before it writes it."""
        self._slots: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        """(count of runs, the places' runs, a cut's runs) -> the age of each place's run."""
        self._struck: ByIdentity[tuple[str, ...], tuple[int, tuple[str, ...] | None]] = ByIdentity()
        """`World.struck` -> (the count of runs, its entries with each run ID named by its age, or None)."""
        self._idle: dict[tuple[int, ...], tuple[Any, ...]] = {}
        """A world with no process, by its parts' identities and its counts -> (those parts, its key)."""

    def __call__(self, world: World) -> Hashable:
        """What of `world` its future can observe (SEMANTICS.md section 11): worlds with equal keys are one node.

        Called once a step: the common paths read the tables directly (`ByIdentity.table`), and
        the running process's program is looked up once for both its shape and its temp files.
        """
        second, process, checkpoint, lock = world.second, world.process, world.checkpoint, world.lock
        ident: tuple[int, ...] = ()
        if process is None:
            # A world with no process (a crash's, mostly: crashes along a stretch that changes
            # neither disk nor tracker leave equal worlds): its key, by its parts' identities.
            tracker, struck = world.tracker, world.struck
            ident = (id(checkpoint), id(tracker), id(lock), id(struck), id(second), world.runs, world.finished)
            idle = self._idle.get(ident)
            if (
                idle is not None
                and idle[0] is checkpoint
                and idle[1] is tracker
                and idle[2] is lock
                and idle[3] is struck
                and idle[4] is second
                and idle[5] == world.replies
            ):
                known: Hashable = idle[6]
                return known
        found = self._key(world, second, process, checkpoint, lock)
        if ident:
            if len(self._idle) >= LIMIT:
                self._idle.clear()
            self._idle[ident] = (checkpoint, world.tracker, lock, world.struck, second, world.replies, found)
        return found

    def _key(
        self, world: World, second: Second, process: Process | None, checkpoint: Checkpoint, lock: LockFile
    ) -> Hashable:
        """The key of `world`, whose parts the caller read: one flat tuple of the parts' shapes.

        (committed file, temp file, torn, what a cut would leave, tracker, memory, program, point,
        finished, runs handed out, the places' runs, struck, replies, a second process). A part
        that is absent is None in every place it has (a process's memory never is).
        """
        other = None
        others: Hashable = None
        if second is not NO_SECOND and second != NO_SECOND:
            other = second.other
            others = (self.process(other), second.woken, second.token, second.other_token, second.fence)
        snapshots = self._snapshots.table
        program: Program | None = None
        snapshot: Hashable = None
        program_shape: Hashed | None = None
        point = memory_run = None
        if process is not None:
            pending, memory = process.pending, process.memory
            known_program = self._programs.table.get(id(pending))
            if known_program is not None and known_program[0] is pending:
                program = known_program[1]
            else:
                program = self._program(pending, process._pending_hash)
            known = snapshots.get(id(memory))
            snapshot = known[1] if known is not None and known[0] is memory else self.snapshot(memory)
            program_shape, point, memory_run = program[0], process.point, memory.run
        committed, tmp, cut = checkpoint.committed, checkpoint.tmp, checkpoint.at_cut
        holder, lock_tmp = lock.holder, lock.tmp
        if cut is None and (tmp is not None or lock_tmp is not None):
            # A temp file no living process reads before it writes it again is left out (rule 4).
            reads_tmp = reads_lock = False
            if program is not None:
                reads_tmp, reads_lock = program[1], program[2]
            if other is not None:
                _, reads, reads_its_lock = self._program(other.pending)
                reads_tmp, reads_lock = reads_tmp or reads, reads_lock or reads_its_lock
            tmp = tmp if reads_tmp else None
            lock_tmp = lock_tmp if reads_lock else None
        committed_shape: Hashable = None
        committed_run = tmp_run = None
        if committed is not None:
            known = snapshots.get(id(committed))
            committed_shape = known[1] if known is not None and known[0] is committed else self.snapshot(committed)
            committed_run = committed.run
        tmp_shape = None if tmp is None else self.snapshot(tmp)
        if tmp is not None:
            tmp_run = tmp.run
        cut_shape = cut_runs = None
        if cut is not None:
            cut_shape, cut_runs = self.checkpoint(cut), _disk_runs(cut)
        other_run = None if other is None else other.memory.run
        tracker = world.tracker
        entry = self._trackers._tracked.get(id(tracker))
        if entry is None or entry[0] is not tracker:
            entry = self._trackers.entry(tracker)
        struck: tuple[str, ...] = world.struck
        handed: Hashable = world.runs
        runs = (memory_run, committed_run, tmp_run, other_run, holder, lock_tmp)
        known_places = self._slots.get((handed, runs, cut_runs)) if self._aging else None
        if known_places is not None and not struck and entry[2] == handed:  # `_aged`'s common path: all known
            aged: tuple[Hashable, tuple[Any, ...], tuple[str, ...]] | None = (entry[3], known_places, struck)
        else:
            aged = self._aged(world, runs, cut_runs, entry)
        if aged is None:  # an ID of another form: every run ID kept, and their count
            shape: Hashable = self._trackers.exact(entry)
            places: Hashable = (memory_run, committed_run, tmp_run, cut_runs, other_run, holder, lock_tmp)
        else:
            shape, places, struck = aged
            handed = _STARTED if world.runs else _UNSTARTED
        return (
            committed_shape,
            tmp_shape,
            checkpoint.torn,
            cut_shape,
            shape,
            snapshot,
            program_shape,
            point,
            world.finished,
            handed,
            places,
            struck,
            world.replies,
            others,
        )

    def _aged(
        self, world: World, runs: tuple[str | None, ...], cut_runs: tuple[str | None, ...] | None, entry: list[Any]
    ) -> tuple[Hashable, tuple[Any, ...], tuple[str, ...]] | None:
        """The tracker's shape, the places' runs and `struck` with each run ID named by its age (rule 3).

        None when some run ID is of another form than run-N with N at most the count handed out
        (a world made by hand), or a call ID looks like one: the key then keeps the IDs as they are.
        """
        if not self._aging:
            return None
        handed = world.runs
        places = self._slots.get((handed, runs, cut_runs))
        if places is None:
            places = self._places(handed, runs, cut_runs)
            if places is None:
                return None
        struck = self._aged_struck(world.struck, handed) if world.struck else ()
        if struck is None:
            return None
        if entry[2] != handed:
            for run in entry[1]:
                number = self._number(run)
                if number is None or number > handed:
                    return None
            entry[2], entry[3] = handed, self._trackers.aged(entry, lambda run: handed - (self._number(run) or 0))
        return entry[3], places, struck

    def _places(
        self, handed: int, runs: tuple[str | None, ...], cut_runs: tuple[str | None, ...] | None
    ) -> tuple[Any, ...] | None:
        """The age of each place's run (None: no run there), remembered; None if an ID is of another form."""
        ages: list[Any] = []
        for run in (*runs[:3], cut_runs, *runs[3:]):
            if run is None:
                ages.append(None)
            elif isinstance(run, tuple):  # what a power cut would leave
                numbers = [None if cut is None else self._number(cut) for cut in run]
                if any(n is None and cut is not None for n, cut in zip(numbers, run, strict=True)):
                    return None
                if any(n is not None and n > handed for n in numbers):
                    return None
                ages.append(tuple(None if n is None else handed - n for n in numbers))
            else:
                number = self._number(run)
                if number is None or number > handed:
                    return None
                ages.append(handed - number)
        places = tuple(ages)
        if len(self._slots) >= LIMIT:
            self._slots.clear()
        self._slots[handed, runs, cut_runs] = places
        return places

    def _number(self, run: str) -> int | None:
        """The number of a run ID run-N (remembered), or None for an ID of another form."""
        numbers = self._numbers
        if run in numbers:
            return numbers[run]
        found = _RUN_NUMBER.fullmatch(run)
        number = None if found is None else int(found[1])
        if len(numbers) >= LIMIT:
            numbers.clear()
        numbers[run] = number
        return number

    def _aged_struck(self, struck: tuple[str, ...], handed: int) -> tuple[str, ...] | None:
        """`struck`'s entries with each run ID run-N written as its age (None if some N is past the count)."""
        known = self._struck.find(struck)
        if known is not None and known[1][0] == handed:
            return known[1][1]
        past = False

        def age(found: re.Match[str]) -> str:
            nonlocal past
            number = int(found[1])
            past = past or number > handed
            return f"\x00{handed - number}"

        aged: tuple[str, ...] | None = tuple(_RUN_ID.sub(age, entry) for entry in struck)
        if past:
            aged = None
        self._struck.keep(struck, (handed, aged))
        return aged

    # --- memory: turns with their answers left out ---

    def turn(self, turn: Turn) -> tuple[Any, ...]:
        """The turn with its answers left out: which calls have a result, and the rest as it is."""
        calls = tuple(map(_CALL, turn.results))
        shape: tuple[Any, ...] = (
            turn.index,
            calls,
            turn.marked,
            turn.complete,
            turn.approved,
            turn.failed,
            turn.ids,
            turn.args,
        )
        if turn.trimmed:
            shape = (*shape, turn.trimmed)  # what trim-context left of it (CONVERSATIONS.md 7)
        shapes = self._shapes
        known = shapes.get(shape)
        if known is None:
            if len(shapes) >= LIMIT:
                shapes.clear()
            known = shapes[shape] = shape
        return known

    def _then(self, chain: Chain | None, item: Hashable) -> Chain:
        """The shared chain `chain` then `item`."""
        return shared(self._chains, chain, item, lambda: Chain(chain, item))

    def _with(self, members: Members | None, item: Hashable) -> Members:
        """The shared set `members` with `item` added (an item not in it)."""
        return shared(self._members, members, item, lambda: Members(members, item))

    def prefix(self, snapshot: Snapshot) -> Chain | None:
        """The shapes of the snapshot's turns before the last, as a chain (None: no such turn)."""
        back: list[Snapshot] = []  # snapshots whose prefix is not known yet, newest first
        here: Snapshot | None = snapshot
        chain: Chain | None = None
        while here is not None:
            known = self._prefixes.find(here._prefix)
            if known is not None:
                chain = known[1]
                break
            base = here._from
            if base is None:  # built whole: fold its prefix turn by turn
                for turn in unroll(here._prefix, here._count):
                    chain = self._then(chain, self.turn(turn))
                self._prefixes.keep(here._prefix, chain)
                break
            back.append(here)
            here = base
        for later in reversed(back):
            base = later._from
            assert base is not None
            assert base._last is not None
            chain = self._then(chain, self.turn(base._last))
            self._prefixes.keep(later._prefix, chain)
        return chain

    def snapshot(self, snapshot: Snapshot | None) -> Hashable:
        """The snapshot with its answers and its run left out (None for no snapshot; the run is a slot of the key)."""
        if snapshot is None:
            return None
        table = self._snapshots.table
        known = table.get(id(snapshot))
        if known is not None and known[0] is snapshot:
            return known[1]
        prefix = snapshot._prefix
        found = self._prefixes.table.get(id(prefix))  # `prefix`'s common path: its turns' chain is known
        chain = found[1] if found is not None and found[0] is prefix else self.prefix(snapshot)
        last = snapshot._last
        shape = (snapshot.done, chain, None if last is None else self.turn(last))
        if len(table) >= LIMIT:
            table.clear()
        table[id(snapshot)] = (snapshot, shape)
        return shape

    # --- instructions still to run: a Store's answer left out ---

    def program(self, program: Ops) -> Ops:
        """The program with every Store's answer left out (nested ones too)."""
        return self._program(program)[0].items

    def _program(self, program: Ops, hashed: int | None = None) -> Program:
        """The program's shape (hashed once), and whether it reads the checkpoint's, and the lock's, temp file first.

        `hashed` is hash(program) when the caller has it (a process keeps its program's).
        """
        known = self._programs.table.get(id(program))
        if known is not None and known[0] is program:
            return known[1]
        found = keyprograms.entry(program, hashed)
        self._programs.keep(program, found)
        return found

    def process(self, process: Process | None) -> Hashable:
        """The process with its answers and its run left out (None for no process)."""
        if process is None:
            return None
        memory = process.memory
        known = self._snapshots.table.get(id(memory))
        snapshot = known[1] if known is not None and known[0] is memory else self.snapshot(memory)
        return (snapshot, self._program(process.pending)[0], process.point)

    # --- the world ---

    def checkpoint(self, checkpoint: Checkpoint | None) -> Hashable:
        """The checkpoint (and what a power cut would leave) with the answers and runs left out."""
        if checkpoint is None:
            return None
        known = self._checkpoints.find(checkpoint)
        if known is not None:
            return known[1]
        shape = (
            self.snapshot(checkpoint.committed),
            self.snapshot(checkpoint.tmp),
            checkpoint.torn,
            self.checkpoint(checkpoint.at_cut),
        )
        self._checkpoints.keep(checkpoint, shape)
        return shape


def _disk_runs(checkpoint: Checkpoint) -> tuple[str | None, ...]:
    """The runs of the snapshots a checkpoint (and what a cut of it would leave) holds, in order."""
    committed, tmp, cut = checkpoint.committed, checkpoint.tmp, checkpoint.at_cut
    return (
        None if committed is None else committed.run,
        None if tmp is None else tmp.run,
        *(() if cut is None else _disk_runs(cut)),
    )
