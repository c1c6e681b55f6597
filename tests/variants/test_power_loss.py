"""Power loss on the triage job: figures derived by hand, and the oracle's agreement per fsync policy.

Conventions (spec/FAULTS.md section 6). save-after-reply makes 10 saves on the triage run
(start; reply 1; result create_a, create_b; turn 1; reply 2; result search, comment_a; turn 2;
final), so its crash points are 34 under fsync "none" (SEMANTICS.md 7), 44 under
"no-dir-fsync" (+1 `tmp synced` per save) and 54 under "full" (+1 `dir synced` per save). A
power cut is offered at a crash point where it would leave another disk than a crash does.
Under crashes alone, the 9 points of SEMANTICS.md 8 duplicate one write each; "tmp synced"
of the three writes' result saves is a tenth to twelfth (the result is still only in the
temp file).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep import variants
from crashsweep.explorer import Exploration, explore, shortest_path
from crashsweep.reports.counterexample import shortest
from crashsweep.reports.summary import summarize
from crashsweep.reports.trace import text
from crashsweep.spec import invariants, metrics
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.policy import Fsync, Unreadable
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.loop_model import LoopModel
from tests.paths import ROOT
from tests.replay_oracle import Environment, policy_of
from tests.variants.test_fault_agreement import ENVIRONMENTS, explorer_figures, oracle_figures

POWER = ("power-loss",)
OWN_DURABILITY: tuple[Fsync, Unreadable] = ("none", "ask-person")
"""Every built-in design's own fsync policy and unreadable rule: the registry's agreement under power loss
(tests/variants/test_fault_agreement.py, its "power-loss" environment) checks the designs as they are."""
DURABILITY: list[tuple[Fsync, Unreadable]] = [
    ("none", "fresh-run"),
    ("no-dir-fsync", "ask-person"),
    ("full", "ask-person"),
]
"""The other policies the oracle's agreement is checked under here."""


def _explore(
    design: str, fsync: str, unreadable: str = "ask-person", faults: tuple[str, ...] = POWER
) -> Exploration[World]:
    chosen = replace(variants.design(design), fsync=fsync, unreadable=unreadable)
    return explore(LoopModel(chosen, Env(TRIAGE, TRACKERS["keyed"], faults)), 1)


def _figures(ex: Exploration[World]) -> tuple[int, int, int, int, int, int]:
    """Depth-1 scenarios, with_dups, dups, missing, questions, power cuts."""
    m, c = ex.counts.measures[1], ex.counts.counters[1]
    return (
        ex.counts.scenarios[1],
        m["with_dups"],
        m["dups"],
        m["missing"],
        c.get(metrics.ASKS, 0),
        c.get(fault_counter("power-loss"), 0),
    )


def test_power_loss_off_keeps_the_seed_figures_under_fsync_none() -> None:
    """fsync "none" is the seed's save: 34 scenarios, 9 with a duplicate (SEMANTICS.md 8)."""
    assert _figures(_explore("save-after-reply", "none", faults=())) == (34, 9, 9, 0, 0, 0)


def test_fsyncs_add_crash_points_and_nothing_else_without_power_loss() -> None:
    """full without power loss: 54 points; the 9 duplicating points and the 3 writes' `tmp synced`."""
    assert _figures(_explore("save-after-reply", "full", faults=())) == (54, 12, 12, 0, 0, 0)


def test_fsync_none_with_ask_person_loses() -> None:
    """none, unreadable = ask-person: a power cut loses writes (the loop refuses to start).

    Every one of the 34 points is at risk: a `tmp written` point loses the unsynced temp file
    (10 points, the disk then as after a crash: 3 re-send a write, +3 duplicates), and every
    other point follows a rename whose file was never synced, so the cut leaves it unreadable
    (24 points, 24 questions). The loop stops there, and the writes not yet applied are missing:
    3 each at `start: renamed`, `reply 1 arrived`, `reply 1: renamed` (9); 2 each from
    `tracker accepted create_a` to `result saved create_a` but its `tmp written` (4 points, 8);
    1 each from `tracker accepted create_b` to `result saved search` but the 4 `tmp written`
    (10 points, 10): 27 missing. Duplicates: the 9 of crashes and those 3: 12 in 12.
    """
    ex = _explore("save-after-reply", "none")
    assert _figures(ex) == (68, 12, 12, 27, 24, 34)
    loss = ex.verdicts[invariants.NO_LOSS].node
    assert loss is not None
    assert not ex.verdicts[invariants.NO_LOSS].holds
    path = shortest_path(ex, loss)
    kinds = [step.action.kind for step in path.steps if step.action is not None]
    assert kinds.count("fault") == 1
    assert "crash" not in kinds


def test_fsync_none_with_fresh_run_duplicates() -> None:
    """none, unreadable = fresh-run: a power cut after a write duplicates it (a new run sends it again).

    The 24 unreadable points start a new run, which applies every write again: 0 duplicates at
    the 3 points before create_a; 1 at the 4 from `tracker accepted create_a` on; 2 at the 10
    from `tracker accepted create_b` on; 3 at the 7 from `tracker accepted comment_a` on (45
    in 21 scenarios). With the 3 of the `tmp written` points and the 9 of crashes: 57 in 33.
    """
    ex = _explore("save-after-reply", "none", "fresh-run")
    assert _figures(ex) == (68, 33, 57, 0, 0, 34)


def test_fsync_no_dir_fsync_undoes_the_last_rename() -> None:
    """no-dir-fsync: a cut undoes the last rename, so the result saved last is forgotten.

    44 crash points (12 duplicating); the cut has a chance at the 34 points but the 10 `tmp
    synced`. At `tmp written` it is a crash (3 duplicates). After a rename it reverts to the
    checkpoint before it: at `tracker accepted`/`tool returned create_b` the last save was
    create_a's result, so the restart sends both again (2 + 2); the other points of the three
    writes from their request to `result saved` re-send one write (create_a 4, create_b 2,
    comment_a 4): 14 in 12 scenarios. Total 12 + 3 + 12 = 27 with duplicates, 12 + 3 + 14 = 29.
    """
    assert _figures(_explore("save-after-reply", "no-dir-fsync")) == (78, 27, 29, 0, 0, 34)


def test_fsync_full_keeps_the_crash_only_verdicts() -> None:
    """full: a cut has a chance only at `tmp written` and `renamed` (20), and is then a crash.

    At `tmp written` the temp file is lost (3 duplicates, as a crash there); at `renamed` the
    rename is undone and the restart finds the checkpoint before it (the 3 writes' result
    saves: 3 more). Duplicates, nothing missing: the verdicts of crashes alone.
    """
    ex = _explore("save-after-reply", "full")
    assert _figures(ex) == (74, 18, 18, 0, 0, 20)
    assert ex.verdicts[invariants.NO_LOSS].holds
    crash_only = _explore("save-after-reply", "full", faults=())
    assert {n: v.holds for n, v in ex.verdicts.items()} == {n: v.holds for n, v in crash_only.verdicts.items()}


def test_markers_need_the_directory_fsync() -> None:
    """attempt-markers, no-dir-fsync: a cut undoes the marker's rename after the write went out.

    43 crash points + 13 `tmp synced` = 56 crash scenarios, none with a duplicate (markers). The
    cut has a chance at the 43 others. It duplicates at `tracker accepted X` and `tool returned
    X` of each write (the marker save's rename is undone, the restart sees no marker and sends
    X again): 6 scenarios, 6 duplicates. Questions: a crash from `marker X: renamed` to `result
    X: tmp synced` leaves a marker without a result (6 points x 3 writes = 18); a cut at `result
    X: tmp written` is such a crash (3), and one at `result X: renamed` or `result saved X`
    reverts to the marker save (6): 27.
    """
    assert _figures(_explore("attempt-markers", "no-dir-fsync")) == (99, 6, 6, 0, 27, 43)
    assert _explore("attempt-markers", "full").holds


@pytest.mark.parametrize("design", ["idempotency-keys", "keys-and-markers", "agent-loop"])
def test_keyed_designs_survive_a_cut_under_full_and_no_dir_fsync(design: str) -> None:
    """A reverted checkpoint keeps the run ID, so a write sent again carries its key: no duplicate."""
    for fsync in ("full", "no-dir-fsync"):
        assert _explore(design, fsync).holds


def test_fresh_run_defeats_keys() -> None:
    """idempotency-keys, none, fresh-run: a new run ID makes new keys; the 45 of save-after-reply's cuts.

    Its crashes and its `tmp written` cuts re-send with the run's key (no duplicate); the 24
    unreadable points duplicate exactly as for save-after-reply (45 in 21).
    """
    assert _figures(_explore("idempotency-keys", "none", "fresh-run")) == (68, 21, 45, 0, 0, 34)


def test_the_shortest_loss_is_one_power_cut_and_its_trace_says_so() -> None:
    """none, ask-person: the shortest loss is a cut at `start: renamed` (4 steps, no crash).

    start (1), `start: renamed` (2), the cut (3): the start save's file never reached the disk,
    so the restart (4) finds it unreadable, asks a person and stops: all 3 writes missing.
    """
    ex = _explore("save-after-reply", "none")
    cx = next(c for c in shortest(ex, variant="save-after-reply", job=TRIAGE.name, job_file=None, tracker="keyed")
              if c.invariant == invariants.NO_LOSS)  # fmt: skip
    assert [step.kind for step in cx.steps] == ["step", "step", "fault", "restart"]
    out = text(cx)
    assert "FAULT power-loss at start: renamed" in out
    assert "CRASH" not in out
    assert "POWER CUT: what was not fsynced is lost" in out
    assert "checkpoint unreadable: the loop refuses to start" in out


def test_a_power_cut_after_a_write_duplicates_it_under_fresh_run() -> None:
    """none, fresh-run: a cut at `tracker accepted create_a` leaves reply 1's save unreadable.

    The restart begins run-2, asks the model again and sends create_a (+ the rest): create_a
    has two records, the others one. The shortest duplicate is a crash (SEMANTICS.md 8); this
    one is the shortest with a power cut and no crash.
    """
    model = LoopModel(
        replace(variants.design("save-after-reply"), unreadable="fresh-run"), Env(TRIAGE, TRACKERS["keyed"], POWER)
    )
    world = model.initial()
    while model.crash_point(world) != "tracker accepted create_a":
        world, _ = model.step(world, model.actions(world)[0])
    (cut,) = [action for action in model.actions(world) if action.kind == "fault"]
    world, counters = model.step(world, cut)
    assert world.checkpoint.torn
    assert world.process is None
    assert counters == {fault_counter("power-loss"): 1}
    while not model.is_finished(world):
        world, _ = model.step(world, model.actions(world)[0])
    assert [world.tracker.count(call) for call in ("create_a", "create_b", "comment_a")] == [2, 1, 1]


def test_the_designs_own_durability_is_the_registrys_agreement_under_power_loss() -> None:
    """Each built-in design as it is (OWN_DURABILITY) under power loss: test_fault_agreement's case, not run here.

    test_registry_agrees_on_triage runs every design of the registry on triage under the
    "power-loss" environment, on every tracker, at depths 1 and 2: the same explorer and oracle
    figures test_oracle_agrees_under_each_fsync_policy would give for OWN_DURABILITY, keyed.
    """
    assert ENVIRONMENTS["power-loss"] == Environment(POWER)
    for design in variants.DESIGNS:
        chosen = variants.design(design)
        assert (chosen.fsync, chosen.unreadable) == OWN_DURABILITY
        assert (policy_of(design).fsync, policy_of(design).unreadable) == OWN_DURABILITY


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(("fsync", "unreadable"), DURABILITY)
@pytest.mark.parametrize("design", list(variants.DESIGNS))
def test_oracle_agrees_under_each_fsync_policy(design: str, fsync: Fsync, unreadable: Unreadable, depth: int) -> None:
    """Every built-in design, each fsync policy but its own (OWN_DURABILITY): the oracle's file journal agrees.

    Its own is test_the_designs_own_durability_is_the_registrys_agreement_under_power_loss's.
    """
    env = Environment(POWER)
    chosen = replace(variants.design(design), fsync=fsync, unreadable=unreadable)
    got = explorer_figures(chosen, TRIAGE, "keyed", env, depth)
    assert got == oracle_figures(
        replace(policy_of(design), fsync=fsync, unreadable=unreadable), TRIAGE, "keyed", env, depth
    )


APPROVAL_JOB = """
name = "one-gated-write"
turns = [["create_a"]]

[calls]
create_a = { tool = "create_issue", writes = true, approval = true }
"""


def test_the_approval_save_takes_the_fsync_policy_s_points(tmp_path: Path) -> None:
    """save-after-reply on one gated write: every checkpoint save, the approval's too, gains the policy's fsyncs.

    The run saves start, reply 1, approval create_a, result create_a, turn 1 and final: six
    saves (spec/SITUATIONS.md 3, SEMANTICS.md 3 and 4). Under `none` each save passes 2 points,
    under `no-dir-fsync` 3 and under `full` 4 (FAULTS.md 6.1); the other points are the same.
    So the run passes 6 more points under `no-dir-fsync` than under `none`, and 12 more under
    `full`; the approval save kept at two points whatever the policy would give 5 and 10.
    """
    path = tmp_path / "one-gated-write.toml"
    path.write_text(APPROVAL_JOB, encoding="utf-8")
    job = load_job(path)
    points = {}
    for fsync in ("none", "no-dir-fsync", "full"):
        chosen = replace(variants.design("save-after-reply"), fsync=fsync)
        points[fsync] = summarize(
            explore(LoopModel(chosen, Env(job, TRACKERS["keyed"])), 1), variant="s", job="j", tracker="keyed"
        ).crash_points
    assert points["no-dir-fsync"] - points["none"] == 6
    assert points["full"] - points["none"] == 12


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("fsync", ["no-dir-fsync", "full"])
@pytest.mark.parametrize("design", list(variants.DESIGNS))
def test_oracle_agrees_on_a_gated_write_under_each_fsync_policy(design: str, fsync: Fsync, depth: int) -> None:
    """Every built-in design with durable approvals on triage-approval under power loss: the oracle agrees.

    The oracle's approval save is its one save function (tests/replay_oracle.py), fsyncs and all.
    """
    env = Environment(POWER)
    job = load_job(ROOT / "examples" / "triage-approval.toml")
    chosen = replace(variants.design(design), fsync=fsync, approval_storage="durable")
    got = explorer_figures(chosen, job, "keyed", env, depth)
    assert got == oracle_figures(
        replace(policy_of(design), fsync=fsync, approval_storage="durable"), job, "keyed", env, depth
    )
