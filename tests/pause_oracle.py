"""The replay oracle with a second live process: `pause` and the lock policies (spec/FAULTS.md section 7).

What: the imperative loop of tests/replay_oracle.py, with two processes that may be alive at
once. Each process runs in a thread of its own, and exactly one thread runs at a time: a
process hands control back at every crash point, so the interleaving is the one a scenario
names, and the replay is as deterministic as the single-process oracle. Written from the rules
of FAULTS.md section 7 and POLICIES.md 1.6; nothing is shared with spec/'s step functions.

A scenario is a sequence of moves, as in replay_oracle (a kind at the n-th chance after the
previous move), plus, for each pause, where the paused process wakes: `w` >= 1 at the w-th
crash point the running process passes while it is paused (where it takes no move), 0 when
the running process stops (exits, crashes, is refused) before that. A scenario whose pause
names a wake-up point the running process never reaches does not exist.

A sweep reuses a scenario's replay for its extensions as replay_oracle does (`scenarios`): a
clean cut is a process start, or a crash, while no other process lives; and a cut serves a
wake-up choice only if every pause taken by then wakes where that choice says.

A process that is stuck (CONVERSATIONS.md 4: the provider refuses its conversation, for good)
beside another live process gives up and exits (FAULTS.md 7, rule 11): a stop like any other,
so a paused process wakes (its wake-up 0) and a held one goes on, and the scenario is stuck only
if its last process is. A stuck process alone ends the scenario there, never finished.

Where FAULTS.md section 7 meets the other faults (its rules 4, 8, 9 and 10):

- A held process that goes on does so from just after the crash point it was held at: the
  wake-up was the adversary's choice at that point, and no move is offered there again.
- A power cut strikes the running process only: it dies, the one shared disk keeps what
  section 6.2 leaves of it (whichever process made the steps), and the other process lives on,
  as after a crash of the running one: no restart while it lives.
- A start that finds the checkpoint unreadable under `ask-person` asks and stops; the run goes
  on with the other process if one lives (it ends only when none does).
- Key expiry is offered only at a restart while no other process lives.

- Each fsync acts on the one disk whichever process made the step before it (rule 8): an
  fsync of a temp file that is gone adds nothing to the journal, so a later cut still undoes
  the other process's rename and puts its synced temp file back; a directory's fsync with no
  rename in the journal leaves an unsynced temp file to be lost; a temp file a cut puts back
  is a synced one, and its rename by the process still alive is undone by a later cut.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from greenlet import getcurrent, greenlet

from crashsweep.spec.job import Call, Job
from crashsweep.spec.policy import Policy
from tests.replay_oracle import (
    Adversary,
    Crash,
    Cut,
    Environment,
    Move,
    OracleResult,
    PowerCut,
    Process,
    Replay,
    Stuck,
    Tally,
    World,
    _begin,
    _measure,
    note_cut,
    policy_of,
    save_points,
)

PAUSE = "pause"


class Stopped(Exception):
    """The process stops without finishing: a lock refused it, a fencing token was stale, a rename failed."""


class _Abandoned(BaseException):
    """The replay is over while this thread still waits: unwind it."""


@dataclass
class Fenced(World):
    """The single-process oracle's world, plus the newest fencing token handed out."""

    fence: int = 0


@dataclass
class Wakes(Adversary):
    """The adversary of replay_oracle, which also chooses where each paused process wakes."""

    wakes: list[int] = field(default_factory=list)  # per pause, in order: w (0: when the running one stops)
    paused_count: int = 0  # pauses taken so far
    wake_chances: int = 0  # crash points the running process passed while the current pause lasts
    missed: bool = False  # a named wake-up point was never reached

    def wake_here(self) -> bool:
        """One more crash point passed by the running process while one is paused: wake it here?"""
        self.wake_chances += 1
        return self.wakes[self.paused_count - 1] == self.wake_chances


class Scheduler:
    """Runs processes as greenlets, one at a time: control passes only where a process waits.

    (Threads handed over by semaphores did the same, at an OS context switch per hand-over:
    most of the oracle's time on a loaded machine.)
    """

    def __init__(self) -> None:
        self.hub = getcurrent()
        self.event: tuple[str, PausingProcess, str] | None = None
        self.paused: PausingProcess | None = None  # suspended by the adversary
        self.held: PausingProcess | None = None  # the restart, held while the woken one runs
        self.waiting: list[PausingProcess] = []  # processes suspended in `wait`

    def alive_besides(self, process: PausingProcess) -> bool:
        """Whether another process is alive (paused or held)."""
        paused, held = self.paused, self.held
        return (paused is not None and paused is not process) or (held is not None and held is not process)

    def report(self, what: str, process: PausingProcess, why: str = "") -> None:
        """Tell the main loop what happened (its control comes back when `process` waits or ends)."""
        self.event = (what, process, why)

    def wait(self, process: PausingProcess) -> None:
        """Give control to the main loop; back here when it resumes `process`."""
        self.waiting.append(process)
        self.hub.switch()
        self.waiting.remove(process)
        if process.abandoned:
            raise _Abandoned

    def run(self, process: PausingProcess) -> tuple[str, PausingProcess, str]:
        """Give control to `process` (start it or resume it) until it reports back."""
        if process.thread is None:
            idle = _idle_threads()
            process.thread = idle.pop() if idle else greenlet(_serve)
            process.thread.parent = self.hub
            process.thread.switch(process)
        else:
            process.thread.switch()
        assert self.event is not None
        event, self.event = self.event, None
        return event

    def close(self) -> None:
        """Unwind every process still suspended, so none outlives its replay."""
        for process in list(self.waiting):
            process.abandoned = True
            assert process.thread is not None
            process.thread.switch()


_IDLE = threading.local()


def _idle_threads() -> list[greenlet]:
    """This OS thread's idle greenlets, each waiting in `_serve` for a process to run."""
    if not hasattr(_IDLE, "threads"):
        _IDLE.threads = []
    threads: list[greenlet] = _IDLE.threads
    return threads


def _serve(process: PausingProcess) -> None:
    """A greenlet's life: run a process to its end, then wait, idle, to run the next one.

    A greenlet used once would be made for every process of every replay, and each takes
    and frees its own memory for Python's frames (two system calls each way): about a third
    of the oracle's time. Kept for the next process, it keeps that memory.
    """
    while True:
        process.body()
        me = getcurrent()
        _idle_threads().append(me)
        assert me.parent is not None  # the scheduler's hub, set by Scheduler.run
        process = me.parent.switch()


@dataclass
class PausingProcess(Process):
    """A process of replay_oracle that may be paused, woken, held, refused or fenced."""

    scheduler: Scheduler = field(default_factory=Scheduler)
    token: int = 0  # its fencing token (lease+fencing)
    thread: greenlet | None = None
    abandoned: bool = False

    @property
    def moves(self) -> Wakes:
        """The adversary, which also places wake-ups."""
        assert isinstance(self.adversary, Wakes)
        return self.adversary

    def body(self) -> None:
        """The thread: run the loop, then report how it ended."""
        try:
            self.run()
        except Crash as crash:
            self.scheduler.report("crashed", self, str(crash))
        except PowerCut:
            # FAULTS.md 7 rule 8: the running process dies, as in a crash; the other lives on.
            self.scheduler.report("crashed", self, "power cut")
        except Stopped as stop:
            self.scheduler.report("stopped", self, str(stop))
        except Stuck as stuck:
            self.scheduler.report("stuck", self, str(stuck))
        except _Abandoned:
            return
        except Exception as error:  # a broken replay must fail the test, not hang it
            self.scheduler.report("error", self, repr(error))
        else:
            self.scheduler.report("exited", self)

    def _moment(self, name: str, offered: tuple[str, ...]) -> str | None:
        """A crash point: a move (crash, pause, a fault), or a wake-up of the paused process, or nothing."""
        self.passed.append(name)
        scheduler = self.scheduler
        alone = not scheduler.alive_besides(self)
        if PAUSE in self.env.faults and alone:
            offered = (*offered, PAUSE)
        kind = self.adversary.chance(offered)
        if kind == "crash":
            raise Crash(name)
        if kind == "power-loss":
            self._cut_power()
        if kind == PAUSE:
            self.moves.paused_count += 1
            self.moves.wake_chances = 0
            scheduler.report("paused", self)
            scheduler.wait(self)
            return None
        if scheduler.paused is not None and kind is None and self.moves.wake_here():
            scheduler.report("wake", self)
            scheduler.wait(self)
            # FAULTS.md 7 rule 4: held here, it goes on from just after this point; the wake-up
            # was the adversary's choice at this point, so no move is offered here again.
        return kind

    def point(self, name: str) -> None:
        """A crash point (see `_moment`); a power cut is offered where it would lose something."""
        self._moment(name, ("crash", *self._cut_offered()))

    def _reply_lost(self, name: str) -> bool:
        """`tracker accepted C`: a crash point where a lost reply may strike too."""
        offered = ("crash", "lost-reply") if "lost-reply" in self.env.faults else ("crash",)
        return self._moment(name, (*offered, *self._cut_offered())) == "lost-reply"

    def stale(self) -> bool:
        """Whether a newer fencing token than this process's has been handed out."""
        world = self.world
        assert isinstance(world, Fenced)
        return self.token < world.fence

    def save(self, what: str, extra: str | None = None) -> None:
        """Save(what), fenced; a rename whose temp file another process renamed first fails.

        Both processes share one disk and so one journal of the save in flight (replay_oracle):
        a temp write by either begins a save. An fsync of a temp file that is gone does nothing
        (FAULTS.md 7 rules 5 and 8): it adds nothing to the journal. A directory's fsync is
        journaled as it comes: with no rename before it, it makes nothing durable (rule 8).
        """
        world, fsync = self.world, self.policy.fsync
        written, synced, renamed, dir_synced = save_points(what)
        if self.stale():
            raise Stopped("fenced: temp file")
        world.base, world.journal = (world.checkpoint, world.torn), ["write"]
        world.temp = world.written = self.state.copy()
        self.point(written)
        if fsync != "none":
            if world.temp is not None:
                world.journal.append("fsync")
            self.point(synced)
        if self.stale():
            raise Stopped("fenced: rename")
        if world.temp is None:
            raise Stopped("rename failed")
        world.checkpoint, world.temp, world.torn = world.temp, None, False
        world.journal.append("rename")
        world.saves += 1
        self.point(renamed)
        if fsync == "full":
            world.journal.append("fsync-dir")
            self.point(dir_synced)
        if extra is not None:
            self.point(extra)

    def send(self, call: Call, key_call: str | None = None) -> str:
        """A request to the tracker carries the token; a stale one is refused."""
        if self.stale():
            raise Stopped(f"fenced: {call.id}")
        return super().send(call, key_call)

    def settle(self, call: Call) -> str:
        """The ladder; a lookup is a request to the tracker, fenced like a send."""
        for rung in self.policy.ladder:
            if rung == "rerun-when-harmless" and (
                not call.writes or (self.policy.keys == "run-call" and self.tracker == "keyed")
            ):
                break
            if rung == "lookup" and self.tracker == "keyless-lookup":
                if self.stale():
                    raise Stopped(f"fenced: lookup {call.id}")
                break
            if rung == "person":
                break
        return super().settle(call)

    def take_lock(self) -> None:
        """The policy's lock, right after the load (POLICIES.md 1.6)."""
        world = self.world
        assert isinstance(world, Fenced)
        lock = self.policy.lock
        if lock == "file":
            world.lock_temp = world.starts
            self.point("lock: tmp written")
            if world.lock_temp is None:
                raise Stopped("rename failed: lock")
            world.lock, world.lock_temp = world.lock_temp, None
            world.saves += 1
            self.point("lock: renamed")
        elif lock == "os-lock" and self.scheduler.alive_besides(self):
            raise Stopped("os-lock refused")
        elif lock == "lease+fencing":
            world.fence += 1
            self.token = world.fence

    def alone(self) -> bool:
        """Key expiry strikes only at a restart while no other process lives (FAULTS.md 7, rule 7)."""
        return not self.scheduler.alive_besides(self)


@dataclass
class PauseReplay(Replay):
    """A replayed scenario, and the wake chances its last pause offered."""

    wake_chances: int = 0


def replay(
    design: str | Policy,
    job: Job,
    tracker: str,
    moves: tuple[Move, ...],
    wakes: tuple[int, ...],
    env: Environment,
    *,
    world: Fenced | None = None,
    process_type: type[PausingProcess] | None = None,
) -> PauseReplay | None:
    """Replay a scenario from an empty world; None when it does not exist (a move or a wake-up never reached).

    `world` and `process_type`: an extended oracle's own (tests/retry_oracle.py), else this one's.
    """
    return resume(
        design, job, tracker, moves, wakes, env, Fenced() if world is None else world, process_type=process_type
    )


def resume(
    design: str | Policy,
    job: Job,
    tracker: str,
    moves: tuple[Move, ...],
    wakes: tuple[int, ...],
    env: Environment,
    shared: Fenced,
    counters: Wakes | None = None,
    *,
    process_type: type[PausingProcess] | None = None,
    keep: bool = False,
) -> PauseReplay | None:
    """`replay` from `shared` (changed in place), with the adversary's `counters` at a cut (None: at none).

    `keep`: note its cuts and forks (replay_oracle.resume). A cut is a process start while no other
    process lives; a fork, a crash while none does.
    """
    cuts: list[Cut] = []
    forks: dict[int, Cut] = {}

    def crash_here(at: int) -> None:
        if scheduler.alive_besides(running):
            return  # the other process goes on after this crash: no clean cut
        after = shared.copy()
        running.death(after)
        counters = adversary.resumed(list(moves))
        counters.taken, counters.since = len(moves) + 1, 0
        forks[at] = Cut(after, counters, 0)

    fork = crash_here if keep else None
    if counters is None:
        adversary = Wakes(list(moves), fork=fork, wakes=list(wakes))
    else:
        adversary = counters.resumed(list(moves), fork)
        adversary.wakes = list(wakes)
    scheduler = Scheduler()
    policy = policy_of(design)
    made = process_type or PausingProcess

    def new_process() -> PausingProcess:
        return made(shared, job, policy, tracker, env, adversary, scheduler=scheduler)

    def clean_start() -> PausingProcess:
        if keep:
            note_cut(cuts, shared, adversary, 0)
        return new_process()

    running = clean_start()
    last: list[str] = []
    try:
        while True:
            what, process, why = scheduler.run(running)
            if what == "error":
                raise AssertionError(f"the replay failed: {why}")
            if what == "stuck" and scheduler.alive_besides(process):
                # It gives up and exits (FAULTS.md 7 rule 11): a stop, for the other process and the run.
                shared.stuck = None
                what = "stopped"
            elif what == "stuck":
                last = process.passed
                break  # the last process alive is stuck: the scenario ends, never finished
            if what == "paused":
                scheduler.paused, running = process, new_process()
                continue
            if what == "wake":
                assert scheduler.paused is not None
                scheduler.held, running, scheduler.paused = process, scheduler.paused, None
                continue
            last = process.passed
            if scheduler.held is not None:
                running, scheduler.held = scheduler.held, None
            elif scheduler.paused is not None:
                adversary.missed |= adversary.wakes[adversary.paused_count - 1] != 0
                running, scheduler.paused = scheduler.paused, None
            elif what == "exited":
                break
            else:
                running = clean_start()
    finally:
        scheduler.close()
        adversary.fork = None  # it refers to this replay: no cycle of references outlives it
    if adversary.taken < len(adversary.moves) or adversary.missed:
        return None
    return PauseReplay(shared, last, 0, adversary.later, adversary.wake_chances, cuts=cuts, forks=forks)


def sweep(
    design: str | Policy, job: Job, tracker: str, depth: int, env: Environment, *, reuse: bool = True
) -> OracleResult:
    """Every scenario with 1..depth moves and every wake-up of each pause, replayed and measured."""
    made = scenarios(design, job, tracker, depth, env, reuse=reuse)
    _, _, base = next(made)
    baseline_calls = base.world.model_calls
    result = OracleResult({k: Tally() for k in range(1, depth + 1)}, base.last_points, 0)
    for k, moves, done in made:
        _measure(result.by_crashes[k], done, job, baseline_calls)
        result.by_crashes[k].moves.update(kind for _, kind in moves)
    return result


def scenarios(
    design: str | Policy,
    job: Job,
    tracker: str,
    depth: int,
    env: Environment,
    *,
    world_type: type[Fenced] = Fenced,
    process_type: type[PausingProcess] | None = None,
    suspends: tuple[str, ...] = (PAUSE,),
    reuse: bool = True,
) -> Iterator[tuple[int, tuple[Move, ...], PauseReplay]]:
    """The uninterrupted run, then every scenario with 1..depth moves and every wake-up choice, each replayed.

    `suspends`: the kinds of move that suspend a process (a pause; tests/retry_oracle.py's timeout
    too). Depth first, as replay_oracle.scenarios; `reuse`: a replay begins at the latest cut or
    fork of its scenario's replay that lies before its new move, and before the first pause whose
    wake-up it chooses otherwise (see `_start`), else at an empty world.
    """

    def play(prefix: _Scenario | None, at: int, kind: str, wakes: tuple[int, ...]) -> PauseReplay | None:
        moves = () if prefix is None else (*prefix.moves, (at, kind))
        start, shared = _start(prefix, wakes, at, kind) if reuse and prefix is not None else (None, False)
        world, counters, _ = _begin(start, shared, world_type)
        assert isinstance(world, Fenced)
        assert counters is None or isinstance(counters, Wakes)
        keep = reuse and len(moves) < depth
        return resume(design, job, tracker, moves, wakes, env, world, counters, process_type=process_type, keep=keep)

    base = play(None, 0, "", ())
    assert base is not None
    yield 0, (), base

    def extensions(prefix: _Scenario) -> Iterator[tuple[int, tuple[Move, ...], PauseReplay]]:
        for at, offered in prefix.replay.later:
            for kind in offered:
                moves = (*prefix.moves, (at, kind))
                for wakes, first in _choices(prefix, kind in suspends, functools.partial(play, prefix, at, kind)):
                    done = first if first is not None else play(prefix, at, kind, wakes)
                    if done is None:
                        continue
                    yield len(moves), moves, done
                    if len(moves) < depth:
                        yield from extensions(_Scenario(moves, wakes, done))

    yield from extensions(_Scenario((), (), base))


@dataclass(frozen=True)
class _Scenario:
    """A scenario's moves and wake-ups, and its replay."""

    moves: tuple[Move, ...]
    wakes: tuple[int, ...]
    replay: PauseReplay


def _choices(
    prefix: _Scenario, suspends: bool, replayed: Callable[[tuple[int, ...]], PauseReplay | None]
) -> list[tuple[tuple[int, ...], PauseReplay | None]]:
    """The wake-up choices of a scenario that extends `prefix` by a move (`suspends`: a pause's).

    A new pause wakes at any crash point the running process then passes, or when it stops.
    A move while the last pause still waits for the running process to stop (its wake-up 0)
    can lengthen that process's run: the wake-up points it adds are new choices too (the
    earlier ones are the extensions of the prefixes that woke there).

    Each choice comes with its replay when finding the choices took it (the first), else None:
    a replay is the same whenever it is made, and made once it need not be made again.
    """
    if suspends:
        first = replayed((*prefix.wakes, 0))
        if first is None:
            return []
        return [((*prefix.wakes, wake), first if wake == 0 else None) for wake in range(first.wake_chances + 1)]
    if not prefix.wakes or prefix.wakes[-1] != 0:
        return [(prefix.wakes, None)]
    first = replayed(prefix.wakes)
    if first is None:
        return []
    more = range(prefix.replay.wake_chances + 1, first.wake_chances + 1)
    return [(prefix.wakes, first), *(((*prefix.wakes[:-1], w), None) for w in more)]  # fmt: skip


def _start(prefix: _Scenario, wakes: tuple[int, ...], at: int, kind: str) -> tuple[Cut | None, bool]:
    """Where to replay `prefix` extended by a move of `kind` at its `at`-th chance, with `wakes`; and if it is shared.

    The fork at that chance (a crash), or the latest cut before it (replay_oracle.Cut.before);
    either only if every pause taken by then wakes where `wakes` says (a choice may move the last
    pause's wake-up: the replay then differs from that pause on). A choice moves it only while
    that pause still waits at the new move, when no clean cut follows the pause, so the check
    only guards that reasoning. None: no such cut (the replay begins at an empty world). A fork
    serves one choice (the others move the last pause's wake-up): it is taken, not shared.
    """
    agree = len(prefix.wakes)
    if wakes[:agree] != prefix.wakes:
        agree = next(i for i, (a, b) in enumerate(zip(prefix.wakes, wakes, strict=False)) if a != b)
    fork = prefix.replay.forks.get(at) if kind == "crash" else None
    if fork is not None and _paused(fork) <= agree:
        return prefix.replay.forks.pop(at), False
    moves = len(prefix.moves)
    return next((c for c in reversed(prefix.replay.cuts) if c.before(moves, at) and _paused(c) <= agree), None), True


def _paused(cut: Cut) -> int:
    """The pauses taken by a cut."""
    assert isinstance(cut.adversary, Wakes)
    return cut.adversary.paused_count
