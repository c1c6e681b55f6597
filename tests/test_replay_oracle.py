"""The replay oracle, on its own, reproduces every number SEMANTICS.md publishes."""

from __future__ import annotations

from dataclasses import is_dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from crashsweep.spec.job import TRIAGE, Job, load_job
from tests.published import SEED_TABLE
from tests.replay_oracle import (
    DESIGNS,
    Environment,
    dups,
    policy_of,
    replay,
    scenarios,
    single_crash_outcomes,
    sweep,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _save(what: str, extra: str | None = None) -> list[str]:
    """The crash points of Save(what) (section 3)."""
    return [f"{what}: tmp written", f"{what}: renamed", *([extra] if extra else [])]


def _write(call: str) -> list[str]:
    return [f"tracker accepted {call}", f"tool returned {call}"]


def _result(call: str) -> list[str]:
    return _save(f"result {call}", f"result saved {call}")


def _marker(call: str) -> list[str]:
    return _save(f"marker {call}", f"marker saved {call}")


SAVE_ONCE_PER_TURN_POINTS = [
    "start: tmp written",
    "start: renamed",
    "reply 1 arrived",
    "tracker accepted create_a",
    "tool returned create_a",
    "tracker accepted create_b",
    "tool returned create_b",
    "turn 1: tmp written",
    "turn 1: renamed",
    "reply 2 arrived",
    "tool returned search",
    "tracker accepted comment_a",
    "tool returned comment_a",
    "turn 2: tmp written",
    "turn 2: renamed",
    "final reply arrived",
    "final: tmp written",
    "final: renamed",
]
SAVE_AFTER_REPLY_POINTS = [
    *_save("start"),
    "reply 1 arrived",
    *_save("reply 1"),
    *_write("create_a"),
    *_result("create_a"),
    *_write("create_b"),
    *_result("create_b"),
    *_save("turn 1"),
    "reply 2 arrived",
    *_save("reply 2"),
    "tool returned search",
    *_result("search"),
    *_write("comment_a"),
    *_result("comment_a"),
    *_save("turn 2"),
    "final reply arrived",
    *_save("final"),
]
MARKER_POINTS = [
    *_save("start"),
    "reply 1 arrived",
    *_save("reply 1"),
    *_marker("create_a"),
    *_write("create_a"),
    *_result("create_a"),
    *_marker("create_b"),
    *_write("create_b"),
    *_result("create_b"),
    *_save("turn 1"),
    "reply 2 arrived",
    *_save("reply 2"),
    "tool returned search",
    *_result("search"),
    *_marker("comment_a"),
    *_write("comment_a"),
    *_result("comment_a"),
    *_save("turn 2"),
    "final reply arrived",
    *_save("final"),
]
AGENT_LOOP_POINTS = [
    "lock: tmp written",
    "lock: renamed",
    *_save("start"),
    "reply 1 arrived",
    *_marker("create_a"),
    *_write("create_a"),
    *_result("create_a"),
    *_marker("create_b"),
    *_write("create_b"),
    *_result("create_b"),
    *_save("turn 1"),
    "reply 2 arrived",
    "tool returned search",
    *_marker("comment_a"),
    *_write("comment_a"),
    *_result("comment_a"),
    *_save("turn 2"),
    "final reply arrived",
    *_save("final"),
]
POINTS = {
    "save-once-per-turn": SAVE_ONCE_PER_TURN_POINTS,
    "save-after-reply": SAVE_AFTER_REPLY_POINTS,
    "idempotency-keys": SAVE_AFTER_REPLY_POINTS,
    "attempt-markers": MARKER_POINTS,
    "keys-and-markers": MARKER_POINTS,
    "agent-loop": AGENT_LOOP_POINTS,
}


@pytest.mark.parametrize("design", list(SEED_TABLE))
def test_seed_table_row(design: str) -> None:
    """The oracle's depth-2 row on triage is the seed table's row (section 8)."""
    result = sweep(design, TRIAGE, "keyed", 2)
    row = (
        result.by_crashes[1].scenarios,
        result.by_crashes[2].scenarios,
        result.total("with_dups"),
        result.total("dups"),
        result.total("missing"),
        result.total("asks"),
        result.total("calls_plus"),
    )
    assert row == SEED_TABLE[design]
    assert result.crash_points == SEED_TABLE[design][0]


@pytest.mark.parametrize(("tracker", "twice", "asks"), [("keyed", 872, 0), ("keyless", 854, 624)])
def test_agent_loop_figures(tracker: str, twice: int, asks: int) -> None:
    """agent-loop has 38 points, 910 or 892 scenarios at depth 2, no dup or loss, 0 or 624 asks (section 9)."""
    result = sweep("agent-loop", TRIAGE, tracker, 2)
    assert result.crash_points == 38
    assert (result.by_crashes[1].scenarios, result.by_crashes[2].scenarios) == (38, twice)
    assert (result.total("dups"), result.total("missing"), result.total("asks")) == (0, 0, asks)


@pytest.mark.parametrize("design", list(DESIGNS))
def test_uninterrupted_crash_points(design: str) -> None:
    """The uninterrupted triage run passes the crash points of sections 7 and 9, in order."""
    assert sweep(design, TRIAGE, "keyed", 1).point_names == POINTS[design]


@pytest.mark.parametrize("design", list(DESIGNS))
def test_uninterrupted_run_calls(design: str) -> None:
    """An uninterrupted triage run makes 3 model calls and 4 tool calls, one record per write (section 2)."""
    done = replay(design, TRIAGE, "keyed", ())
    assert done is not None
    assert done.world.model_calls == 3
    assert sum(name.startswith("tool returned ") for name in done.last_points) == 4
    assert sorted(call for call, _, _ in done.world.records) == sorted(TRIAGE.writes)


def test_save_once_per_turn_duplicate_points() -> None:
    """In save-once-per-turn exactly the 8 crash points section 8 names leave a duplicate."""
    outcomes = single_crash_outcomes("save-once-per-turn", TRIAGE, "keyed")
    assert len(outcomes) == 18
    assert [name for name, dups in outcomes if dups > 0] == [
        "tracker accepted create_a",
        "tool returned create_a",
        "tracker accepted create_b",
        "tool returned create_b",
        "turn 1: tmp written",
        "tracker accepted comment_a",
        "tool returned comment_a",
        "turn 2: tmp written",
    ]


def test_save_after_reply_duplicate_points() -> None:
    """In save-after-reply 9 of the 34 crash points leave a duplicate (section 8)."""
    outcomes = single_crash_outcomes("save-after-reply", TRIAGE, "keyed")
    assert (len(outcomes), sum(1 for _, dups in outcomes if dups > 0)) == (34, 9)


def test_restart_after_done_forms_no_scenario() -> None:
    """A restart that finds the run done has no crash point, so crashing it forms no scenario (sections 4 and 8)."""
    last = len(SAVE_ONCE_PER_TURN_POINTS)
    assert replay("save-once-per-turn", TRIAGE, "keyed", (last, 1)) is None
    finished = replay("save-once-per-turn", TRIAGE, "keyed", (last,))
    assert finished is not None
    assert finished.last_points == []


def test_fresh_runs_get_new_ids() -> None:
    """A crash before the startup save's rename makes the restart begin a run with a new ID (section 4)."""
    done = replay("idempotency-keys", TRIAGE, "keyed", (1,))
    assert done is not None
    assert done.world.checkpoint is not None
    assert done.world.checkpoint.run == "run-2"
    assert {run for _, run, _ in done.world.records} == {"run-2"}


def test_error_to_model_duplicates_without_a_crash() -> None:
    """SITUATIONS.md sections 4 and 5: the model's retry carries a new key, so create_a is applied twice."""
    job = load_job(EXAMPLES / "triage-fails.toml")
    done = replay("error-to-model", job, "keyed", ())
    assert done is not None
    assert [call for call, _, _ in done.world.records].count("create_a") == 2
    assert done.world.model_calls == 4
    assert "retry reply arrived create_a" in done.last_points


def test_a_failed_marked_write_is_settled_on_the_ladder_in_the_same_process() -> None:
    """agent-loop, keyed: the failure is settled by rung 1, and the repeat returns the first answer."""
    job = load_job(EXAMPLES / "triage-fails.toml")
    done = replay("agent-loop", job, "keyed", ())
    assert done is not None
    assert (done.world.reruns, dups(done.world, job)) == (1, 0)
    failed = done.last_points.index("tool failed create_a")
    assert done.last_points[failed + 1 : failed + 3] == ["tracker accepted create_a", "tool returned create_a"]


def test_the_approval_gate_points() -> None:
    """SITUATIONS.md section 3: requested, approved, then Save(approval), before the marker."""
    job = load_job(EXAMPLES / "triage-approval.toml")
    done = replay("agent-loop", job, "keyed", ())
    assert done is not None
    start = done.last_points.index("approval requested comment_a")
    assert done.last_points[start : start + 5] == [
        "approval requested comment_a",
        "approved comment_a",
        *_save("approval comment_a"),
        "marker comment_a: tmp written",
    ]
    assert done.world.approvals == 1


def test_result_saves_none_leaves_the_turn_to_the_next_save() -> None:
    """POLICIES.md 1.1: no result and no turn saves; 18 - 4 (two turn saves) = 14 points on triage."""
    policy = replace(DESIGNS["save-once-per-turn"], result_saves="none")
    points = sweep(policy, TRIAGE, "keyed", 1).point_names
    assert points == [name for name in SAVE_ONCE_PER_TURN_POINTS if not name.startswith("turn ")]


def test_as_is_and_repair_on_triage_by_hand() -> None:
    """CONVERSATIONS.md 1, the oracle alone (derivations: tests/variants/test_conversations.py).

    save-after-reply at depth 1: 17 of the 34 crashes leave an orphaned call on disk; as-is
    ends each stuck (21 writes missing), repair finishes each and loses 12.
    """
    base = policy_of("save-after-reply")
    stuck = sweep(replace(base, transcript_on_restart="as-is"), TRIAGE, "keyed", 1)
    assert (stuck.by_crashes[1].scenarios, stuck.by_crashes[1].never_finish, stuck.by_crashes[1].missing) == (
        34,
        17,
        21,
    )
    assert stuck.verdicts() == {"well-formed-transcript": False, "approved-exactly": True, "can-finish": False}
    repaired = sweep(replace(base, transcript_on_restart="repair"), TRIAGE, "keyed", 1)
    assert (repaired.by_crashes[1].never_finish, repaired.by_crashes[1].missing) == (0, 12)


APPROVAL = load_job(EXAMPLES / "triage-approval.toml")
PARALLEL = load_job(EXAMPLES / "parallel-batch.toml")
ALL_ONE_PROCESS = ("lost-reply", "key-expiry", "wrong-answer", "power-loss", "changed-args", "trim-context")
REUSE_CASES = [
    ("save-after-reply", {}, TRIAGE, "keyed", Environment()),
    ("agent-loop", {}, APPROVAL, "keyless-lookup", Environment(("lost-reply", "key-expiry", "wrong-answer"))),
    ("keys-and-markers", {"fsync": "full"}, PARALLEL, "keyless", Environment(("power-loss",))),
    ("save-once-per-turn", {"unreadable": "fresh-run"}, TRIAGE, "keyed",
     Environment(("power-loss", "lost-reply"))),
    ("attempt-markers", {"approval_storage": "memory", "persist_granularity": "per-batch"}, APPROVAL,
     "keyless-lookup", Environment(("changed-args", "trim-context"), fresh_ids=True)),
    ("save-after-reply", {"transcript_on_restart": "as-is", "approval_consume": "before-resume"}, APPROVAL, "keyed",
     Environment(("trim-context", "changed-args"))),
    ("idempotency-keys", {"transcript_repair": "both-directions", "resume_granularity": "node"}, PARALLEL,
     "keyless-lookup", Environment(ALL_ONE_PROCESS, fresh_ids=True)),
    ("error-to-model", {"approval_storage": "service", "approval_binding": "call"}, APPROVAL, "keyed",
     Environment(("lost-reply", "changed-args"))),
]  # fmt: skip


@pytest.mark.parametrize(("design", "changes", "job", "tracker", "env"), REUSE_CASES)
def test_a_sweep_from_cuts_and_forks_gives_the_figures_of_replays_from_scratch(
    design: str, changes: dict[str, Any], job: Job, tracker: str, env: Environment
) -> None:
    """Every figure of a depth-2 sweep is the same whether each scenario is replayed from scratch or resumed.

    `reuse` replays an extension from its scenario's fork (a crash) or latest process start (any
    other move), `reuse=False` from an empty world: the tallies (every field, move kinds
    included), the point names, the summed steps and the verdicts must all agree.
    """
    policy = replace(policy_of(design), **changes)
    resumed = sweep(policy, job, tracker, 2, env)
    scratch = sweep(policy, job, tracker, 2, env, reuse=False)
    assert resumed.by_crashes[2].scenarios > 0
    assert resumed == scratch
    assert resumed.verdicts() == scratch.verdicts()


def test_each_scenario_resumed_from_a_fork_or_a_cut_is_its_replay_from_scratch() -> None:
    """Scenario by scenario, not only summed: the resumed replay's world, points, steps and later chances."""
    env = Environment(("lost-reply", "wrong-answer", "power-loss"))
    resumed = list(scenarios("keys-and-markers", APPROVAL, "keyless", 2, env))
    scratch = list(scenarios("keys-and-markers", APPROVAL, "keyless", 2, env, reuse=False))
    assert [scenario for _, scenario, _ in resumed] == [scenario for _, scenario, _ in scratch]
    for (_, _, a), (_, _, b) in zip(resumed, scratch, strict=True):
        assert (a.world, a.last_points, a.steps, a.later) == (b.world, b.last_points, b.steps, b.later)
    assert {kind for _, scenario, _ in resumed for _, kind in scenario} == {"crash", *env.faults}


def _mutable(value: object, found: dict[int, object]) -> None:
    """Every mutable object reachable from `value` (lists, dicts, sets, dataclass instances), by id."""
    if isinstance(value, (list, set, dict)) or (is_dataclass(value) and not isinstance(value, type)):
        found[id(value)] = value
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    elif is_dataclass(value) and not isinstance(value, type):
        value = list(vars(value).values())
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _mutable(item, found)


def shares_nothing_mutable(world: object, twin: object) -> bool:
    """Whether `twin` equals `world`, of its class, and no mutable part of either is reachable from the other."""
    ours: dict[int, object] = {}
    theirs: dict[int, object] = {}
    _mutable(world, ours)
    _mutable(twin, theirs)
    return twin == world and type(twin) is type(world) and not ours.keys() & theirs.keys()


def test_a_world_copy_shares_nothing_mutable() -> None:
    """World.copy, on the final world of every one-move scenario with every one-process fault: equal, nothing shared.

    A field a copy forgets would be shared (an empty list is an object too), so a new mutable field
    of World fails here until World.copy copies it.
    """
    env = Environment(ALL_ONE_PROCESS, fresh_ids=True)
    policy = replace(policy_of("agent-loop"), approval_storage="memory", fsync="full")
    worlds = [done.world for _, _, done in scenarios(policy, APPROVAL, "keyless-lookup", 1, env)]
    assert len(worlds) > 50
    assert all(shares_nothing_mutable(world, world.copy()) for world in worlds)
    assert any(world.consumed or world.given for world in worlds)
