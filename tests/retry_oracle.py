"""The replay oracle under retry layers: spec/RETRIES.md section 1, replayed scenario by scenario.

What: the imperative loop of tests/replay_oracle.py (one process at a time), extended by the
retry layers of a policy (`Policy.retries`, innermost first). A scenario is, as there, a
sequence of moves, each a kind at the n-th chance after the previous one; the new kind is
`retry` (RETRIES.md 1.4): the adversary makes an attempt fail where a layer would catch it.
Every scenario is replayed (as from an empty world: replay_oracle's prefix reuse) and measured;
the tally adds, per number of moves, the retries of each scope (`retry.call`, `retry.turn`,
`retry.run`) and the retry moves.

Written from spec/RETRIES.md section 1 (and the parts of SEMANTICS.md, SITUATIONS.md,
POLICIES.md and FAULTS.md it refers to) alone: nothing is read from spec/retries.py,
spec/retrying.py, spec/process.py or variants/loop_model.py but the data type of a layer.

The rules as this oracle reads them:

- A failure's site is a write's `tracker accepted C` with the tool's answer still to come
  (1.1): the move `retry` is offered there when some `error`/`unknown-outcome` layer has an
  attempt left for its instance, and the failure is not the job's own (`fails_after_accept`
  at the call's first request, which fails anyway, 1.4). A read has no such site.
- Every failure (the job's, a lost reply, a `retry` move) passes `tool failed C` (1.2: "crash
  point `tool failed C`, as in SITUATIONS.md 2"); the layer acts when the process goes on from
  there. A crash at `tool failed C` comes first: no retry is counted and no attempt is spent.
  (tests/spec/test_retrying.py item 1 reads it so: a crash at point 7 makes no `retry.run`.)
- The catching layer is the innermost one whose trigger the failure fires and that has made
  fewer than N - 1 retries of its instance (1.3); the counts live in the world and survive
  crashes. Instances: `call` per (run, job call), `turn` per (run, turn index), `run` one per
  scenario. The call of an instance is the job's call even when the request carries another
  ID (the model's retry `<call>.retry` under `on_tool_error = "model"`): the rules say
  "(run, call)" and the model's retry is of the same call. (At the depths tested here no
  scenario tells the two readings apart: reaching a `.retry` request under a call layer needs
  that layer spent first.)
- Scope `call`: the same request again at once (same ID and key; +1 request; no ladder, no
  marker, no approval, no `rerun` counted), and the loop never hears the error. `turn`: the
  turn is dropped from memory and the loop asks the model again (+1 model call, `reply k
  arrived`, the reply save if the design makes one, each call handled as new: gated, marked,
  sent). `run`: a fresh run ID in the same process, empty memory, then the design's start
  (lock, startup save) with no load and no key-expiry chance (it is no restart).
- No layer catches: the error reaches the loop, which answers it by `on_tool_error`.
- `retry_policy = "unset"` (1.8) is `attempts = "unbounded"`: the layer's attempts are None.
- `schedule_to_close = "one-attempt"` (1.8), on a `call` layer: a quick failure (the job's,
  a lost reply, a `retry` move) is retried as the layer's attempts say (rule 1). A process
  that dies (a crash or a power cut) at `tracker accepted C` or `tool returned C` while a
  request of C is in flight (any request of C: a first send, a layer's retry, a ladder's
  rerun, the model's retry; a read has the second point only) leaves `attempt timed out RUN
  C` in the world, whether or not the layer has an attempt left (rule 2: the budget, not the
  attempts, is spent). A death at `tool failed C` is none: the attempt had answered. The
  next start that loads a checkpoint of RUN ends at once (rule 3): no lock, no save, no
  request, no restart after; a start that loads no checkpoint of RUN (none, an unreadable
  one, another run's) goes on as usual. A `run` layer does not catch this failure: its
  trigger is a tool's error at `tracker accepted`, and this is the activity's timeout heard
  at a start, after which "no restart follows" (rule 3). The key-expiry chance before that
  start is offered as before any restart (the start is a restart, which then fails).

Timeout layers (1.1 `timeout`, 1.2), replayed by `scenarios` with tests/pause_oracle.py's
machinery (two live processes as greenlets; a suspended attempt wakes at any crash point of
the new one, or when it stops): the move is offered, while no second process lives, at a
site of the innermost timeout layer with an attempt left there: `call`, the call's `tracker
accepted` and `tool returned` while its request is in flight; `turn`, every point while the
last turn in memory is not complete (read by the letter: a restart's lock and startup-save
points after loading an unfinished turn are sites too); `run`, every point. The retry is
counted on the move. The new attempt of `call`/`turn` is a restart from disk; of `run`, a
new run that reads no checkpoint. Such a sweep tallies no path lengths (`steps` stays 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Self

from crashsweep.spec.job import Call, Job
from crashsweep.spec.policy import Policy
from crashsweep.spec.retries import Layer
from tests import pause_oracle, replay_oracle
from tests.pause_oracle import PAUSE, Fenced, PausingProcess, Stopped
from tests.replay_oracle import (
    STABLE,
    Crash,
    Environment,
    Move,
    OracleResult,
    PowerCut,
    Process,
    Replay,
    State,
    Tally,
    ToolFailed,
    Turn,
    World,
    _measure,
    counter,
    dups,
    policy_of,
)

RETRY = "retry"
ERRORS = ("error", "unknown-outcome")  # RETRIES.md 1.1: every error this model makes fires both
SCOPES = ("call", "turn", "run")


class RetryTurn(Exception):
    """A `turn` layer caught a failure: drop the turn from memory and ask the model again."""


class RetryRun(Exception):
    """A `run` layer caught a failure: begin a new run in the same process."""


@dataclass
class RetryWorld(World):
    """The oracle's world, plus the layers' retries per instance and per scope (RETRIES.md 1.3, 1.5)."""

    spent: Counter[tuple[int, str]] = field(default_factory=Counter)  # (layer index, instance) -> retries made
    retried: Counter[str] = field(default_factory=Counter)  # scope -> retries made in this scenario
    timed_out: set[str] = field(default_factory=set)  # runs with an attempt that ran out its budget (1.8 rule 2)
    failed: bool = False  # a start found its run's call failed for good, and ended the run (1.8 rule 3)

    def copy(self) -> Self:
        """replay_oracle's copy, and the layers' counts and the runs timed out (nothing mutable shared)."""
        twin = super().copy()
        twin.spent, twin.retried, twin.timed_out = counter(self.spent), counter(self.retried), set(self.timed_out)
        return twin


def instance_of(layer: Layer, run: str, call: str, turn: int) -> str:
    """The instance of the layer's scope a failure of `call` in turn `turn` of `run` belongs to."""
    if layer.scope == "call":
        return f"{run}/call {call}"
    if layer.scope == "turn":
        return f"{run}/turn {turn}"
    return "the scenario"


@dataclass
class RetryProcess(Process):
    """A process of replay_oracle whose failures the policy's retry layers may catch."""

    loaded: bool = False  # this start loaded the checkpoint: its conversation is treated as a restart's
    calling: Call | None = None  # the call whose request is in flight (the budget's sites; a `call` timeout's)

    def catcher(self, call: Call) -> tuple[int, str] | None:
        """The innermost error layer with an attempt left for this call's instance, and that instance."""
        world = self.world
        assert isinstance(world, RetryWorld)
        turn = self.state.turns[-1].index
        for index, layer in enumerate(self.policy.retries):
            if layer.on not in ERRORS:
                continue
            where = instance_of(layer, self.state.run, call.id, turn)
            if layer.attempts is None or world.spent[index, where] < layer.attempts - 1:
                return index, where
        return None

    def take(self, name: str, offered: tuple[str, ...]) -> str | None:
        """A crash point offering `offered` (a power cut added where one would lose something)."""
        self.passed.append(name)
        kind = self.adversary.chance((*offered, *self._cut_offered()))
        if kind == "crash":
            raise Crash(name)
        if kind == "power-loss":
            self._cut_power()
        return kind

    def request(self, call: Call, key_call: str | None) -> str | None:
        """One request; a death at one of its budget sites spends a one-attempt budget (RETRIES.md 1.8 rule 2)."""
        self.calling = call
        try:
            return self.attempt(call, key_call)
        except (Crash, PowerCut):
            self.death(self.world)
            raise
        finally:
            self.calling = None

    def death(self, world: World) -> None:
        """A death at a budget site of the request in flight leaves `attempt timed out RUN C` in `world` (1.8 rule 2).

        `request` says it as the death unwinds; a sweep's fork (replay_oracle.resume) at the crash point.
        """
        call = self.calling
        if call is None or self.passed[-1] not in (f"tracker accepted {call.id}", f"tool returned {call.id}"):
            return
        if any(layer.one_attempt for layer in self.policy.retries):
            assert isinstance(world, RetryWorld)
            world.timed_out.add(self.state.run)

    def attempt(self, call: Call, key_call: str | None) -> str | None:
        """One request (SEMANTICS.md 5): its answer, or None when the attempt failed (at `tool failed`)."""
        world = self.world
        world.requests += 1
        if not call.writes:
            self.point(f"tool returned {call.id}")
            return f"read {call.id}"
        answer = self.apply(call, key_call)
        accepted = f"tracker accepted {call.id}"
        if call.fails_after_accept and call.id not in world.failed_once:
            world.failed_once.add(call.id)  # the job's own failure: no move, it fails anyway
            self.take(accepted, ("crash",))
            fails = True
        else:
            offered = ("crash", *(("lost-reply",) if "lost-reply" in self.env.faults else ()))
            if self.alone() and self.catcher(call) is not None:
                offered = (*offered, RETRY)
            fails = self.take(accepted, offered) in ("lost-reply", RETRY)
        if fails:
            self.point(f"tool failed {call.id}")
            return None
        self.point(f"tool returned {call.id}")
        return answer

    def send(self, call: Call, key_call: str | None = None) -> str:
        """Send a call; a failure goes to the catching layer (RETRIES.md 1.2), else to the loop."""
        while True:
            answer = self.request(call, key_call)
            if answer is not None:
                return answer
            caught = self.catcher(call)
            if caught is None:
                raise ToolFailed(call.id)
            scope = self.spend(*caught)
            if scope == "turn":
                raise RetryTurn(call.id)
            if scope == "run":
                raise RetryRun(call.id)
            # scope `call`: the same request again, the loop never hears the error

    def spend(self, index: int, where: str) -> str:
        """The layer makes one retry of its instance: counted in the world, which outlives crashes."""
        world = self.world
        assert isinstance(world, RetryWorld)
        layer = self.policy.retries[index]
        world.spent[index, where] += 1
        world.retried[layer.scope] += 1
        return layer.scope

    def run(self) -> None:
        """Load, then runs until the final answer; a `run` retry begins a new one."""
        if not self.load():
            return
        while True:
            try:
                self.drive()
                return
            except RetryRun:
                self.begin_run()  # RETRIES.md 1.2 `run`: a fresh run ID, empty memory, no load

    def begin_run(self) -> None:
        """A fresh run ID and empty memory."""
        self.world.fresh_runs += 1
        self.state = State(f"run-{self.world.fresh_runs}")

    def load(self) -> bool:
        """The start's load (as replay_oracle): False when the start goes no further.

        A checkpoint of a run whose attempt ran out its budget (RETRIES.md 1.8 rule 3) ends the
        run here, before the lock: no save, no request, and no restart after.
        """
        world = self.world
        assert isinstance(world, RetryWorld)
        world.starts += 1
        if world.starts > 1 and world.remembered and self.alone() and self._chance("key-expiry"):
            world.remembered.clear()
        if world.torn and self.policy.unreadable == "ask-person":
            world.asks += 1
            return False
        if world.checkpoint is None:
            world.fresh_runs += 1
            self.state = State(f"run-{world.fresh_runs}")
        elif world.checkpoint.done:
            return False
        elif world.checkpoint.run in world.timed_out:
            world.failed = True  # RETRIES.md 1.8 rule 3: the workflow hears the timeout and fails
            return False
        else:
            self.state = world.checkpoint.copy()
            self.loaded = True
        return True

    def drive(self) -> None:
        """The design's start (lock, startup save, a loaded conversation's repair), then the loop.

        A `turn` retry drops the turn. A start that loaded the checkpoint (a restart, or a `call`
        or `turn` timeout's new attempt: RETRIES.md 1.2) treats the loaded conversation by
        `transcript_on_restart` (CONVERSATIONS.md 1); a `run` retry's new run loads nothing.
        """
        self.take_lock()
        if self.policy.startup_save:
            self.save("start")
        if self.loaded:
            self.loaded = False
            self.restart_transcript()
        while True:
            turns = self.state.turns
            if (not turns or turns[-1].complete) and self.ask_model():
                return  # the final answer, saved
            try:
                self.run_turn(self.state.turns[-1])
            except RetryTurn:
                self.state.turns.pop()  # its reply, results, markers, approvals and failures

    def ask_model(self) -> bool:
        """A model call (SEMANTICS.md 4.3.1): True after the final answer and its save."""
        world = self.world
        turns = self.state.turns
        world.model_calls += 1
        number = len(turns) + 1
        if number > len(self.job.turns):
            self.point("final reply arrived")
            self.state.done = True
            self.save("final")
            return True
        ids = ""
        if self.env.fresh_ids:
            world.handed_out += 1
            ids = f"~{world.handed_out}"
        self.point(f"reply {number} arrived")
        turns.append(Turn(number, ids=ids))
        if self.policy.reply_save == "before-first-send":
            self.save(f"reply {number}")
        return False


@dataclass
class RetryTally(Tally):
    """replay_oracle's tally, plus retries per scope and the worst single scenario (RETRIES.md 1.5)."""

    retried: Counter[str] = field(default_factory=Counter)  # scope -> retries, summed over scenarios
    worst_dups: int = 0
    worst_calls: int = 0


@dataclass
class RetryResult(OracleResult):
    """The sweep's figures per number of moves, and the uninterrupted run's own figures."""

    run_calls: int = 0
    run_dups: int = 0
    run_retried: Counter[str] = field(default_factory=Counter)

    def tally(self, k: int) -> RetryTally:
        """The tally of the scenarios with k moves."""
        tally = self.by_crashes[k]
        assert isinstance(tally, RetryTally)
        return tally

    @property
    def worst_dups(self) -> int:
        """The most duplicates of any one scenario, the uninterrupted run's included."""
        return max([self.run_dups, *(self.tally(k).worst_dups for k in self.by_crashes)])

    @property
    def worst_calls(self) -> int:
        """The most model calls of any one scenario, the uninterrupted run's included."""
        return max([self.run_calls, *(self.tally(k).worst_calls for k in self.by_crashes)])


def replay(
    design: str | Policy, job: Job, tracker: str, moves: tuple[Move, ...], env: Environment = STABLE
) -> Replay | None:
    """Replay a scenario from an empty world; None when it ends before all its moves are taken."""
    return replay_oracle.replay(design, job, tracker, moves, env, world=RetryWorld(), process_type=RetryProcess)


def sweep(
    design: str | Policy, job: Job, tracker: str, depth: int, env: Environment = STABLE, *, reuse: bool = True
) -> RetryResult:
    """Every scenario with 1..depth moves (crashes, faults, retries, timeouts' wake-ups), replayed and measured."""
    made = scenarios(design, job, tracker, depth, env, reuse=reuse)
    _, _, base = next(made)
    world = base.world
    assert isinstance(world, RetryWorld)
    result = RetryResult(
        {k: RetryTally() for k in range(1, depth + 1)},
        base.last_points,
        base.steps,
        run_calls=world.model_calls,
        run_dups=dups(world, job),
        run_retried=Counter(world.retried),
    )
    for k, moves, done in made:
        tally = result.tally(k)
        measure(tally, done, job, result.run_calls)
        tally.moves.update(RETRY if kind == TIMEOUT else kind for _, kind in moves)
        result.steps += done.steps
    return result


def scenarios(
    design: str | Policy, job: Job, tracker: str, depth: int, env: Environment = STABLE, *, reuse: bool = True
) -> Iterator[tuple[int, tuple[Move, ...], Replay]]:
    """The uninterrupted run, then every scenario with 1..depth moves, each with its replay.

    One process at a time: replay_oracle.scenarios with this oracle's world and process. A timeout
    layer or `pause`: pause_oracle.scenarios, a timeout suspending the attempt as a pause does
    (every wake-up of it; no path lengths: `steps` stays 0). `reuse`: see those.
    """
    policy = policy_of(design)
    if two_processes(policy, env):
        return pause_oracle.scenarios(
            policy,
            job,
            tracker,
            depth,
            env,
            world_type=TimeoutWorld,
            process_type=TimeoutProcess,
            suspends=(PAUSE, TIMEOUT),
            reuse=reuse,
        )
    return replay_oracle.scenarios(
        design, job, tracker, depth, env, world_type=RetryWorld, process_type=RetryProcess, reuse=reuse
    )


def measure(tally: RetryTally, done: Replay, job: Job, baseline_calls: int) -> None:
    """Add one scenario's figures to its tally: replay_oracle's, the retries, the worst so far."""
    _measure(tally, done, job, baseline_calls)
    world = done.world
    assert isinstance(world, RetryWorld)
    tally.retried.update(world.retried)
    tally.worst_dups = max(tally.worst_dups, dups(world, job))
    tally.worst_calls = max(tally.worst_calls, world.model_calls)


# Timeout layers (RETRIES.md 1.1 `timeout`, 1.2): the attempt is suspended, as by a pause
# (tests/pause_oracle.py, FAULTS.md 7), and a second process is the new attempt.

TIMEOUT = "timeout"  # the oracle's kind of a timeout's retry move; tallied as `retry`


@dataclass
class TimeoutWorld(RetryWorld, Fenced):
    """The world of two live processes, with the layers' counts; `fresh`: the next process begins a new run."""

    fresh: bool = False


@dataclass
class TimeoutProcess(RetryProcess, PausingProcess):
    """A process of the pause oracle under retry layers: a timeout suspends it and starts the new attempt."""

    def site(self, layer: Layer, name: str) -> str | None:
        """The instance of `layer`'s scope this crash point is a timeout site of, or None (RETRIES.md 1.1)."""
        if layer.scope == "run":
            return "the scenario"
        turns = self.state.turns
        if not turns or turns[-1].complete:
            return None
        if layer.scope == "turn":
            return f"{self.state.run}/turn {turns[-1].index}"
        call = self.calling
        if call is None or name not in (f"tracker accepted {call.id}", f"tool returned {call.id}"):
            return None
        return f"{self.state.run}/call {call.id}"

    def timeout_catcher(self, name: str) -> tuple[int, str] | None:
        """The innermost timeout layer whose site this point is, with an attempt left there."""
        world = self.world
        assert isinstance(world, RetryWorld)
        for index, layer in enumerate(self.policy.retries):
            where = self.site(layer, name) if layer.on == TIMEOUT else None
            if where is not None and (layer.attempts is None or world.spent[index, where] < layer.attempts - 1):
                return index, where
        return None

    def _moment(self, name: str, offered: tuple[str, ...]) -> str | None:
        """The pause oracle's crash point, where a timeout layer may also start a new attempt."""
        self.passed.append(name)
        scheduler = self.scheduler
        alone = not scheduler.alive_besides(self)
        caught = self.timeout_catcher(name) if alone else None
        offered = (*offered, *((TIMEOUT,) if caught else ()), *((PAUSE,) if PAUSE in self.env.faults and alone else ()))
        kind = self.adversary.chance(offered)
        if kind == "crash":
            raise Crash(name)
        if kind == "power-loss":
            self._cut_power()
        if kind in (PAUSE, TIMEOUT):
            if caught is not None and kind == TIMEOUT:
                world = self.world
                assert isinstance(world, TimeoutWorld)
                world.fresh = self.spend(*caught) == "run"
            self.moves.paused_count += 1
            self.moves.wake_chances = 0
            scheduler.report("paused", self)
            scheduler.wait(self)
            return None
        if scheduler.paused is not None and kind is None and self.moves.wake_here():
            scheduler.report("wake", self)
            scheduler.wait(self)  # held here, it goes on from just after this point (FAULTS.md 7 rule 4)
        return kind

    def take(self, name: str, offered: tuple[str, ...]) -> str | None:
        """A crash point of two live processes: the pause oracle's moment."""
        return self._moment(name, (*offered, *self._cut_offered()))

    def request(self, call: Call, key_call: str | None) -> str | None:
        """A request carries the fencing token (FAULTS.md 7.1)."""
        if self.stale():
            raise Stopped(f"fenced: {call.id}")
        return super().request(call, key_call)

    def load(self) -> bool:
        """A `run` timeout's new attempt begins a new run without reading the checkpoint."""
        world = self.world
        assert isinstance(world, TimeoutWorld)
        if not world.fresh:
            return super().load()
        world.fresh = False
        world.starts += 1
        self.begin_run()
        return True


def two_processes(policy: Policy, env: Environment) -> bool:
    """Whether a scenario may hold two live processes: a timeout layer, or `pause`."""
    return PAUSE in env.faults or any(layer.on == TIMEOUT for layer in policy.retries)
