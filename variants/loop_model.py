"""A loop design against a job and a tracker, as a model the explorer can search.

The world has four kinds of moment: no process (before the first start, or after a crash),
a process at a crash point, a process at a pause (a fault's chance that is no crash point),
and the run finished. The enabled actions follow: start or restart; continue or crash;
continue; nothing. Beside them, every fault kind of the environment (spec/faults.py) that is
enabled in the world is offered as an action of kind "fault", labelled with the kind's name.
While a second process lives (`pause`, spec/FAULTS.md section 7), the paused one may wake at
any crash point of the running one ("wake", a step), and, when none runs, it wakes or the
process held while it ran goes on ("held goes on").
The invariants and measures come from spec/.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial

from crashsweep.explorer.model import Action, Property, Summed
from crashsweep.spec import invariants, metrics, projection, retrying
from crashsweep.spec.design import Design, Env
from crashsweep.spec.faults import FAULTS, FaultKind, fault_counter
from crashsweep.spec.job import Job
from crashsweep.spec.key import WorldKeys
from crashsweep.spec.ops import Pause, Stuck
from crashsweep.spec.pause import held_goes_on, may_wake, unfinished_while_other_lives, wake
from crashsweep.spec.process import advance, boot, boot_new_run, paused, resume
from crashsweep.spec.retries import MOVE, MOVE_COUNTER, Layer, timed_out
from crashsweep.spec.world import NO_SECOND, World, make_world

START = Action("step", "start")
RESTART = Action("restart", "restart")
CONTINUE = Action("step", "continue")
CRASH = Action("crash", "crash")
WAKE = Action("step", "wake")
"""The paused process wakes and goes on (the second half of a pause, spec/FAULTS.md section 7)."""
HELD_GOES_ON = Action("step", "held goes on")
"""The woken process stopped: the process held while it ran goes on."""
_WAKE_LABELS = frozenset({WAKE.label, HELD_GOES_ON.label})
_FAULT_ACTIONS = {name: Action("fault", name) for name in FAULTS}
# The sequences `actions` returns without faults, made once: the explorer plans each node's
# steps once per sequence object it is handed, so equal sequences are best the same object.
_STARTS, _RESTARTS, _CONTINUES, _CONTINUE_OR_CRASH = (START,), (RESTART,), (CONTINUE,), (CONTINUE, CRASH)
_HALTS = (Pause, Stuck)
"""The first instructions of a program that stop a process in place: a pause (it may only continue), stuck."""
UPGRADED = "upgraded"
"""The `World.struck` entry of a deploy that landed before the first restart (spec/RETRIES.md 2)."""


@dataclass(frozen=True)
class LoopModel:
    """The explorer's view of one design run against one job and one tracker."""

    design: Design
    env: Env
    upgrade: Design | None = None
    """The design every restart runs (a deploy between a crash and its restart), or None."""

    def running(self, state: World) -> Design:
        """The design the process of `state` follows: the upgrade once it has landed."""
        if self.upgrade is not None and UPGRADED in state.struck:
            return self.upgrade
        return self.design

    @property
    def faults(self) -> tuple[FaultKind, ...]:
        """The fault kinds the environment may inject, in registry order."""
        return tuple(FAULTS[name] for name in self.env.faults)

    def initial(self) -> World:
        """No checkpoint, an empty tracker, no process yet."""
        return World()

    @cached_property
    def _budgeted(self) -> bool:
        """Some design it runs has a one-attempt budget: a death inside an attempt is recorded (RETRIES.md 1.8)."""
        designs = (self.design,) if self.upgrade is None else (self.design, self.upgrade)
        return any(layer.one_attempt for design in designs for layer in design.retries)

    @cached_property
    def _plain(self) -> bool:
        """No upgrade, no retry layer, no fault: `actions` and `step` take their short paths."""
        return self.upgrade is None and not self.design.retries and not self.env.faults

    def actions(self, state: World) -> Sequence[Action]:
        """Start or restart a stopped world; continue or crash a running process; enabled faults."""
        if state.finished:
            return ()
        if self._plain and state.second is NO_SECOND:
            # The common world, the tests below in their order with the branches that cannot apply left out.
            process = state.process
            if process is None:
                return _STARTS if state.runs == 0 else _RESTARTS
            pending = process.pending
            if pending and isinstance(pending[0], _HALTS):
                return () if isinstance(pending[0], Stuck) else _CONTINUES
            return _CONTINUE_OR_CRASH
        if state.second.other is not None:
            return _two_processes(state, self.faults)
        if state.process is not None and invariants.stuck(state) is not None:
            return ()  # stuck (spec/CONVERSATIONS.md 4): no move, and the scenario never finishes
        if state.process is None:
            moves: tuple[Action, ...] = _STARTS if state.runs == 0 else _RESTARTS
        else:
            moves = _CONTINUES if paused(state) else _CONTINUE_OR_CRASH
        if state.process is not None and self.running(state).retries:
            moves = (*moves, *_retry_actions(state, self.running(state)))
        if not self.env.faults:
            return moves
        return (*moves, *(_FAULT_ACTIONS[kind.name] for kind in self.faults if kind.enabled(state)))

    def step(self, state: World, action: Action) -> tuple[World, Mapping[str, int]]:
        """Apply one action: the process's next stretch, a crash, a fault, a retry, or a (re)start.

        The counters include `DUPLICATES`, the records the step added beyond the first of their
        call, which the measure `dups` sums along the path (explorer.model.Summed).
        """
        counters: Mapping[str, int]
        if action is CONTINUE and self.upgrade is None and state.process is not None:
            # The common edge, `_step`'s path for it taken directly (no upgrade: the design runs).
            after, counters = advance(state, self.env, self.design)
            if after.finished:
                after = unfinished_while_other_lives(after)
        elif action is CRASH:
            after, counters = state.crashed(), {}
            if self._budgeted:
                after = _attempt_lost(state, after, self.running(state))
        else:
            after, counters = self._step(state, action)
        tracker = after.tracker
        if tracker is not state.tracker:
            added = tracker.repeats - state.tracker.repeats
            if added:
                return after, {**counters, DUPLICATES: added}
        return after, counters

    def _step(self, state: World, action: Action) -> tuple[World, Mapping[str, int]]:
        """The step, without the count of duplicates it added."""
        if action.kind == "crash":
            after = state.crashed()
            return (_attempt_lost(state, after, self.running(state)) if self._budgeted else after), {}
        if action.kind == MOVE:
            return self._retry(state, action)
        if self.upgrade is not None and action == RESTART and UPGRADED not in state.struck:
            w, landed = state, (*state.struck, UPGRADED)
            state = make_world(w.checkpoint, w.tracker, None, w.finished, w.runs, w.lock, landed, w.replies, w.second)
        design = self.running(state)
        if action.kind == "fault":
            # The fault changes the world, then the process goes on (or restarts) as usual; a
            # fault that stops the process (a power cut) leaves the restart to its own edge.
            kind = FAULTS[action.label]
            struck = kind.strike(state)
            if kind.stops:
                struck = _attempt_lost(state, struck, design)  # a power cut kills the process too
                return unfinished_while_other_lives(struck), {fault_counter(action.label): 1}
            after, counters = resume(struck, self.env, design)
            return unfinished_while_other_lives(after), {**counters, fault_counter(action.label): 1}
        if action.label in _WAKE_LABELS and action in (WAKE, HELD_GOES_ON):  # the label first: a cheap test
            woken = wake(state) if action == WAKE else held_goes_on(state)
            after, counters = advance(woken, self.env, design)
        elif state.process is None:
            after, counters = boot(state, self.env, design)
        else:
            after, counters = advance(state, self.env, design)
        return (unfinished_while_other_lives(after) if after.finished else after), counters

    def _retry(self, state: World, action: Action) -> tuple[World, Mapping[str, int]]:
        """The attempt fails (an error after accept) or times out, and a layer retries (spec/RETRIES.md 1.4)."""
        design = self.running(state)
        counters: dict[str, int] = {MOVE_COUNTER: 1}
        if action.label.endswith(" on timeout"):
            suspended, layer = retrying.time_out(state, design, counters)
            begin = boot_new_run if layer.scope == "run" else boot
            after, more = begin(suspended, self.env, design)
        else:
            after, more = resume(retrying.fail(state), self.env, design)
        for name, value in more.items():
            counters[name] = counters.get(name, 0) + value
        return unfinished_while_other_lives(after), counters

    @property
    def key(self) -> Callable[[World], Hashable]:
        """What of a world its future can observe (spec/key.py): the answers and the tracker's order left out.

        Each read gives a key of its own, whose tables live as long as the search that holds it.
        """
        job = self.env.job
        return WorldKeys(job.writes, [call.id for call in job.calls])

    def is_finished(self, state: World) -> bool:
        """The run is done and its last process has exited."""
        return state.finished

    def crash_point(self, state: World) -> str | None:
        """The crash point the process is at, if one is running (a pause or a stuck process is none)."""
        process = state.process
        if process is None or paused(state) or invariants.stuck(state) is not None:
            return None
        return process.point

    @property
    def properties(self) -> Sequence[Property[World]]:
        """The registered invariants (spec/invariants/registry.py), each with its witness, then the witnesses."""
        return properties(self.env.job)

    @property
    def measures(self) -> Mapping[str, Callable[[World], int]]:
        """dups, with_dups and missing of a scenario's final world, and whether it never finishes (stuck).

        dups is summed along the path from the counter `DUPLICATES` (explorer.model.Summed): a
        tracker's records are never taken back and every record is of one of the job's writes,
        so the duplicates of a final world are the duplicates its path's steps added, and the
        state key needs to keep only whether a world holds one (spec/SEMANTICS.md section 11).
        """
        job = self.env.job
        return {
            "dups": Summed(DUPLICATES, partial(metrics.dups, job=job)),
            "with_dups": partial(metrics.with_dups, job=job),
            "missing": partial(metrics.missing, job=job),
            NEVER_FINISH: _never_finishes,
        }


DUPLICATES = "summed.dups"
"""The counter of records a step added beyond the first of their call, summed into the measure dups."""
NEVER_FINISH = "never_finish"
"""The measure of a scenario that ends stuck: 1 (spec/CONVERSATIONS.md 4)."""


def _attempt_lost(state: World, after: World, design: Design) -> World:
    """`after`, with `attempt timed out RUN C` recorded when the process died inside C's attempt (RETRIES.md 1.8)."""
    process = state.process
    if not design.retries or process is None:
        return after
    entry = timed_out(design.retries, process.point, process.memory.run)
    if entry is None or entry in after.struck:
        return after
    w, struck = after, (*after.struck, entry)
    return make_world(w.checkpoint, w.tracker, w.process, w.finished, w.runs, w.lock, struck, w.replies, w.second)


def _never_finishes(world: World) -> int:
    return 0 if invariants.stuck(world) is None else 1


def _with_job(check: Callable[[World, Job], bool], job: Job) -> Callable[[World], bool]:
    """`check` with the job given, as a closure.

    The explorer calls a property's check once a state; a closure costs half what a partial
    with a keyword does.
    """

    def checked(world: World) -> bool:
        return check(world, job)

    return checked


def properties(job: Job) -> tuple[Property[World], ...]:
    """Every registered invariant as a property of the explorer, then each witness once.

    An invariant's model check (its incremental form) is used where it has one; else its check
    over the world's projection (spec/projection.py), which costs a history per state.
    """
    found: list[Property[World]] = []
    witnesses: dict[str, Callable[[World], bool]] = {}
    for invariant in invariants.registered():
        holds, seen, explain = _checks(invariant, job)
        make = {"always": Property.always, "at_end": Property.at_end, "live": Property.can_finish}[invariant.kind]
        found.append(make(invariant.name, holds, witness=invariant.witness, explain=explain))
        witnesses.setdefault(invariant.witness, seen)
    return (*found, *(Property.sometimes(name, seen) for name, seen in witnesses.items()))


def _checks(
    invariant: invariants.Invariant, job: Job
) -> tuple[Callable[[World], bool], Callable[[World], bool], Callable[[World], str]]:
    """The invariant's holds, witness and words over a world: its model check, or its check of the projection."""
    model = invariant.model
    if model is not None:
        return _with_job(model.holds, job), _with_job(model.seen, job), _words_with_job(model.explain, job)

    def holds(world: World) -> bool:
        return invariant.check(projection.history(world, job)) is None

    def seen(world: World) -> bool:
        return invariant.seen(projection.history(world, job))

    def explain(world: World) -> str:
        found = invariant.check(projection.history(world, job))
        return "" if found is None else found.why

    return holds, seen, explain


def _words_with_job(explain: Callable[[World, Job], str], job: Job) -> Callable[[World], str]:
    """`explain` with the job given."""

    def said(world: World) -> str:
        return explain(world, job)

    return said


def _retry_actions(state: World, design: Design) -> tuple[Action, ...]:
    """The retry moves enabled here: an error a layer catches, a timeout a layer gives up on."""
    found: list[Layer] = []
    failing = retrying.fail_here(state, design)
    if failing is not None:
        found.append(failing)
    timing_out = retrying.timeout_here(state, design)
    if timing_out is not None:
        found.append(timing_out)
    return tuple(_retry_action(layer) for layer in found)


def _retry_action(layer: Layer) -> Action:
    return Action("retry", f"retry {layer.label}")


def _two_processes(state: World, faults: tuple[FaultKind, ...]) -> tuple[Action, ...]:
    """Actions while a second process lives (spec/FAULTS.md section 7).

    None runs: the paused process wakes, or the held one goes on. One runs: it continues or
    crashes as usual, a paused one may wake at its crash point, and the other enabled faults
    (never a second pause) may strike.
    """
    if state.process is None:
        return (WAKE,) if may_wake(state) else (HELD_GOES_ON,)
    if invariants.stuck(state) is not None:
        # A stuck process gives up and exits beside another (rule 11): the paused one wakes, the held one goes on.
        return (WAKE,) if may_wake(state) else (HELD_GOES_ON,)
    if paused(state):
        moves: tuple[Action, ...] = (CONTINUE,)
    else:
        moves = (CONTINUE, CRASH, WAKE) if may_wake(state) else (CONTINUE, CRASH)
    return (*moves, *(_FAULT_ACTIONS[kind.name] for kind in faults if kind.enabled(state)))
