"""The `changed-args` fault's two open readings (issue #45), each pinned by what tells the readings apart.

spec/FAULTS.md section 8 settles them: (1) a plain re-ask (the fault does not strike at the
reply's arrival) carries the arguments of version 1, whatever an earlier hand-out carried; (2)
the fault's chance is open at every arrival of a reply handed out before, once per arrival,
before the reply becomes a turn in memory, so a reply may be struck again at a later hand-out.

All on refund-approval (turn 1: the gated refund; turn 2: note) under save-after-reply with
`reply_save = "never"`, keys `run-call` on a keyed tracker, approvals kept by the `service`
and bound to `call-and-args`: an approval outlives a reply that was never saved, and matches
only the version it was given for, so the version a re-ask carries shows in the person's
approvals. Each expected figure is counted by hand in the test's docstring or taken from the
replay oracle (tests/replay_oracle.py: `Process.reply_arrives` gives a plain arrival version 1
and offers the fault at every arrival of a reply asked before), and checked against the explorer.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.explorer import explore
from crashsweep.spec import approval, metrics
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import load_job
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel
from tests.replay_oracle import DESIGNS, Environment, replay, sweep

REFUND = load_job(Path(__file__).resolve().parents[1] / "examples" / "refund-approval.toml")
POLICY = replace(
    DESIGNS["save-after-reply"],
    reply_save="never",
    keys="run-call",
    approval_storage="service",
    approval_binding="call-and-args",
)
CHANGED_ARGS = ("changed-args",)
ARRIVED = "reply 1 arrived"
APPROVED = "approved refund"


def _model() -> LoopModel:
    return LoopModel(compose("p", "", POLICY), Env(REFUND, TRACKERS["keyed"], CHANGED_ARGS))


def _walk_to(model: LoopModel, world: World, point: str) -> World:
    """Take the run's own next step (a start, a restart, a continue) until the process is at `point`."""
    while model.crash_point(world) != point:
        world, _ = model.step(world, model.actions(world)[0])
    return world


def _take(model: LoopModel, world: World, label: str) -> World:
    """Take the one action labelled `label` (a crash, a fault)."""
    (action,) = [a for a in model.actions(world) if a.label == label]
    return model.step(world, action)[0]


def _labels(model: LoopModel, world: World) -> list[str]:
    return [action.label for action in model.actions(world)]


def _version(world: World) -> int:
    """The version of the arguments the running process's last turn carries."""
    process = world.process
    assert process is not None
    assert process.memory.last is not None
    return process.memory.last.args


def _given(world: World) -> list[str]:
    """The person's approvals in order, as `call@version` (spec/approval.py keeps them in `struck`)."""
    return [e.split(" ")[-1] for e in world.struck if e.startswith(approval.GIVEN)]


def _redeemed(world: World) -> list[str]:
    """The approval number each gated record was redeemed against, in order."""
    return [e[len(approval.REDEEMED) :] for e in world.struck if e.startswith(approval.REDEEMED)]


def _struck_then_crashed_after_approval(model: LoopModel) -> World:
    """Three moves: crash at reply 1's first arrival, strike at its second (v2), crash once (refund, 2) is approved.

    Returns the world at reply 1's third arrival, after the restart.
    """
    world = _walk_to(model, model.initial(), ARRIVED)
    assert CHANGED_ARGS[0] not in _labels(model, world)  # the first hand-out: no chance
    world = _walk_to(model, _take(model, world, "crash"), ARRIVED)
    world = _take(model, world, CHANGED_ARGS[0])
    assert _version(world) == 2
    world = _walk_to(model, world, APPROVED)
    assert _given(world) == ["refund@2"]
    return _walk_to(model, _take(model, world, "crash"), ARRIVED)


# (1) The argument version of a plain re-ask.


def test_a_plain_re_ask_after_a_strike_carries_version_1_and_the_person_is_asked_again() -> None:
    """Reading (1) against "a re-ask repeats the last version handed out", on one path of 3 moves.

    Crash at `reply 1 arrived` (nothing approved yet). The restart asks again: the fault strikes
    at the second arrival, refund carries v2; no approval matches (refund, 2), the person gives
    #1 for it; crash at `approved refund` (the checkpoint still holds the start only). The third
    hand-out is not struck: refund carries v1. #1, given for v2, does not match under
    `call-and-args`: the person is asked again and gives #2 for (refund, 1), and refund's one
    record is redeemed against #2. Had the re-ask repeated v2, #1 would have matched: one
    approval, the record redeemed against #1. The oracle replays the same moves (the n-th
    chance after the move before: 3rd, 3rd, 2nd) to the same approvals.
    """
    model = _model()
    world = _struck_then_crashed_after_approval(model)
    world = _walk_to(model, world, APPROVED)  # continue: no strike at this arrival
    assert _version(world) == 1
    while not model.is_finished(world):
        world, _ = model.step(world, model.actions(world)[0])
    assert (_given(world), _redeemed(world)) == (["refund@2", "refund@1"], ["2"])
    assert approval.broken(world, REFUND) == ()

    moves = ((3, "crash"), (3, "changed-args"), (2, "crash"))
    done = replay(POLICY, REFUND, "keyed", moves, Environment(CHANGED_ARGS))
    assert done is not None
    assert done.world.given == [(1, "run-1", "refund", 2), (2, "run-1", "refund", 1)]
    assert done.world.redeemed == [2]


def test_a_plain_re_ask_matches_the_approval_of_version_1_given_before_the_crash() -> None:
    """Reading (1) against "every re-ask carries a new version": the approvals asked at depth 1 (hand count).

    The uninterrupted run has 23 crash points; from the 9th, `result refund: renamed`, on, a
    restart loads turn 1 with refund's result. APPROVALS counts each request to the person. A
    crash at one of the 3 points before the request (start x2, `reply 1 arrived`): the restart
    asks once: 3. At `approval requested refund`: asked, not approved, asked again: 2. At
    `approved refund`, `tracker accepted refund`, `tool returned refund`, `result refund: tmp
    written`: #1 for (refund, 1) is at the service, the restart asks the model again, refund
    carries v1, #1 matches: 4 x 1. At the 15 later points turn 1 is loaded with its result: 15
    x 1. 3 + 2 + 4 + 15 = 24. A new version on every re-ask would ask again at those 4 points
    (28). (The fault cannot strike at depth 1: its reply must have been handed out before.)
    """
    counts = explore(_model(), 1).counts
    assert (counts.scenarios[1], counts.counters[1][metrics.APPROVALS]) == (23, 24)
    assert sweep(POLICY, REFUND, "keyed", 1, Environment(CHANGED_ARGS)).by_crashes[1].approvals == 24


# (2) The chance at `reply k arrived`, before turn k is in memory.


def test_a_reply_struck_once_may_be_struck_again_at_a_later_hand_out() -> None:
    """Reading (2) against "one strike per reply": the path of the test above, struck at its third arrival too.

    At `reply 1 arrived` the process's memory holds no turn (turn 1 is appended by the next
    instruction), yet the chance is offered at the second and third arrivals: reply 1 was
    handed out before. A strike is followed at once by the append (the process is at `approval
    requested refund`, turn 1 carrying the new version), so the chance is taken at most once per
    arrival. The third arrival's strike gives v3, one more than the highest handed out (v2,
    not the v1 of the plain hand-outs): the person is asked for (refund, 3) as #2, which the
    record is redeemed against. The oracle replays the same 4 moves to the same approvals.
    """
    model = _model()
    world = _struck_then_crashed_after_approval(model)
    assert world.process is not None
    assert world.process.memory.size == 0
    assert CHANGED_ARGS[0] in _labels(model, world)
    world = _take(model, world, CHANGED_ARGS[0])
    assert model.crash_point(world) == "approval requested refund"
    assert _version(world) == 3
    while not model.is_finished(world):
        world, _ = model.step(world, model.actions(world)[0])
    assert (_given(world), _redeemed(world)) == (["refund@2", "refund@3"], ["2"])

    moves = ((3, "crash"), (3, "changed-args"), (2, "crash"), (3, "changed-args"))
    done = replay(POLICY, REFUND, "keyed", moves, Environment(CHANGED_ARGS))
    assert done is not None
    assert done.world.given == [(1, "run-1", "refund", 2), (2, "run-1", "refund", 3)]


@pytest.mark.parametrize(
    ("depth", "figures"),
    [(2, (332, 364, 10)), (3, (3836, 4432, 284)), (4, (38824, 47312, 4918))],
)
def test_the_figures_that_tell_the_readings_apart(depth: int, figures: tuple[int, int, int]) -> None:
    """Scenarios, approvals asked and changed-args moves with `depth` moves: the oracle's and the explorer's.

    Depth 2, by hand: a strike needs an earlier hand-out of its reply, so it is the second move,
    after a crash that makes the restart ask again: at one of the 6 points from `reply 1
    arrived` to `result refund: tmp written` (turn 1 not yet saved), or of the 4 from `reply 2
    arrived` to `result note: tmp written`: 10 changed-args moves. Waiting for turn k in memory
    (never there at `reply k arrived`) would give none. Depth 3 holds the path of the first test:
    a plain re-ask repeating the last version would ask 4,428 times. Depth 4 holds the path of
    the third: one strike per reply would give 38,782 scenarios and 4,834 strikes. (The other
    readings' figures are the explorer's with its version or its chance changed to theirs.)
    """
    counts = explore(_model(), depth).counts
    mine = (
        counts.scenarios[depth],
        counts.counters[depth][metrics.APPROVALS],
        counts.counters[depth].get(fault_counter(CHANGED_ARGS[0]), 0),
    )
    tally = sweep(POLICY, REFUND, "keyed", depth, Environment(CHANGED_ARGS)).by_crashes[depth]
    assert mine == (tally.scenarios, tally.approvals, tally.moves[CHANGED_ARGS[0]]) == figures
