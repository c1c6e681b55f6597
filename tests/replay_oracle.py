"""A naive scenario-replay sweep: the oracle the explorer's counts are checked against.

What: the loop of spec/SEMANTICS.md (sections 1-9), SITUATIONS.md and POLICIES.md written as
plain imperative code, driven by a policy record, that calls `point(name)` at every crash
point. A scenario is a tuple of crash indices (process 1 crashes at its i-th point, process 2
at its j-th, ..., the last process runs to the end); each one is replayed from an empty world,
and its final world is measured. Nothing is shared with the explorer or the step functions.

Why: the explorer counts scenarios by path counting over a deduplicated state graph, which is
fast but clever. This oracle is slow and obvious: it enumerates every scenario and replays it
from scratch, as the seed's Go test does, so agreement between the two is strong evidence
that both implement the contract. Only the data types (Job, Call, Policy) and Key come from spec/.

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
from spec.policy import Policy, Rung

_LADDER: tuple[Rung, ...] = ("rerun-when-harmless", "lookup", "person")

# Section 7 of SEMANTICS.md (and section 9 for agent-loop), read as policies (POLICIES.md section 3).
DESIGNS: dict[str, Policy] = {
    "save-once-per-turn": Policy(
        startup_save=True, reply_save="never", result_saves="whole-turn", markers="none", keys="none", lock="none"
    ),
    "save-after-reply": Policy(
        startup_save=True, reply_save="before-first-send", result_saves="each-call", markers="none", keys="none",
        lock="none",
    ),
    "idempotency-keys": Policy(
        startup_save=True, reply_save="before-first-send", result_saves="each-call", markers="none",
        keys="run-call", lock="none",
    ),
    "attempt-markers": Policy(
        startup_save=True, reply_save="before-first-send", result_saves="each-call", markers="before-writes",
        keys="none", lock="none", ladder=("lookup", "person"),
    ),
    "keys-and-markers": Policy(
        startup_save=True, reply_save="before-first-send", result_saves="each-call", markers="before-writes",
        keys="run-call", lock="none", ladder=_LADDER,
    ),
    "agent-loop": Policy(
        startup_save=True, reply_save="never", result_saves="writes-only", markers="before-writes",
        keys="run-call", lock="file", ladder=_LADDER,
    ),
}  # fmt: skip
# SITUATIONS.md section 4: idempotency-keys, except that a tool error goes to the model.
NAIVE: dict[str, Policy] = {
    "error-to-model": Policy(
        startup_save=True, reply_save="before-first-send", result_saves="each-call", markers="none",
        keys="run-call", lock="none", on_tool_error="model",
    ),
}  # fmt: skip
TRACKERS = ("keyed", "keyless", "keyless-lookup")


class Crash(Exception):
    """The process dies here; only the world survives."""


class ToolFailed(Exception):
    """The tool returned an error after the tracker applied the write (SITUATIONS.md section 2)."""


@dataclass
class Turn:
    """A tool turn as the checkpoint holds it."""

    index: int
    results: dict[str, str] = field(default_factory=dict)
    markers: set[str] = field(default_factory=set)
    approved: set[str] = field(default_factory=set)
    complete: bool = False


@dataclass
class State:
    """The contents of a checkpoint (on disk) or of the process's memory."""

    run: str
    done: bool = False
    turns: list[Turn] = field(default_factory=list)

    def copy(self) -> State:
        """A copy that shares no mutable part (a complete turn never changes again, so it is shared)."""
        turns = [
            t if t.complete else Turn(t.index, dict(t.results), set(t.markers), set(t.approved)) for t in self.turns
        ]
        return State(self.run, self.done, turns)


@dataclass
class World:
    """Everything that outlives a crash: files, tracker, the spent faults, counters."""

    checkpoint: State | None = None
    temp: State | None = None
    lock: int | None = None  # the lock file: which process start wrote it
    lock_temp: int | None = None
    records: list[tuple[str, str, str]] = field(default_factory=list)  # (call, run, answer)
    remembered: dict[str, str] = field(default_factory=dict)  # key -> first answer
    failed_once: set[str] = field(default_factory=set)  # calls whose one-time fault has struck
    fresh_runs: int = 0
    starts: int = 0
    model_calls: int = 0
    asks: int = 0
    lookups: int = 0
    reruns: int = 0
    approvals: int = 0
    saves: int = 0  # saves that reached their rename (checkpoint and lock)
    requests: int = 0  # calls sent to the tracker, reads included (lookups apart)

    def records_per_write(self, job: Job) -> list[int]:
        """How many records the tracker holds for each of the job's writes (any run)."""
        held = Counter(call for call, _, _ in self.records)
        return [held[call] for call in job.writes]


def policy_of(design: str | Policy) -> Policy:
    """The policy of a design named in DESIGNS or NAIVE, or the policy itself."""
    if isinstance(design, Policy):
        return design
    known = {**DESIGNS, **NAIVE}
    if design not in known:
        raise ValueError(f"unknown design {design!r}")
    return known[design]


@dataclass
class Process:
    """One process of the loop: its memory, and the world it acts on."""

    world: World
    job: Job
    policy: Policy
    tracker: str
    point: Callable[[str], None]
    state: State = field(init=False)

    def save(self, what: str, extra: str | None = None) -> None:
        """Save(what): temp file, rename, and a marker or result save's own crash point."""
        self.world.temp = self.state.copy()
        self.point(f"{what}: tmp written")
        self.world.checkpoint, self.world.temp = self.world.temp, None
        self.world.saves += 1
        self.point(f"{what}: renamed")
        if extra is not None:
            self.point(extra)

    def send(self, call: Call, key_call: str | None = None) -> str:
        """Send a call (section 5); a first write request of a failing call raises ToolFailed."""
        world = self.world
        world.requests += 1
        if not call.writes:
            self.point(f"tool returned {call.id}")
            return f"read {call.id}"
        honoured = self.tracker == "keyed" and self.policy.keys == "run-call"
        request_key = key(self.state.run, key_call or call.id)
        if honoured and request_key in world.remembered:
            answer = world.remembered[request_key]
        else:
            answer = f"{call.id} record {len(world.records) + 1}"
            world.records.append((call.id, self.state.run, answer))
            if honoured:
                world.remembered[request_key] = answer
        # The fault strikes the first request the tracker receives, even if a crash comes first.
        fails = call.fails_after_accept and call.id not in world.failed_once
        if fails:
            world.failed_once.add(call.id)
        self.point(f"tracker accepted {call.id}")
        if fails:
            self.point(f"tool failed {call.id}")
            raise ToolFailed(call.id)
        self.point(f"tool returned {call.id}")
        return answer

    def settle(self, call: Call) -> str:
        """The first rung of the policy's ladder that applies (POLICIES.md 1.2)."""
        for rung in self.policy.ladder:
            if rung == "rerun-when-harmless" and (
                not call.writes or (self.policy.keys == "run-call" and self.tracker == "keyed")
            ):
                self.world.reruns += 1
                return self.send(call)
            if rung == "lookup" and self.tracker == "keyless-lookup":
                self.world.lookups += 1
                held = self._held(call)
                self.point(f"lookup answered {call.id}")
                return held if held is not None else self.send(call)
            if rung == "person":
                self.world.asks += 1
                held = self._held(call)
                return held if held is not None else self.send(call)
        raise AssertionError(f"no rung of {self.policy.ladder} applies")

    def _held(self, call: Call) -> str | None:
        held = [answer for c, run, answer in self.world.records if c == call.id and run == self.state.run]
        return held[0] if held else None

    def first_send(self, turn: Turn, call: Call) -> str:
        """A call without marker or result: the approval gate, the marker, then the send."""
        if call.approval and call.id not in turn.approved:
            self.world.approvals += 1
            self.point(f"approval requested {call.id}")
            turn.approved.add(call.id)
            self.point(f"approved {call.id}")
            self.save(f"approval {call.id}")
        if self.policy.markers == "before-writes" and call.writes:
            turn.markers.add(call.id)
            self.save(f"marker {call.id}", f"marker saved {call.id}")
        return self.send(call)

    def result_of(self, turn: Turn, call: Call) -> str:
        """Get a call's result, running the loop body again after each tool error (POLICIES.md 1.3)."""
        failed = False
        while True:
            try:
                if failed and self.policy.on_tool_error == "model":
                    self.world.model_calls += 1
                    self.point(f"retry reply arrived {call.id}")
                    return self.send(call, key_call=f"{call.id}.retry")
                if call.id in turn.markers:
                    return self.settle(call)
                return self.first_send(turn, call)
            except ToolFailed:
                failed = True

    def run_turn(self, turn: Turn) -> None:
        """Every call of the turn without a result, then the turn's end (POLICIES.md 1.1)."""
        results = self.policy.result_saves
        for call in self.job.turns[turn.index - 1]:
            if call.id in turn.results:
                continue
            turn.results[call.id] = self.result_of(turn, call)
            if results == "each-call" or (results == "writes-only" and call.writes):
                self.save(f"result {call.id}", f"result saved {call.id}")
        turn.complete = True
        if results != "none":
            self.save(f"turn {turn.index}")

    def run(self) -> None:
        """Load, lock, startup save, then the loop until the final answer (or a Crash)."""
        world = self.world
        world.starts += 1
        if world.checkpoint is None:
            world.fresh_runs += 1
            self.state = State(f"run-{world.fresh_runs}")
        elif world.checkpoint.done:
            return
        else:
            self.state = world.checkpoint.copy()
        if self.policy.lock == "file":
            world.lock_temp = world.starts
            self.point("lock: tmp written")
            world.lock, world.lock_temp = world.lock_temp, None
            world.saves += 1
            self.point("lock: renamed")
        if self.policy.startup_save:
            self.save("start")
        while True:
            turns = self.state.turns
            if not turns or turns[-1].complete:
                world.model_calls += 1
                number = len(turns) + 1
                if number > len(self.job.turns):
                    self.point("final reply arrived")
                    self.state.done = True
                    self.save("final")
                    return
                self.point(f"reply {number} arrived")
                turns.append(Turn(number))
                if self.policy.reply_save == "before-first-send":
                    self.save(f"reply {number}")
            self.run_turn(turns[-1])


def run_process(world: World, job: Job, design: str | Policy, tracker: str, point: Callable[[str], None]) -> None:
    """One process of the loop, from loading the checkpoint to exiting (or a Crash)."""
    Process(world, job, policy_of(design), tracker, point).run()


@dataclass
class Replay:
    """One replayed scenario: its final world and the points of its last (uncrashed) process."""

    world: World
    last_points: list[str]
    steps: int


def replay(design: str | Policy, job: Job, tracker: str, crashes: tuple[int, ...]) -> Replay | None:
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
    approvals: int = 0


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


def _check(design: str | Policy, tracker: str) -> None:
    policy_of(design)
    if tracker not in TRACKERS:
        raise ValueError(f"unknown tracker {tracker!r}")


def sweep(design: str | Policy, job: Job, tracker: str, depth: int) -> OracleResult:
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
                tally.approvals += world.approvals
                if k < depth:
                    extended.append((scenario, len(done.last_points)))
        frontier = extended
    return result


def single_crash_outcomes(design: str | Policy, job: Job, tracker: str) -> list[tuple[str, int]]:
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
