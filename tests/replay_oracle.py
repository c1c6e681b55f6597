"""A naive scenario-replay sweep: the oracle the explorer's counts are checked against.

What: the loop of spec/SEMANTICS.md (sections 1-9), SITUATIONS.md and POLICIES.md written as
plain imperative code, driven by a policy record, that calls `point(name)` at every crash
point. A scenario is a tuple of crash indices (process 1 crashes at its i-th point, process 2
at its j-th, ..., the last process runs to the end); each one is replayed as from an empty
world, and its final world is measured. Nothing is shared with the explorer or the step functions.

Why: the explorer counts scenarios by path counting over a deduplicated state graph, which is
fast but clever. This oracle is slow and obvious: it enumerates every scenario and replays it
from scratch, as the seed's Go test does, so agreement between the two is strong evidence
that both implement the contract. Only the data types (Job, Call, Policy) and Key come from spec/.

Prefix reuse (`scenarios`): a sweep replays a scenario's extension (its moves and one more) not
from an empty world but from where the scenario's own replay stood before the new move, which
is the same computation: the moves before it were taken alike. Only clean cuts are kept, the
moments nothing but the world and the adversary's counters carry on: a process start (`Cut`),
and a crash (its `fork`: the world at that chance, copied, and the next start). `reuse=False`
replays every scenario from an empty world; tests/test_replay_oracle.py holds the two equal.

Lookup rung (crashsweep's documented choice, not in SEMANTICS.md): the loop asks the tracker
"did call C of run R happen?"; after the answer, crash point `lookup answered <call>`; "yes"
takes that record's answer as the result, "no" sends now.

Faults (spec/FAULTS.md), read from the rules: a scenario is a sequence of moves, each a kind
("crash" or a fault kind) taken at the n-th chance counted from the move before (or from the
beginning). A chance is a moment the environment may act: every crash point (a crash; a lost
reply too at `tracker accepted <call>` when the tool's reply is still to come), the moment
before a person answers on rung 3 (a wrong answer), and the moment before a restart while the
tracker remembers a key (key expiry). Chances that offer no enabled kind are not counted.

Conversations (spec/CONVERSATIONS.md), read from the rules: a restart that loads a turn with a
call lacking its result repairs it ("outcome unknown") or, `as-is`, sends it and is stuck for
good (the scenario ends, never finished); the person's approvals are numbered in the world and
kept in memory (saved by the approval save when durable) or by the service; a gated record is
redeemed against the latest approval the loop has that matches it by the binding (else it is
unapproved); `approved-exactly` fails when a record was unapproved, redeemed against other
call or arguments, or an approval redeemed twice; a node's approval forgets the node's earlier
calls and runs them first; `changed-args` is a chance at `reply k arrived` of a reply handed
out before, which gives the reply's calls the next version of their arguments. Under
`approval_consume = "before-resume"` the service marks the request (run, call, version)
consumed at the person's answer, and a gate that must ask for a consumed request is stuck
(section 5; `after-resume-started` keeps mark and approval together: nothing to model).
Under `persist_granularity = "per-batch"` every start that loads a last turn with a call
lacking its result drops that turn's results and markers at the load (section 6). The
conversation is tracked per turn (section 7): `trim-context` is a chance at a restart, as
key expiry's, whose strike marks the oldest turn with a result whose reply is still in the
stored conversation as trimmed (the turns before it leave whole); `both-directions` moves a
trimmed turn's results out of the conversation at the load, and either repair turns `as-is`
into `repair` (`resume-pending` settles its calls before any request); a process holding a
result without its call breaks well-formed-transcript, and its next model call is refused:
stuck.

Power loss (spec/FAULTS.md section 6), read from the rules: the disk keeps, as ALICE records a
program's file operations, the journal of the save in flight (write, fsync, rename, fsync of
the directory) and the disk as it was when that save began (older saves are on disk for
good). What a power cut leaves is worked out from that journal alone; a cut is offered at a
crash point when it would leave a disk other than the one the process sees.
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Self, TypeVar

from crashsweep.spec.job import Call, Job
from crashsweep.spec.keys import key
from crashsweep.spec.policy import Policy, Rung

K = TypeVar("K")
D = TypeVar("D")
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


class PowerCut(Exception):
    """The power goes here: the process dies and the disk keeps only what was durable."""


class ToolFailed(Exception):
    """The tool returned an error after the tracker applied the write (SITUATIONS.md section 2)."""


class Stuck(Exception):
    """The process can never go on (CONVERSATIONS.md 1, `as-is`): the scenario ends, never finished."""


class NodeAgain(Exception):
    """An approval resumed its node from the start: the turn's calls are taken again from the first without a result."""


Move = tuple[int, str]
"""(n, kind): the environment takes `kind` at the n-th chance after the previous move."""
SAID_YES = "a person said it happened"
CRASH_ONLY = ("crash",)


@dataclass(frozen=True)
class Environment:
    """What the environment may do beside crashing (spec/FAULTS.md)."""

    faults: tuple[str, ...] = ()
    fresh_ids: bool = False


STABLE = Environment()


@dataclass
class Adversary:
    """Plays a scenario's moves at the chances they name, and notes the chances after the last move."""

    moves: list[Move]
    taken: int = 0
    since: int = 0  # chances since the last move taken
    later: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)  # chances after the last move
    pauses: int = 0  # chances that are not crash points (each is one step of the explorer's path)
    fork: Callable[[int], None] | None = None  # told of each chance after the last move that offers a crash

    def chance(self, offered: tuple[str, ...]) -> str | None:
        """One chance offering `offered` kinds: the kind the scenario takes here, or None."""
        if not offered:
            return None
        since = self.since = self.since + 1
        taken = self.taken
        if taken < len(self.moves):
            at, kind = self.moves[taken]
            if at == since:
                assert kind in offered, f"move {kind!r} is not offered here (offered: {offered})"
                self.taken = taken + 1
                self.since = 0
                return kind
            return None
        self.later.append((since, offered))
        if self.fork is not None and "crash" in offered:
            self.fork(since)
        return None

    def resumed(self, moves: list[Move], fork: Callable[[int], None] | None = None) -> Self:
        """These counters, playing `moves` with no chance after them noted yet, telling `fork` (see `resume`)."""
        twin = twin_of(self)
        twin.moves, twin.later, twin.fork = moves, [], fork
        return twin


@dataclass
class Turn:
    """A tool turn as the checkpoint holds it."""

    index: int
    results: dict[str, str] = field(default_factory=dict)
    markers: set[str] = field(default_factory=set)
    approved: list[tuple[str, int, int]] = field(default_factory=list)  # (call, arguments' version, approval number)
    complete: bool = False
    ids: str = ""  # the suffix the model gave this reply's call IDs (fresh call IDs only)
    args: int = 1  # the version of the arguments the reply's calls carry (changed-args)
    trimmed: bool = False  # its reply left the stored conversation (trim-context)
    results_out: bool = False  # its results left the conversation too (both-directions, or a later trim)

    def clone(self) -> Turn:
        """A copy that shares no mutable part."""
        return Turn(
            self.index, dict(self.results), set(self.markers), list(self.approved), self.complete, self.ids,
            self.args, self.trimmed, self.results_out,
        )  # fmt: skip


@dataclass
class State:
    """The contents of a checkpoint (on disk) or of the process's memory."""

    run: str
    done: bool = False
    turns: list[Turn] = field(default_factory=list)

    def copy(self) -> State:
        """A copy that shares no mutable part (a complete turn never changes again, so it is shared)."""
        return State(self.run, self.done, [t if t.complete else t.clone() for t in self.turns])

    def clone(self) -> State:
        """A copy that shares nothing mutable, complete turns included (a world's copy: World.copy)."""
        return State(self.run, self.done, [t.clone() for t in self.turns])

    def orphan_result(self, job: Job) -> str | None:
        """The first call whose result this conversation holds without the call (CONVERSATIONS.md 7), or None."""
        for turn in self.turns:
            if turn.trimmed and not turn.results_out:
                held = [call.id for call in job.turns[turn.index - 1] if call.id in turn.results]
                if held:
                    return held[0]
        return None


@dataclass
class World:
    """Everything that outlives a crash: files, tracker, the spent faults, counters."""

    checkpoint: State | None = None
    temp: State | None = None
    torn: bool = False  # the checkpoint's path holds an unreadable file (power loss)
    journal: list[str] = field(default_factory=list)  # the file operations of the save in flight
    base: tuple[State | None, bool] = (None, False)  # the checkpoint (and torn) when that save began
    written: State | None = None  # what that save wrote to the temp file
    lock: int | None = None  # the lock file: which process start wrote it
    lock_temp: int | None = None
    records: list[tuple[str, str, str]] = field(default_factory=list)  # (call, run, answer)
    remembered: dict[str, str] = field(default_factory=dict)  # key -> first answer
    failed_once: set[str] = field(default_factory=set)  # calls whose one-time fault has struck
    fresh_runs: int = 0
    handed_out: int = 0  # replies with calls the model gave under fresh call IDs
    starts: int = 0
    model_calls: int = 0
    asks: int = 0
    lookups: int = 0
    reruns: int = 0
    approvals: int = 0
    saves: int = 0  # saves that reached their rename (checkpoint and lock)
    requests: int = 0  # calls sent to the tracker, reads included (lookups apart)
    given: list[tuple[int, str, str, int]] = field(default_factory=list)  # the person's: (number, run, call, version)
    redeemed: list[int] = field(default_factory=list)  # the approval behind each gated record
    broken: list[str] = field(default_factory=list)  # gated records applied unapproved or under another's approval
    asked: Counter[int] = field(default_factory=Counter)  # hand-outs of each reply number
    changed: Counter[int] = field(default_factory=Counter)  # changed-args strikes per reply number
    stuck: str | None = None  # why the last process can never go on
    malformed: bool = False  # some process sent a tool call without its result, or held a result without its call
    consumed: set[tuple[str, str, int]] = field(default_factory=set)  # requests (run, call, version) answered

    def copy(self) -> Self:
        """A copy that shares no mutable part: what a replay resumed from a cut may change (see `Cut`).

        Field by field, not copy.deepcopy (several times slower, and a sweep makes one per scenario);
        a subclass with mutable fields of its own extends it. One copy of each State, however many
        fields hold it, so the copy keeps the original's aliasing (the checkpoint is often the temp
        file just renamed). tests/test_replay_oracle.py checks that nothing mutable is shared.
        """
        twin = twin_of(self)
        clones: dict[int, State] = {}

        def clone(state: State | None) -> State | None:
            if state is None:
                return None
            if id(state) not in clones:
                clones[id(state)] = state.clone()
            return clones[id(state)]

        twin.checkpoint, twin.temp, twin.written = clone(self.checkpoint), clone(self.temp), clone(self.written)
        twin.base = (clone(self.base[0]), self.base[1])
        twin.journal, twin.records, twin.given = list(self.journal), list(self.records), list(self.given)
        twin.redeemed, twin.broken = list(self.redeemed), list(self.broken)
        twin.remembered, twin.asked, twin.changed = dict(self.remembered), counter(self.asked), counter(self.changed)
        twin.failed_once, twin.consumed = set(self.failed_once), set(self.consumed)
        return twin

    def approved_exactly(self) -> bool:
        """CONVERSATIONS.md 2: nothing unapproved or misapproved, no approval redeemed twice."""
        return not self.broken and len(self.redeemed) == len(set(self.redeemed))

    def records_per_write(self, job: Job) -> list[int]:
        """How many records the tracker holds for each of the job's writes (any run)."""
        held = Counter(call for call, _, _ in self.records)
        return [held[call] for call in job.writes]


def twin_of(value: D) -> D:
    """A new instance of `value`'s dataclass holding the same field values (its mutable ones shared).

    Made by the class's __init__, not by copying `__dict__` (copy.copy's way): an object whose
    `__dict__` was read or written keeps its attributes in a dict of their own, and every later
    attribute read is then several times slower, for the whole replay that uses the copy.
    """
    cls: type = type(value)
    twin: D = cls(*_fields_of(cls)(value))
    return twin


@functools.cache
def _fields_of(cls: type) -> Callable[[object], tuple[object, ...]]:
    """What reads a dataclass instance's field values, in the order its __init__ takes them."""
    names = [f.name for f in fields(cls)]
    assert all(f.init and not f.kw_only for f in fields(cls))
    assert len(names) > 1  # attrgetter of one name gives the value, not a tuple
    return operator.attrgetter(*names)


def counter(counts: Counter[K]) -> Counter[K]:
    """A copy of `counts` (Counter(counts) takes its slow general update, four times the time: a copy per scenario)."""
    twin: Counter[K] = Counter.__new__(Counter)
    dict.update(twin, counts)
    return twin


@functools.cache
def save_points(what: str) -> tuple[str, str, str, str]:
    """The names of a save's crash points: temp file written, synced, renamed, directory synced (made once each)."""
    return f"{what}: tmp written", f"{what}: tmp synced", f"{what}: renamed", f"{what}: dir synced"


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
    env: Environment
    adversary: Adversary
    passed: list[str] = field(default_factory=list)  # the crash points this process passed
    state: State = field(init=False)
    cuts: bool = field(init=False)  # whether power loss is enabled (asked at every crash point)

    def __post_init__(self) -> None:
        self.cuts = "power-loss" in self.env.faults

    def point(self, name: str) -> None:
        """A crash point: the scenario may crash the process here (or cut the power)."""
        self.passed.append(name)
        kind = self.adversary.chance(("crash", *self._cut_offered()) if self.cuts else CRASH_ONLY)
        if kind is None:
            return
        if kind == "crash":
            raise Crash(name)
        if kind == "power-loss":
            self._cut_power()

    def _reply_lost(self, name: str) -> bool:
        """The crash point after the tracker applied a write: a crash, or (if enabled) a lost reply."""
        self.passed.append(name)
        offered = ("crash", "lost-reply") if "lost-reply" in self.env.faults else ("crash",)
        kind = self.adversary.chance((*offered, *self._cut_offered()))
        if kind == "crash":
            raise Crash(name)
        if kind == "power-loss":
            self._cut_power()
        return kind == "lost-reply"

    # Power loss (FAULTS.md section 6): the disk a cut leaves, from the journal of the save in flight.

    def _after_cut(self) -> tuple[State | None, State | None, bool]:
        """(checkpoint, temp, torn) as a power cut would leave them."""
        world = self.world
        journal = world.journal
        checkpoint, torn = world.base
        if not journal:
            return world.checkpoint, world.temp, world.torn
        written = world.written
        if "rename" not in journal:
            return checkpoint, (written if "fsync" in journal else None), torn
        renamed = journal.index("rename")
        if "fsync" not in journal[:renamed]:
            return None, None, True  # an unsynced file renamed into place: unreadable
        if "fsync-dir" in journal[renamed:]:
            return world.checkpoint, world.temp, world.torn
        return checkpoint, written, torn  # the rename is undone; the synced temp file is back

    def _cut_offered(self) -> tuple[str, ...]:
        world = self.world
        if not self.cuts or not world.journal:  # no save in flight: a cut leaves the disk as it is
            return ()
        return ("power-loss",) if self._after_cut() != (world.checkpoint, world.temp, world.torn) else ()

    def _cut_power(self) -> None:
        world = self.world
        world.checkpoint, world.temp, world.torn = self._after_cut()
        world.journal, world.base = [], (world.checkpoint, world.torn)
        if world.temp is not None:
            # The temp file a cut puts back was synced (6.2 rule 3): a process still alive that
            # renames it (FAULTS.md 7) renames a synced file, whose rename a later cut undoes.
            world.journal, world.written = ["write", "fsync"], world.temp
        raise PowerCut()

    def _chance(self, kind: str) -> bool:
        """Whether the environment takes fault `kind` at this chance (only when it is enabled)."""
        if kind not in self.env.faults:
            return False
        self.adversary.pauses += kind == "wrong-answer"
        return self.adversary.chance((kind,)) == kind

    def save(self, what: str, extra: str | None = None) -> None:
        """Save(what): temp file, [fsync], rename, [fsync of the directory], and a marker or result save's point."""
        world, fsync = self.world, self.policy.fsync
        written, synced, renamed, dir_synced = save_points(what)
        world.base, world.journal = (world.checkpoint, world.torn), ["write"]
        world.temp = world.written = self.state.copy()
        self.point(written)
        if fsync != "none":
            world.journal.append("fsync")
            self.point(synced)
        world.checkpoint, world.temp, world.torn = world.temp, None, False
        world.journal.append("rename")
        world.saves += 1
        self.point(renamed)
        if fsync == "full":
            world.journal.append("fsync-dir")
            self.point(dir_synced)
        if extra is not None:
            self.point(extra)

    def apply(self, call: Call, key_call: str | None) -> str:
        """The tracker's side of a write request: its answer, a new record unless a kept key names one."""
        world = self.world
        honoured = self.tracker == "keyed" and self.policy.keys == "run-call"
        # The ID is the call's, or the model's retry's (`<call>.retry`), with the suffix of the
        # reply that gave the call (FAULTS.md section 5): a retry gets no suffix of its own.
        request_key = key(self.state.run, (key_call or call.id) + self.state.turns[-1].ids)
        if honoured and request_key in world.remembered:
            return world.remembered[request_key]
        answer = f"{call.id} record {len(world.records) + 1}"
        world.records.append((call.id, self.state.run, answer))
        if honoured:
            world.remembered[request_key] = answer
        if call.approval:
            self.redeem(call)
        return answer

    # Approvals (CONVERSATIONS.md 2): what the loop has, what matches, what a record redeems.

    def held(self) -> list[tuple[str, int, int]]:
        """The approvals the loop has, oldest first: the service's for this run, or those in memory."""
        if self.policy.approval_storage == "service":
            return [(c, v, n) for n, run, c, v in self.world.given if run == self.state.run]
        return [entry for turn in self.state.turns for entry in turn.approved]

    def matching(self, call: str, version: int) -> tuple[str, int, int] | None:
        """The latest approval the loop has that matches `call` with arguments `version`."""
        binding = self.policy.approval_binding
        for entry in reversed(self.held()):
            if binding == "none" or (entry[0] == call and (binding == "call" or entry[1] == version)):
                return entry
        return None

    def redeem(self, call: Call) -> None:
        """A gated record was applied: against the approval that matches it, or none."""
        version = self.state.turns[-1].args
        entry = self.matching(call.id, version)
        if entry is None:
            self.world.broken.append(f"unapproved {call.id}@{version}")
            return
        if entry[:2] != (call.id, version):
            self.world.broken.append(f"{call.id}@{version} under {entry}")
        self.world.redeemed.append(entry[2])

    def node_before(self, turn: Turn, call: Call) -> list[str]:
        """The calls before `call` in its turn that share its node (CONVERSATIONS.md 3)."""
        if call.node is None:
            return []
        calls = self.job.turns[turn.index - 1]
        return [c.id for c in calls[: calls.index(call)] if c.node == call.node]

    def send(self, call: Call, key_call: str | None = None) -> str:
        """Send a call (section 5); a first write request of a failing call raises ToolFailed."""
        world = self.world
        world.requests += 1
        if not call.writes:
            self.point(f"tool returned {call.id}")
            return f"read {call.id}"
        answer = self.apply(call, key_call)
        # The fault strikes the first request the tracker receives, even if a crash comes first.
        fails = call.fails_after_accept and call.id not in world.failed_once
        if fails:
            world.failed_once.add(call.id)
            self.point(f"tracker accepted {call.id}")
        else:
            # FAULTS.md, lost-reply: the write is applied and its reply may be lost on the way.
            fails = self._reply_lost(f"tracker accepted {call.id}")
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
                if self._chance("wrong-answer"):
                    # FAULTS.md, wrong-answer: "no" although it happened, "yes" although it did not.
                    return self.send(call) if held is not None else SAID_YES
                return held if held is not None else self.send(call)
        raise AssertionError(f"no rung of {self.policy.ladder} applies")

    def _held(self, call: Call) -> str | None:
        held = [answer for c, run, answer in self.world.records if c == call.id and run == self.state.run]
        return held[0] if held else None

    def first_send(self, turn: Turn, call: Call) -> str:
        """A call without marker or result: the approval gate, the marker, then the send."""
        if call.approval and self.matching(call.id, turn.args) is None:
            world, storage = self.world, self.policy.approval_storage
            request = (self.state.run, call.id, turn.args)
            if request in world.consumed:  # CONVERSATIONS.md 5: the person cannot answer it again
                world.stuck = f"the approval of {call.id} (v{turn.args}) was consumed before the resumed run kept it"
                raise Stuck(world.stuck)
            world.approvals += 1
            self.point(f"approval requested {call.id}")
            number = len(world.given) + 1
            world.given.append((number, self.state.run, call.id, turn.args))
            if self.policy.approval_consume == "before-resume":
                world.consumed.add(request)  # marked at the answer, before `approved <call>`; it outlives everything
            if storage != "service":
                turn.approved.append((call.id, turn.args, number))
            again = self.node_before(turn, call) if self.policy.resume_granularity == "node" else []
            for other in again:  # the node runs again from its start
                turn.results.pop(other, None)
                turn.markers.discard(other)
            self.point(f"approved {call.id}")
            if storage == "durable":
                self.save(f"approval {call.id}")
            if again:
                raise NodeAgain(call.id)
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
                    # FAULTS.md section 5: the retry's reply is a model call, not a reply with
                    # calls of its own: it hands out no new IDs (`handed_out` stays).
                    self.world.model_calls += 1
                    self.refuse_malformed()
                    self.point(f"retry reply arrived {call.id}")
                    return self.send(call, key_call=f"{call.id}.retry")
                if self.policy.ladder and call.id in turn.markers:  # a design without markers reads none
                    return self.settle(call)
                return self.first_send(turn, call)
            except ToolFailed:
                failed = True

    def run_turn(self, turn: Turn) -> None:
        """Every call of the turn without a result, then the turn's end (POLICIES.md 1.1)."""
        results = self.policy.result_saves
        calls = self.job.turns[turn.index - 1]
        while True:
            call = next((c for c in calls if c.id not in turn.results), None)
            if call is None:
                break
            try:
                turn.results[call.id] = self.result_of(turn, call)
            except NodeAgain:
                continue
            self.note_conversation()
            if results == "each-call" or (results == "writes-only" and call.writes):
                self.save(f"result {call.id}", f"result saved {call.id}")
        turn.complete = True
        if results != "none":
            self.save(f"turn {turn.index}")

    def alone(self) -> bool:
        """No other process lives (always, with one process at a time)."""
        return True

    def death(self, world: World) -> None:
        """What a crash at the crash point just passed leaves in `world` beyond what it holds: nothing here.

        A crash is raised at the point and unwinds the process, and no frame of this loop catches
        it (an oracle whose frames do says what they leave: tests/retry_oracle.py).
        """

    def take_lock(self) -> None:
        """The policy's lock, right after the load: agent-loop's lock file (SEMANTICS.md 9).

        The lock file's save is no checkpoint save (FAULTS.md 6.2 rule 1): it begins no
        journal, so what the crashed process left unsynced stays at risk at both its points.
        """
        world = self.world
        if self.policy.lock == "file":
            world.lock_temp = world.starts
            self.point("lock: tmp written")
            world.lock, world.lock_temp = world.lock_temp, None
            world.saves += 1
            self.point("lock: renamed")

    def run(self) -> None:
        """Load, lock, startup save, then the loop until the final answer (or a Crash)."""
        world = self.world
        world.starts += 1
        if world.starts > 1 and self.alone():
            self.restart_chance()
        if world.torn and self.policy.unreadable == "ask-person":
            world.asks += 1  # FAULTS.md 6.4: unreadable; the loop refuses to start (counted in asks)
            return
        if world.checkpoint is None:  # none, or (fresh-run) an unreadable one
            world.fresh_runs += 1
            self.state = State(f"run-{world.fresh_runs}")
        elif world.checkpoint.done:
            return
        else:
            self.state = world.checkpoint.copy()
            if self.policy.approval_storage == "memory":
                for turn in self.state.turns:  # no save ever wrote an approval
                    turn.approved = []
            self.load_conversation()
        self.take_lock()
        if self.policy.startup_save:
            self.save("start")
        if world.checkpoint is not None:
            self.restart_transcript()
        while True:
            turns = self.state.turns
            if not turns or turns[-1].complete:
                world.model_calls += 1
                self.refuse_malformed()
                number = len(turns) + 1
                if number > len(self.job.turns):
                    self.point("final reply arrived")
                    self.state.done = True
                    self.save("final")
                    return
                ids = ""
                if self.env.fresh_ids:
                    # FAULTS.md, --call-ids fresh: every reply the model hands out names its calls anew.
                    world.handed_out += 1
                    ids = f"~{world.handed_out}"
                args = self.reply_arrives(number)
                turns.append(Turn(number, ids=ids, args=args))
                if self.policy.reply_save == "before-first-send":
                    self.save(f"reply {number}")
            self.run_turn(turns[-1])

    def restart_chance(self) -> None:
        """A restart's chance (no other process lives): key-expiry, trim-context (FAULTS.md 3, CONVERSATIONS.md 7)."""
        world, faults = self.world, self.env.faults
        offered = ("key-expiry",) if "key-expiry" in faults and world.remembered else ()
        if "trim-context" in faults and self.trim_target() is not None:
            offered = (*offered, "trim-context")
        kind = self.adversary.chance(offered)
        if kind == "key-expiry":
            world.remembered.clear()  # the restart came after the keys' lifetime
        if kind == "trim-context":
            self.trim()

    def trim_target(self) -> int | None:
        """Where in the checkpoint's turns the oldest turn lies whose reply is in its conversation and has a result."""
        checkpoint = self.world.checkpoint
        if checkpoint is None or checkpoint.done:
            return None
        return next((i for i, t in enumerate(checkpoint.turns) if not t.trimmed and t.results), None)

    def trim(self) -> None:
        """The stored conversation loses its oldest messages up to and including turn T's reply (T's results stay)."""
        checkpoint = self.world.checkpoint
        target = self.trim_target()
        assert checkpoint is not None
        assert target is not None
        turns = [t.clone() for t in checkpoint.turns]
        for before in turns[:target]:  # they leave the conversation whole
            before.trimmed = before.results_out = True
        turns[target].trimmed = True
        self.world.checkpoint = State(checkpoint.run, checkpoint.done, turns)

    def load_conversation(self) -> None:
        """What a start makes of the loaded checkpoint at the load, before the design's start.

        `per-batch` (CONVERSATIONS.md 6): a last turn with a call lacking its result loses every
        result and marker (reply, IDs, version, approvals stay). `both-directions` (7): every
        trimmed turn's results leave the conversation (the turn keeps them as its record). A
        conversation then holding a result without its call breaks well-formed-transcript.
        """
        turns = self.state.turns
        last = turns[-1] if turns else None
        half_done = last is not None and any(c.id not in last.results for c in self.job.turns[last.index - 1])
        if self.policy.persist_granularity == "per-batch" and last is not None and half_done:
            last.results.clear()  # an incomplete turn: memory's own copy
            last.markers.clear()
        if self.policy.transcript_repair == "both-directions":
            for i, turn in enumerate(turns):
                if turn.trimmed and not turn.results_out:
                    turns[i] = turn.clone()  # a complete turn is shared with the checkpoint
                    turns[i].results_out = True
        self.note_conversation()

    def note_conversation(self) -> None:
        """well-formed-transcript is broken once a process holds a result without its call (CONVERSATIONS.md 7)."""
        if self.state.orphan_result(self.job) is not None:
            self.world.malformed = True

    def refuse_malformed(self) -> None:
        """A model call (already counted) sending a result without its call: refused, and stuck for good."""
        orphan = self.state.orphan_result(self.job)
        if orphan is not None:
            self.world.stuck = f"the provider refuses the conversation: the result of {orphan} has no call"
            self.world.malformed = True
            raise Stuck(self.world.stuck)

    def restart_transcript(self) -> None:
        """CONVERSATIONS.md 1 and 7: a loaded last turn with calls lacking a result, repaired or sent as it is.

        A `transcript_repair` other than `none` gives the calls `as-is` would send without a result
        "outcome unknown" first, as `repair` does; `resume-pending` sends none (it settles them).
        """
        turns = self.state.turns
        mode = self.policy.transcript_on_restart
        if mode == "as-is" and self.policy.transcript_repair != "none":
            mode = "repair"
        if not turns or turns[-1].complete or mode == "resume-pending":
            return
        last = turns[-1]
        orphans = [c.id for c in self.job.turns[last.index - 1] if c.id not in last.results]
        if not orphans:
            return
        if mode == "repair":
            for call in orphans:
                last.results[call] = "outcome unknown"
            self.note_conversation()
            return
        self.world.model_calls += 1  # as-is: sent, refused, and refused forever
        self.world.stuck = f"the provider refuses the conversation: {orphans[0]} has no result"
        self.world.malformed = True
        raise Stuck(self.world.stuck)

    def reply_arrives(self, number: int) -> int:
        """The point `reply k arrived`, a crash's chance, and changed-args' when the reply was handed out before."""
        world = self.world
        world.asked[number] += 1
        if "changed-args" not in self.env.faults or world.asked[number] == 1:
            self.point(f"reply {number} arrived")  # a crash point like any other (a subclass's own)
            return 1
        self.passed.append(f"reply {number} arrived")
        offered = ("crash", "changed-args", *self._cut_offered())
        kind = self.adversary.chance(offered)
        if kind == "crash":
            raise Crash(f"reply {number} arrived")
        if kind == "power-loss":
            self._cut_power()
        if kind == "changed-args":
            world.changed[number] += 1
            return 1 + world.changed[number]
        return 1


Chances = list[tuple[int, tuple[str, ...]]]
"""The chances after a scenario's last move: (n, the kinds offered at the n-th one)."""


@dataclass(frozen=True)
class Cut:
    """A replay at a process start while no other process lives: a clean cut of its scenario.

    Nothing of the processes before survives a start but the world; the adversary's counters
    (moves taken, chances since the last one, pauses) and the steps so far say where the scenario
    is. Resumed from here (`resume`, on a world no one else changes) with the same moves, or with
    more moves after these, a replay makes the same computation as one from an empty world.
    """

    world: World
    adversary: Adversary  # its counters here (its moves, later chances and fork are a resumed replay's own)
    steps: int

    def before(self, moves: int, at: int) -> bool:
        """Whether this cut of a replay of `moves` moves lies before a next move at the `at`-th chance after them."""
        return self.adversary.taken < moves or self.adversary.since < at


def note_cut(cuts: list[Cut], world: World, adversary: Adversary, steps: int) -> None:
    """Note a process start as a cut: every one after the last move, and the latest before it.

    Not the first start of a scenario: an extension that finds no cut begins at an empty world.
    """
    moves = len(adversary.moves)
    if adversary.taken == adversary.since == 0:
        return
    if cuts and cuts[-1].adversary.taken < moves and adversary.taken < moves:
        cuts.pop()  # the later cut before the last move serves every extension the earlier one does
    cuts.append(Cut(world.copy(), adversary.resumed(adversary.moves), steps))


@dataclass
class Replay:
    """One replayed scenario: its final world, the points of its last process, the chances after its last move.

    `cuts` and `forks` (only when `resume` was asked to keep them): its process starts after its
    last move and the latest before it; and, for each chance after its last move that offers a
    crash, the start that follows that crash (the cut its extension by that crash begins at).
    """

    world: World
    last_points: list[str]
    steps: int
    later: Chances
    cuts: list[Cut] = field(default_factory=list, kw_only=True)
    forks: dict[int, Cut] = field(default_factory=dict, kw_only=True)


def _moves(moves: tuple[int | Move, ...]) -> list[Move]:
    """Moves given as a bare index are crashes (the seed's scenarios: a crash index per process)."""
    return [(move, "crash") if isinstance(move, int) else move for move in moves]


def replay(
    design: str | Policy,
    job: Job,
    tracker: str,
    moves: tuple[int | Move, ...],
    env: Environment = STABLE,
    *,
    world: World | None = None,
    process_type: type[Process] | None = None,
) -> Replay | None:
    """Replay a scenario from an empty world; None when it ends before all its moves are taken.

    `world` and `process_type`: an extended oracle's own (tests/retry_oracle.py), else this one's.
    """
    return resume(
        design, job, tracker, _moves(moves), env, World() if world is None else world, process_type=process_type
    )


def resume(
    design: str | Policy,
    job: Job,
    tracker: str,
    moves: list[Move],
    env: Environment,
    world: World,
    counters: Adversary | None = None,
    steps: int = 0,
    *,
    process_type: type[Process] | None = None,
    keep: bool = False,
) -> Replay | None:
    """`replay` from `world` (changed in place), with the adversary's `counters` and the `steps` of a cut (None: none).

    `keep`: note the replay's cuts and forks. A crash kills the process where it stands: the
    world then is the world at the chance (the process's `death` adds what its unwinding would),
    so the fork is a copy of the world taken at the chance, while the replay itself goes on.
    """
    cuts: list[Cut] = []
    forks: dict[int, Cut] = {}

    def crash_here(at: int) -> None:
        after = world.copy()
        process.death(after)
        counters = adversary.resumed(moves)
        counters.taken, counters.since = len(moves) + 1, 0
        forks[at] = Cut(after, counters, steps + len(process.passed))

    fork = crash_here if keep else None
    adversary = Adversary(moves, fork=fork) if counters is None else counters.resumed(moves, fork)
    policy = policy_of(design)
    try:
        while True:
            if keep:
                note_cut(cuts, world, adversary, steps)
            process = (process_type or Process)(world, job, policy, tracker, env, adversary)
            steps += 1  # the start (or restart)
            try:
                process.run()
            except (Crash, PowerCut):
                steps += len(process.passed)
                continue
            except Stuck:
                pass  # the scenario ends here, never finished (CONVERSATIONS.md 4)
            steps += len(process.passed) + adversary.pauses
            if adversary.taken < len(adversary.moves):
                return None  # it finished without reaching a move: not a scenario
            return Replay(world, process.passed, steps, adversary.later, cuts=cuts, forks=forks)
    finally:
        adversary.fork = None  # it refers to this replay: no cycle of references outlives it


def dups(world: World, job: Job) -> int:
    """Over the job's writes, the sum of max(0, records - 1)."""
    return _dups(world.records_per_write(job))


def missing(world: World, job: Job) -> int:
    """The job's writes with no record at all."""
    return _missing(world.records_per_write(job))


def _dups(held: list[int]) -> int:
    return sum(max(0, records - 1) for records in held)


def _missing(held: list[int]) -> int:
    return sum(1 for records in held if records == 0)


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
    moves: Counter[str] = field(default_factory=Counter)  # moves of each kind, over the scenarios
    saves: int = 0
    requests: int = 0
    approvals: int = 0
    never_finish: int = 0  # scenarios that end stuck
    malformed: int = 0  # scenarios that sent a malformed conversation (every stuck one, and one that gave up)
    misapproved: int = 0  # scenarios whose world breaks approved-exactly


@dataclass
class OracleResult:
    """A sweep's figures per crash count, the uninterrupted run's crash points, and the work done."""

    by_crashes: dict[int, Tally]
    point_names: list[str]
    steps: int
    baseline_approved_exactly: bool = field(default=True, kw_only=True)  # the uninterrupted run keeps it

    def verdicts(self) -> dict[str, bool]:
        """The conversation properties (CONVERSATIONS.md): each holds unless some scenario breaks it.

        Every reachable state lies on some scenario, and what breaks each is kept in the world
        to the end (the history of approvals; the stuck process), so the final worlds decide.
        """
        stuck = self.total("never_finish") > 0
        approved = self.baseline_approved_exactly and self.total("misapproved") == 0
        malformed = self.total("malformed") > 0
        return {"well-formed-transcript": not malformed, "approved-exactly": approved, "can-finish": not stuck}

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


def sweep(
    design: str | Policy, job: Job, tracker: str, depth: int, env: Environment = STABLE, *, reuse: bool = True
) -> OracleResult:
    """Every scenario with 1..depth moves, replayed and measured (`reuse`: see `scenarios`)."""
    _check(design, tracker)
    made = scenarios(design, job, tracker, depth, env, reuse=reuse)
    _, _, base = next(made)  # the uninterrupted run
    baseline_calls = base.world.model_calls
    result = OracleResult(
        {k: Tally() for k in range(1, depth + 1)},
        base.last_points,
        base.steps,
        baseline_approved_exactly=base.world.approved_exactly(),
    )
    for k, scenario, done in made:
        tally = result.by_crashes[k]
        _measure(tally, done, job, baseline_calls)
        tally.moves.update(kind for _, kind in scenario)
        result.steps += done.steps
    return result


def scenarios(
    design: str | Policy,
    job: Job,
    tracker: str,
    depth: int,
    env: Environment = STABLE,
    *,
    world_type: type[World] = World,
    process_type: type[Process] | None = None,
    reuse: bool = True,
) -> Iterator[tuple[int, tuple[Move, ...], Replay]]:
    """The uninterrupted run (0 moves), then every scenario with 1..depth moves, each with its replay.

    A scenario extends by one move at any chance after its last move, of any kind offered there;
    each is followed by its own extensions (depth first: only one scenario's cuts are held per
    number of moves). `reuse`: an extension is replayed from where its scenario's replay left it
    (by a crash: the fork at that chance; else the latest cut before the new move), not from an
    empty world as `replay` does (tests/test_replay_oracle.py holds the two equal).
    `world_type` and `process_type`: an extended oracle's own.
    """
    base = resume(design, job, tracker, [], env, world_type(), process_type=process_type, keep=reuse and depth > 0)
    assert base is not None
    yield 0, (), base

    def extensions(prefix: tuple[Move, ...], replayed: Replay) -> Iterator[tuple[int, tuple[Move, ...], Replay]]:
        k = len(prefix) + 1
        for at, offered in replayed.later:
            cut = next((c for c in reversed(replayed.cuts) if c.before(len(prefix), at)), None)
            for kind in offered:
                scenario = (*prefix, (at, kind))
                if not reuse:
                    done = replay(design, job, tracker, scenario, env, world=world_type(), process_type=process_type)
                else:
                    start = replayed.forks.pop(at) if kind == "crash" else cut
                    world, counters, steps = _begin(start, start is cut, world_type)
                    done = resume(
                        design, job, tracker, list(scenario), env, world, counters, steps,
                        process_type=process_type, keep=k < depth,
                    )  # fmt: skip
                assert done is not None, f"scenario {scenario} does not exist"
                yield k, scenario, done
                if k < depth:
                    yield from extensions(scenario, done)

    yield from extensions((), base)


def _begin(start: Cut | None, shared: bool, world_type: type[World]) -> tuple[World, Adversary | None, int]:
    """Where a replay resumed at `start` begins: its world (a copy if the cut serves others), counters, steps.

    No cut: the beginning (an empty world). A fork serves its one extension: its world needs no copy.
    """
    if start is None:
        return world_type(), None, 0
    return start.world.copy() if shared else start.world, start.adversary, start.steps


def _measure(tally: Tally, done: Replay, job: Job, baseline_calls: int) -> None:
    """Add one scenario's figures to its tally."""
    world = done.world
    tally.scenarios += 1
    held = world.records_per_write(job)  # counted once for both figures
    duplicates = _dups(held)
    tally.dups += duplicates
    tally.with_dups += 1 if duplicates else 0
    tally.missing += _missing(held)
    tally.asks += world.asks
    tally.lookups += world.lookups
    tally.reruns += world.reruns
    tally.model_calls += world.model_calls
    tally.calls_plus += world.model_calls - baseline_calls  # net: below 0 for a run cut short
    tally.saves += world.saves
    tally.requests += world.requests
    tally.approvals += world.approvals
    tally.never_finish += world.stuck is not None
    tally.malformed += world.malformed
    tally.misapproved += not world.approved_exactly()


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
