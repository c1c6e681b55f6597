"""A naive scenario-replay sweep: the oracle the explorer's counts are checked against.

What: the loop of spec/SEMANTICS.md (sections 1-9) written as one plain imperative function,
driven by a design's flags, that calls `point(name)` at every crash point. A scenario is a
tuple of crash indices (process 1 crashes at its i-th point, process 2 at its j-th, ..., the
last process runs to the end); each one is replayed from an empty world, and its final world
is measured. Nothing is shared with the explorer or the step functions.

Why: the explorer counts scenarios by path counting over a deduplicated state graph, which is
fast but clever. This oracle is slow and obvious: it enumerates every scenario and replays it
from scratch, as the seed's Go test does, so agreement between the two is strong evidence
that both implement the contract. Only the data types (Job, Call) and Key come from spec/.

Lookup rung (crashsweep's documented choice, not in SEMANTICS.md): the loop asks the tracker
"did call C of run R happen?"; after the answer, crash point `lookup answered <call>`; "yes"
takes that record's answer as the result, "no" sends now.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from spec.job import Call, Job
from spec.keys import key


@dataclass(frozen=True)
class Design:
    """A design's flags (section 7 table; agent-loop per section 9)."""

    reply_save: bool
    result_saves: str  # "none", "all" (reads too) or "writes"
    markers: bool
    keys: bool
    lock: bool = False


DESIGNS: dict[str, Design] = {
    "save-once-per-turn": Design(reply_save=False, result_saves="none", markers=False, keys=False),
    "save-after-reply": Design(reply_save=True, result_saves="all", markers=False, keys=False),
    "idempotency-keys": Design(reply_save=True, result_saves="all", markers=False, keys=True),
    "attempt-markers": Design(reply_save=True, result_saves="all", markers=True, keys=False),
    "keys-and-markers": Design(reply_save=True, result_saves="all", markers=True, keys=True),
    "agent-loop": Design(reply_save=False, result_saves="writes", markers=True, keys=True, lock=True),
}
TRACKERS = ("keyed", "keyless", "keyless-lookup")


class Crash(Exception):
    """The process dies here; only the world survives."""


@dataclass
class Turn:
    """A tool turn as the checkpoint holds it."""

    index: int
    results: dict[str, str] = field(default_factory=dict)
    markers: set[str] = field(default_factory=set)
    complete: bool = False


@dataclass
class State:
    """The contents of a checkpoint (on disk) or of the process's memory."""

    run: str
    done: bool = False
    turns: list[Turn] = field(default_factory=list)

    def copy(self) -> State:
        """A copy that shares no mutable part (a complete turn never changes again, so it is shared)."""
        turns = [t if t.complete else Turn(t.index, dict(t.results), set(t.markers)) for t in self.turns]
        return State(self.run, self.done, turns)


@dataclass
class World:
    """Everything that outlives a crash: files, tracker, counters."""

    checkpoint: State | None = None
    temp: State | None = None
    lock: int | None = None  # the lock file: which process start wrote it
    lock_temp: int | None = None
    records: list[tuple[str, str, str]] = field(default_factory=list)  # (call, run, answer)
    remembered: dict[str, str] = field(default_factory=dict)  # key -> first answer
    fresh_runs: int = 0
    starts: int = 0
    model_calls: int = 0
    asks: int = 0
    lookups: int = 0
    reruns: int = 0
    saves: int = 0  # saves that reached their rename (checkpoint and lock)
    requests: int = 0  # calls sent to the tracker, reads included (lookups apart)

    def records_per_write(self, job: Job) -> list[int]:
        """How many records the tracker holds for each of the job's writes (any run)."""
        held = Counter(call for call, _, _ in self.records)
        return [held[call] for call in job.writes]


def run_process(world: World, job: Job, design: str, tracker: str, point: Callable[[str], None]) -> None:
    """One process of the loop, from loading the checkpoint to exiting (or a Crash)."""
    flags = DESIGNS[design]
    honours_keys = tracker == "keyed"
    world.starts += 1
    if world.checkpoint is None:
        world.fresh_runs += 1
        state = State(f"run-{world.fresh_runs}")
    elif world.checkpoint.done:
        return
    else:
        state = world.checkpoint.copy()

    def save(what: str, extra: str | None = None) -> None:
        world.temp = state.copy()
        point(f"{what}: tmp written")
        world.checkpoint, world.temp = world.temp, None
        world.saves += 1
        point(f"{what}: renamed")
        if extra is not None:
            point(extra)

    def send(call: Call) -> str:
        world.requests += 1
        if not call.writes:
            point(f"tool returned {call.id}")
            return f"read {call.id}"
        request_key = key(state.run, call.id) if flags.keys else None
        if request_key is not None and honours_keys and request_key in world.remembered:
            answer = world.remembered[request_key]
        else:
            answer = f"{call.id} record {len(world.records) + 1}"
            world.records.append((call.id, state.run, answer))
            if request_key is not None and honours_keys:
                world.remembered[request_key] = answer
        point(f"tracker accepted {call.id}")
        point(f"tool returned {call.id}")
        return answer

    def settle(call: Call) -> str:
        if not call.writes or (flags.keys and honours_keys):
            world.reruns += 1
            return send(call)
        held = [answer for c, run, answer in world.records if c == call.id and run == state.run]
        if tracker == "keyless-lookup":
            world.lookups += 1
            point(f"lookup answered {call.id}")
        else:
            world.asks += 1
        return held[0] if held else send(call)

    if flags.lock:
        world.lock_temp = world.starts
        point("lock: tmp written")
        world.lock, world.lock_temp = world.lock_temp, None
        world.saves += 1
        point("lock: renamed")
    save("start")
    while True:
        if state.turns and not state.turns[-1].complete:
            turn = state.turns[-1]
        else:
            world.model_calls += 1
            number = len(state.turns) + 1
            if number > len(job.turns):
                point("final reply arrived")
                state.done = True
                save("final")
                return
            point(f"reply {number} arrived")
            turn = Turn(number)
            state.turns.append(turn)
            if flags.reply_save:
                save(f"reply {number}")
        for call in job.turns[turn.index - 1]:
            if call.id in turn.results:
                continue
            if call.id in turn.markers:
                answer = settle(call)
            else:
                if flags.markers and call.writes:
                    turn.markers.add(call.id)
                    save(f"marker {call.id}", f"marker saved {call.id}")
                answer = send(call)
            turn.results[call.id] = answer
            if flags.result_saves == "all" or (flags.result_saves == "writes" and call.writes):
                save(f"result {call.id}", f"result saved {call.id}")
        turn.complete = True
        save(f"turn {turn.index}")


@dataclass
class Replay:
    """One replayed scenario: its final world and the points of its last (uncrashed) process."""

    world: World
    last_points: list[str]
    steps: int


def replay(design: str, job: Job, tracker: str, crashes: tuple[int, ...]) -> Replay | None:
    """Replay a scenario from an empty world; None when a process exits before its crash index."""
    world = World()
    steps = 0
    points: list[str] = []
    for crash_at in (*crashes, None):
        points = []

        def point(name: str, points: list[str] = points, crash_at: int | None = crash_at) -> None:
            points.append(name)
            if len(points) == crash_at:
                raise Crash(name)

        steps += 1
        try:
            run_process(world, job, design, tracker, point)
        except Crash:
            steps += len(points)
            continue
        steps += len(points)
        if crash_at is not None:
            return None  # it finished without reaching its crash point: not a scenario
    return Replay(world, points, steps)


def dups(world: World, job: Job) -> int:
    """Over the job's writes, the sum of max(0, records - 1)."""
    return sum(max(0, held - 1) for held in world.records_per_write(job))


def missing(world: World, job: Job) -> int:
    """The job's writes with no record at all."""
    return sum(1 for held in world.records_per_write(job) if held == 0)


@dataclass
class Tally:
    """The figures of all scenarios with one crash count, summed."""

    scenarios: int = 0
    with_dups: int = 0
    dups: int = 0
    missing: int = 0
    asks: int = 0
    lookups: int = 0
    reruns: int = 0
    model_calls: int = 0
    calls_plus: int = 0
    saves: int = 0
    requests: int = 0


@dataclass
class OracleResult:
    """A sweep's figures per crash count, the uninterrupted run's crash points, and the work done."""

    by_crashes: dict[int, Tally]
    point_names: list[str]
    steps: int

    @property
    def crash_points(self) -> int:
        """Crash points of the uninterrupted run."""
        return len(self.point_names)

    def total(self, name: str) -> int:
        """One figure summed over every crash count of the sweep."""
        return sum(int(getattr(tally, name)) for tally in self.by_crashes.values())


def _check(design: str, tracker: str) -> None:
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}")
    if tracker not in TRACKERS:
        raise ValueError(f"unknown tracker {tracker!r}")


def sweep(design: str, job: Job, tracker: str, depth: int) -> OracleResult:
    """Every scenario with 1..depth crashes, each replayed from an empty world and measured."""
    _check(design, tracker)
    base = replay(design, job, tracker, ())
    assert base is not None
    baseline_calls = base.world.model_calls
    result = OracleResult({k: Tally() for k in range(1, depth + 1)}, base.last_points, base.steps)
    # A prefix of k-1 crashes whose last process ran to the end passing n points extends to
    # exactly the n scenarios that crash that process at its 1st, ..., n-th point.
    frontier: list[tuple[tuple[int, ...], int]] = [((), len(base.last_points))]
    for k in range(1, depth + 1):
        tally = result.by_crashes[k]
        extended: list[tuple[tuple[int, ...], int]] = []
        for prefix, reached in frontier:
            for index in range(1, reached + 1):
                scenario = (*prefix, index)
                done = replay(design, job, tracker, scenario)
                assert done is not None, f"scenario {scenario} does not exist"
                world = done.world
                result.steps += done.steps
                tally.scenarios += 1
                duplicates = dups(world, job)
                tally.dups += duplicates
                tally.with_dups += 1 if duplicates else 0
                tally.missing += missing(world, job)
                tally.asks += world.asks
                tally.lookups += world.lookups
                tally.reruns += world.reruns
                tally.model_calls += world.model_calls
                tally.calls_plus += world.model_calls - baseline_calls
                tally.saves += world.saves
                tally.requests += world.requests
                if k < depth:
                    extended.append((scenario, len(done.last_points)))
        frontier = extended
    return result


def single_crash_outcomes(design: str, job: Job, tracker: str) -> list[tuple[str, int]]:
    """For each crash point of the uninterrupted run: its name and the dups after one crash there."""
    _check(design, tracker)
    base = replay(design, job, tracker, ())
    assert base is not None
    outcomes = []
    for index, name in enumerate(base.last_points, start=1):
        done = replay(design, job, tracker, (index,))
        assert done is not None
        outcomes.append((name, dups(done.world, job)))
    return outcomes
