"""Tests of crashsweep.reports.describe: worlds in words, step diffs, and worlds as JSON."""

from __future__ import annotations

import json
from dataclasses import replace

from crashsweep.reports.counterexample import Counterexample
from crashsweep.reports.describe import (
    _spent,
    changes,
    plural,
    snapshot_changes,
    snapshot_text,
    tracker_changes,
    world_json,
    world_text,
)
from crashsweep.spec.ops import Stuck
from crashsweep.spec.world import Checkpoint, LockFile, Record, Snapshot, Tracker, Turn, World, make_process

TURN = Turn(1, results=(("create_a", "#1"),), marked=("create_a", "create_b"))


def test_plural_counts() -> None:
    """Nouns take s or es after any count but one."""
    assert [plural(1, "crash"), plural(2, "crash"), plural(0, "step"), plural(1, "step")] == [
        "1 crash",
        "2 crashes",
        "0 steps",
        "1 step",
    ]


def test_snapshot_text_names_results_markers_and_completeness() -> None:
    """A snapshot shows its run, each turn's results, unsettled markers and whether it is done."""
    assert snapshot_text(None) == "none"
    assert snapshot_text(Snapshot("run-1")) == "run-1, no turns"
    text = snapshot_text(Snapshot("run-1", done=True, turns=(replace(TURN, complete=True),)))
    assert text == "run-1 (done), turn 1 (create_a=#1, marker create_b, complete)"


def test_snapshot_changes_list_only_what_is_new() -> None:
    """Only the results, markers, turns and flags that differ are listed."""
    old = Snapshot("run-1", turns=(Turn(1),))
    new = Snapshot("run-1", done=True, turns=(TURN, Turn(2)))
    assert snapshot_changes(old, new) == [
        "create_a=#1",
        "marker create_a",
        "marker create_b",
        "+turn 2 (no results)",
        "done",
    ]
    assert snapshot_changes(new, new) == []
    assert snapshot_changes(None, old) == ["run-1, turn 1 (no results)"]


def test_tracker_changes_number_the_new_records() -> None:
    """New records are numbered as the tracker answers them; new keys are shown shortened."""
    old = Tracker(records=(Record("create_a", "run-1"),))
    new = Tracker(records=(*old.records, Record("create_a", "run-1")), keys=(("0123456789abcdef", "#2"),))
    assert tracker_changes(old, new) == ["+record #2 create_a (run-1)", "+key 01234567... -> #2"]


def test_changes_of_a_crash_and_a_restart(sar_cx: Counterexample) -> None:
    """A crash loses the memory; a restart loads the checkpoint; a same-content save is still shown."""
    crash = next(s for s in sar_cx.steps if s.kind == "crash")
    restart = sar_cx.steps[crash.index]
    assert changes(crash.before, crash.state, {}) == ["process down: memory lost (run-1, turn 1 (no results))"]
    assert changes(restart.before, restart.state, {}) == [
        "process up: loaded run-1, turn 1 (no results)",
        "temp file written: same content",
    ]
    rename = sar_cx.steps[crash.index + 1]
    assert changes(rename.before, rename.state, {}) == ["checkpoint renamed: same content"]


def test_changes_of_the_lock_and_counters() -> None:
    """Lock writes and renames, model calls and questions are each named."""
    before = World(process=None, runs=1, checkpoint=Checkpoint(Snapshot("run-1")), lock=LockFile(tmp="run-1"))
    after = replace(before, lock=LockFile(holder="run-1"))
    assert "lock renamed: held by run-1" in changes(before, after, {"model_calls": 1, "asks": 1})
    assert "model called" in changes(before, after, {"model_calls": 1})
    assert "person asked (1)" in changes(before, after, {"asks": 1})
    assert changes(before, before, {}) == ["nothing changed on disk or at the tracker"]


def test_world_json_is_plain_json(sar_cx: Counterexample) -> None:
    """A world becomes JSON with numbered records and the process's point, and survives a round trip."""
    data = world_json(sar_cx.end)
    assert json.loads(json.dumps(data)) == data
    assert [r["number"] for r in data["tracker"]["records"]] == [1, 2]
    assert data["process"]["point"] == "tracker accepted create_a"
    assert data["checkpoint"]["file"]["turns"][0]["index"] == 1
    assert world_text(World()) == "checkpoint none; tracker no records; no process"


def test_approvals_failures_and_used_up_failures_are_described() -> None:
    """Approved and failed calls show in snapshots and diffs; a used-up tool failure is named."""
    turn = Turn(1, approved=("w",), failed=("w",))
    assert snapshot_text(Snapshot("run-1", turns=(turn,))) == "run-1, turn 1 (approved w, failed w)"
    assert snapshot_changes(Snapshot("run-1", turns=(Turn(1),)), Snapshot("run-1", turns=(turn,))) == [
        "approved w",
        "failed w",
    ]
    assert "tool failure used up: w" in changes(World(), World(struck=("w",)), {})
    assert world_json(World(struck=("w",)))["struck"] == ["w"]


def test_what_the_environment_spent_is_told_by_kind() -> None:
    """A tool's one failure, a layer's retry (RETRIES.md 1.3) and the deploy (section 2), each in words."""
    assert _spent((), ("create_a",)) == ["tool failure used up: create_a"]
    assert _spent(("create_a",), ("create_a", "retry 0 run-1/create_a")) == ["retried by a layer: run-1/create_a"]
    assert _spent((), ("upgraded",)) == ["the restart runs the upgrade"]
    assert _spent(("create_a",), ("create_a",)) == []


def test_a_stuck_process_and_the_approvals_are_told() -> None:
    """CONVERSATIONS.md: the refused conversation that sticks a process; approvals given and redeemed."""
    up = World(process=make_process(Snapshot("run-1"), (), "start: renamed"))
    stuck = World(process=make_process(Snapshot("run-1"), (Stuck("the provider refuses"),), "the provider refuses"))
    assert "STUCK: the provider refuses" in changes(up, stuck, {"model_calls": 1})
    history = World(struck=("approval 1 run-1 w@1", "args changed 2", "misapproved w@2 under w@1#1", "redeemed 1"))
    assert changes(World(), history, {}) == [
        "person approved w@1 (approval #1)",
        "the model changed the arguments of reply 2",
        "misapproved w@2 applied under w@1#1",
        "approval #1 redeemed",
    ]
