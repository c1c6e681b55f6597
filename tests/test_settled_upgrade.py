"""A deploy without markers meeting a marked call, pinned by the figures that tell the readings apart.

The rule (spec/RETRIES.md section 2, rule 5; SEMANTICS.md 4.3.2 and POLICIES.md section 2
point to it): after `--upgrade-to`, a call the old design marked and left without a result is
handled by the new design's own step. A design without markers has no ladder and reads no
marker, so it sends the call again as any call without a result. The other reading (climb a
ladder because the call carries a marker, SEMANTICS.md 4.3.2 read alone) asks a person or the
tracker instead. The expected figures are counted by hand below, from the crash points of
SEMANTICS.md section 4; no oracle replays upgrades (tests/replay_oracle.py runs one policy per
scenario), so the explorer is checked against the hand count alone. The real reference loop's
row beside the model's: tests/realsweep/reference/test_upgrade_markers.py (the slow tier).
"""

from __future__ import annotations

import tomllib

import pytest

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.spec import metrics
from crashsweep.spec.design import Design
from crashsweep.spec.job import Job, job_from_mapping
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.loop_model import CONTINUE, CRASH, RESTART, START, LoopModel

ONE_WRITE_TOML = """\
name = "one-write"
turns = [["create_a"]]

[calls]
create_a = { tool = "create_issue", writes = true }
"""
ONE_WRITE: Job = job_from_mapping(tomllib.loads(ONE_WRITE_TOML))
"""One tool turn with one write: the smallest job where a marker can be left without a result."""

POINTS = (
    "start: tmp written",
    "start: renamed",
    "reply 1 arrived",
    "reply 1: tmp written",
    "reply 1: renamed",
    "marker create_a: tmp written",
    "marker create_a: renamed",
    "marker saved create_a",
    "tracker accepted create_a",
    "tool returned create_a",
    "result create_a: tmp written",
    "result create_a: renamed",
    "result saved create_a",
    "turn 1: tmp written",
    "turn 1: renamed",
    "final reply arrived",
    "final: tmp written",
    "final: renamed",
)
"""attempt-markers' crash points on one-write (SEMANTICS.md 4 and 7): 18, so 18 scenarios at depth 1."""

APPLIED_UNSAVED = ("tracker accepted create_a", "tool returned create_a", "result create_a: tmp written")
"""The crash points where the tracker holds create_a, the checkpoint holds its marker and no result."""
MARKED_UNSENT = ("marker create_a: renamed", "marker saved create_a")
"""The crash points where the checkpoint holds the marker and the tracker holds nothing yet."""

TRACKER_NAMES = ("keyed", "keyless-lookup")
"""A tracker whose ladder would ask a person (keyed: no lookup), and one whose ladder would look it up."""


def _model(tracker: str, upgrade: str | Design = "save-after-reply") -> LoopModel:
    """attempt-markers on one-write, every restart running `upgrade` (a design's name, or a design)."""
    return variants.model("attempt-markers", ONE_WRITE, TRACKERS[tracker], upgrade=upgrade)


def _crash_at(model: LoopModel, point: str) -> tuple[World, dict[str, int]]:
    """Run to `point`, crash there, restart and run to the end: the final world and the restart's counters."""
    world, _ = model.step(model.initial(), START)
    while model.crash_point(world) != point:
        world, _ = model.step(world, CONTINUE)
    world, _ = model.step(world, CRASH)
    world, counters = model.step(world, RESTART)
    total = dict(counters)
    while not world.finished:
        world, step = model.step(world, CONTINUE)
        for name, value in step.items():
            total[name] = total.get(name, 0) + value
    return world, total


def _crash_points(model: LoopModel) -> tuple[str, ...]:
    """The crash points of the first process, run to the end without a crash."""
    world, _ = model.step(model.initial(), START)
    passed: list[str] = []
    while not world.finished:
        point = model.crash_point(world)
        assert point is not None
        passed.append(point)
        world, _ = model.step(world, CONTINUE)
    return tuple(passed)


@pytest.mark.parametrize("tracker", TRACKER_NAMES)
def test_an_upgrade_without_markers_sends_a_marked_call_again(tracker: str) -> None:
    """Depth 1: 18 scenarios, 3 with one duplicate each, no question, no lookup (hand count).

    Of the 18 crash points (POINTS), the restart, running save-after-reply, finds create_a
    marked and without a result after a crash at `marker create_a: renamed`, `marker saved`,
    `tracker accepted`, `tool returned` and `result create_a: tmp written`. By the rule it sends
    create_a again, with no key (save-after-reply has none): after the first two the tracker
    held nothing, so one record; after the last three (APPLIED_UNSAVED) it held one, so two.
    Before the marker's rename the checkpoint has no marker; from the result's rename on it
    has the result, and nothing is sent again. So with_dups 3, dups 3, missing 0, asks 0,
    lookups 0. The ladder's reading would instead ask a person (keyed tracker: no lookup) or
    the tracker (keyless-lookup) at those 5 restarts and find the truth: dups 0, and 5 asks or
    5 lookups (the next test).
    """
    counts = explore(_model(tracker), 1).counts
    measures, ones = counts.measures[1], range(1, 2)
    assert counts.scenarios == {0: 1, 1: len(POINTS)}
    assert (measures["with_dups"], measures["dups"], measures["missing"]) == (3, 3, 0)
    assert [counts.total(name, ones) for name in (metrics.ASKS, metrics.LOOKUPS, metrics.RERUNS)] == [0, 0, 0]


@pytest.mark.parametrize("tracker", TRACKER_NAMES)
def test_the_ladders_reading_is_what_the_old_design_does_on_its_own(tracker: str) -> None:
    """Without the deploy, attempt-markers' own restarts climb its ladder: dups 0, and 5 asks or 5 lookups.

    These are the figures the other reading gives the upgraded run (the same 5 restarts find a
    marker and no result; a truthful answer sends create_a only when the tracker lacks it), so
    the test above tells the two readings apart by every one of them.
    """
    alone = variants.model("attempt-markers", ONE_WRITE, TRACKERS[tracker])
    counts = explore(alone, 1).counts
    asks, lookups = (counts.total(name, range(1, 2)) for name in (metrics.ASKS, metrics.LOOKUPS))
    assert counts.scenarios == {0: 1, 1: len(POINTS)}
    assert (counts.measures[1]["dups"], asks + lookups) == (0, len(MARKED_UNSENT + APPLIED_UNSAVED))
    assert (asks if tracker == "keyed" else lookups) == 5


def test_each_crash_point_gives_the_rules_outcome() -> None:
    """Crash by crash (keyed tracker): two records exactly after APPLIED_UNSAVED, never a question.

    The marker stays in the checkpoint, unread: after a crash past its rename, the restart's
    saves write it again, and the finished run's checkpoint still holds it.
    """
    model = _model("keyed")
    assert _crash_points(model) == POINTS
    for point in POINTS:
        world, counters = _crash_at(model, point)
        assert world.tracker.count("create_a") == (2 if point in APPLIED_UNSAVED else 1), point
        assert counters.get(metrics.ASKS, 0) == 0, point
        committed = world.checkpoint.committed
        assert committed is not None
        assert committed.last is not None
        marked_on_disk = POINTS.index(point) >= POINTS.index("marker create_a: renamed")
        assert committed.last.marked == (("create_a",) if marked_on_disk else ()), point


def test_the_design_file_form_of_the_upgrade_follows_the_same_rule() -> None:
    """save-after-reply as a policy (its design file, variants/presets.py) gives the built-in's figures.

    The composed loop (variants/composed.py `attempt`) settled any marked call on the policy's
    ladder, which is empty without markers: an internal error, "ladder () settled nothing".
    It now reads a marker only when the policy has a ladder (rule 5).
    """
    filed = variants.PRESETS["save-after-reply"].design
    counts = explore(_model("keyed", filed), 1).counts
    assert counts.scenarios == {0: 1, 1: len(POINTS)}
    assert (counts.measures[1]["with_dups"], counts.measures[1]["dups"]) == (3, 3)
    assert counts.total(metrics.ASKS, range(1, 2)) == 0
