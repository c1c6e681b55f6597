"""Rules the spec once left open or stated twice, each pinned by the figure that tells the readings apart.

Each test takes its expected figure from a source independent of the model's step functions:
a hand count on a small case (explained in the test's docstring) or the replay oracles
(tests/replay_oracle.py, tests/pause_oracle.py), written from the rules alone; and checks that
the explorer gives the same figure. The rules are in spec/FAULTS.md (sections 5, 6.2 rule 1,
7 rules 4 and 8-10), spec/SITUATIONS.md section 4 and spec/SEMANTICS.md section 8 (`asks`,
`calls+`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep import variants
from crashsweep.explorer import explore
from crashsweep.explorer.counting import Counts
from crashsweep.spec import invariants, metrics
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.policy import PAUSE_LOCKS, Fsync, Lock, Policy, Unreadable
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel
from tests import pause_oracle
from tests.replay_oracle import DESIGNS, Environment, replay, sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TRIAGE_FAILS = load_job(EXAMPLES / "triage-fails.toml")
ONE_WRITE = load_job(EXAMPLES / "one-write.toml")
NO_TURN = Job("no-turn", ())
"""A job with no tool turn: the model gives its final answer at once (5 crash points with no lock)."""
AGENT_LOOP = DESIGNS["agent-loop"]
POWER = Environment(("power-loss",))
PAUSE = Environment(("pause",))


def _counts(design: str | Policy, job: Job, env: Environment, depth: int) -> Counts:
    """The explorer's counts for a built-in design (by name) or a policy, tracker keyed."""
    chosen = variants.design(design) if isinstance(design, str) else compose("p", "", design)
    return explore(LoopModel(chosen, Env(job, TRACKERS["keyed"], env.faults, env.fresh_ids)), depth).counts


# (a) The model's retry after a tool error: FAULTS.md section 5, SITUATIONS.md section 4.


def test_a_second_retry_of_a_call_reuses_the_first_retrys_key() -> None:
    """error-to-model on triage-fails, fresh IDs: the retry's reply is lost too (hand count).

    Chances of the run: start (2), reply 1 arrived, reply 1 (2), create_a's failing request
    (`tracker accepted`, 6, a crash only: the job's fault is no lost reply), `tool failed` (7),
    `retry reply arrived` (8), the retry's `tracker accepted` (9). A lost reply there: the
    tracker holds create_a #1 and the retry's #2; the model is asked again (+1) and retries
    under the same ID, `create_a.retry` with reply 1's suffix, so the keyed tracker answers
    #2: two records, 3 + 2 model calls. A new ID per retry would make a third record.
    """
    env = Environment(("lost-reply",), fresh_ids=True)
    done = replay("error-to-model", TRIAGE_FAILS, "keyed", ((9, "lost-reply"),), env)
    assert done is not None
    assert [call for call, _, _ in done.world.records].count("create_a") == 2
    assert done.world.model_calls == 5
    assert done.last_points.count("retry reply arrived create_a") == 2


@pytest.mark.parametrize("fresh", [False, True])
def test_retries_keep_their_key_under_either_call_ids(fresh: bool) -> None:
    """Depth 1 with lost replies: 40 scenarios, 39 duplicates under stable and fresh IDs (oracle and explorer).

    A new ID per retry would add the one duplicate of the test above under fresh IDs (40).
    """
    env = Environment(("lost-reply",), fresh_ids=fresh)
    tally = sweep("error-to-model", TRIAGE_FAILS, "keyed", 1, env).by_crashes[1]
    assert (tally.scenarios, tally.dups) == (40, 39)
    counts = _counts("error-to-model", TRIAGE_FAILS, env, 1)
    assert (counts.scenarios[1], counts.measures[1]["dups"]) == (40, 39)


# (b) FAULTS.md 6.2 rule 1: the lock file's saves make nothing of the checkpoint durable.


def test_a_restart_s_lock_points_are_at_risk_after_a_crash() -> None:
    """agent-loop on triage under power-loss: a cut is offered at both lock points of 35 restarts (oracle).

    Hand count: of the 38 crash points, the two of the first lock leave nothing at risk and
    `final: renamed` leaves a done run (its restart exits); the other 35 leave an unsynced
    rename (25) or temp file (10) that the restart's lock save does not make durable. A cut at
    a lock point after one of the 25 leaves the checkpoint unreadable (one question).
    """
    offered, unreadable = 0, 0
    for index in range(1, 39):
        crashed = replay(AGENT_LOOP, TRIAGE, "keyed", ((index, "crash"),), POWER)
        assert crashed is not None
        at_lock = [kinds for _, kinds in crashed.later[:2]]
        if len(at_lock) == 2 and all("power-loss" in kinds for kinds in at_lock):
            offered += 1
            cut = replay(AGENT_LOOP, TRIAGE, "keyed", ((index, "crash"), (1, "power-loss")), POWER)
            assert cut is not None
            unreadable += cut.world.asks
        else:
            assert not any("power-loss" in kinds for kinds in at_lock)
    assert (offered, unreadable) == (35, 25)


def test_agent_loop_two_moves_under_power_loss() -> None:
    """2,190 two-move scenarios (oracle and explorer); the lock save as a save would give 2,190 - 50 = 2,140."""
    oracle = sweep(AGENT_LOOP, TRIAGE, "keyed", 2, POWER)
    counts = _counts("agent-loop", TRIAGE, POWER, 2)
    assert oracle.by_crashes[2].scenarios == counts.scenarios[2] == 2190
    assert oracle.by_crashes[2].moves["power-loss"] == counts.counters[2][fault_counter("power-loss")] == 1533


# (c) FAULTS.md 7 rule 4: a held process goes on from just after its crash point.


def test_a_held_process_is_not_offered_its_point_again() -> None:
    """No-turn job, lock none: process 1 paused at `start: renamed`, woken at the restart's (hand count).

    The restart passes `start: tmp written` and `start: renamed` (chances 1, 2) and is held;
    process 1 passes `final reply arrived`, `final: tmp written`, `final: renamed` and exits;
    the held restart goes on with the same three points: 8 chances after the pause. Offering
    the held point again would make 9.
    """
    policy = replace(AGENT_LOOP, lock="none")
    done = pause_oracle.replay(policy, NO_TURN, "keyed", ((2, "pause"),), (2,), PAUSE)
    assert done is not None
    assert len(done.later) == 8


def test_no_turn_job_two_moves_under_pause() -> None:
    """No-turn job, lock none, depth 2: 285 two-move scenarios (oracle and explorer).

    Offering the held point again adds, per one-pause scenario with a held restart, a crash
    there (then one restart to the end) and a pause there (then a restart with n points and
    n + 1 wake-ups): 2 + n. Points: s1, s2 (start), f0 (final reply), f1, f2 (final). By hand,
    per point p where process 1 pauses and point w of the restart where it wakes:
    p = s1: w = s1 (process 1 renames the restart's temp file, finishes; n = 0), s2, f0
    (n = 5 each), f1, f2 (n = 0): 2 + 7 + 7 + 2 + 2 = 20; p = s2 and p = f0: process 1
    finishes the run before the restart goes on, n = 0: 5 x 2 = 10 each; p = f1: w = s1,
    s2, f0 (process 1's rename runs the restart's unfinished state or fails: n = 5), f1, f2
    (n = 0): 7 + 7 + 7 + 2 + 2 = 25; p = f2: the restart exits at once, no hold. 65 in all:
    the other reading gives 350.
    """
    policy = replace(AGENT_LOOP, lock="none")
    oracle = pause_oracle.sweep(policy, NO_TURN, "keyed", 2, PAUSE)
    counts = _counts(policy, NO_TURN, PAUSE, 2)
    assert (oracle.by_crashes[1].scenarios, oracle.by_crashes[2].scenarios) == (30, 285)
    assert (counts.scenarios[1], counts.scenarios[2]) == (30, 285)


def test_one_write_two_moves_under_pause() -> None:
    """examples/one-write.toml, agent-loop, depth 2: 16,421 two-move scenarios (oracle and explorer).

    Offering the held point again would give 17,447.
    """
    oracle = pause_oracle.sweep(AGENT_LOOP, ONE_WRITE, "keyed", 2, PAUSE)
    counts = _counts("agent-loop", ONE_WRITE, PAUSE, 2)
    assert oracle.by_crashes[2].scenarios == counts.scenarios[2] == 16421


# (d) FAULTS.md 7 rules 8-10: a power cut, an unreadable checkpoint and key expiry beside a pause.


def _pause_figures(counts: Counts, k: int) -> tuple[int, ...]:
    c, m = counts.counters.get(k, {}), counts.measures.get(k, {})
    kinds = ("pause", "power-loss", "key-expiry")
    return (
        counts.scenarios.get(k, 0),
        m.get("dups", 0),
        m.get("missing", 0),
        c.get(metrics.ASKS, 0),
        c.get(metrics.MODEL_CALLS, 0),
        *(c.get(fault_counter(kind), 0) for kind in kinds),
    )


def _oracle_pause_figures(policy: Policy, job: Job, env: Environment, depth: int) -> dict[int, tuple[int, ...]]:
    result = pause_oracle.sweep(policy, job, "keyed", depth, env)
    kinds = ("pause", "power-loss", "key-expiry")
    return {
        k: (t.scenarios, t.dups, t.missing, t.asks, t.model_calls, *(t.moves[kind] for kind in kinds))
        for k, t in result.by_crashes.items()
    }


def _agree(policy: Policy, job: Job, env: Environment, depth: int) -> dict[int, tuple[int, ...]]:
    expected = _oracle_pause_figures(policy, job, env, depth)
    counts = _counts(policy, job, env, depth)
    assert {k: _pause_figures(counts, k) for k in range(1, depth + 1)} == expected
    return expected


FSYNC_FIGURES: dict[Fsync, int] = {"no-dir-fsync": 3643, "full": 5397}
"""Two-move scenarios on the no-turn job, lock `file` (FAULTS.md 7 rule 8); the other reading: 3,637 and 5,392."""


@pytest.mark.parametrize(
    ("fsync", "unreadable"),
    [("none", "ask-person"), ("none", "fresh-run"), ("no-dir-fsync", "ask-person"), ("full", "ask-person")],
)
@pytest.mark.parametrize("lock", ["file", "none", "os-lock", "lease+fencing"])
def test_power_cuts_beside_a_pause_agree(lock: Lock, fsync: Fsync, unreadable: Unreadable) -> None:
    """No-turn job, depth 2, pause and power loss: the cut kills the running process only (rule 8).

    Under `no-dir-fsync` and `full` each fsync acts on the one disk whichever process made the
    step before it: an fsync of a temp file the other process renamed does nothing, and a
    directory's fsync leaves a temp file written since at risk (rule 8). Lock `file`: 3,643
    and 5,397 two-move scenarios (the pause oracle and the explorer).
    """
    policy = replace(AGENT_LOOP, lock=lock, fsync=fsync, unreadable=unreadable)
    figures = _agree(policy, NO_TURN, Environment(("power-loss", "pause")), 2)
    if lock == "file" and fsync in FSYNC_FIGURES:
        assert figures[2][0] == FSYNC_FIGURES[fsync]


@pytest.mark.parametrize("fsync", ["no-dir-fsync", "full"])
def test_an_fsync_of_a_temp_file_the_other_process_renamed_loses_nothing(fsync: Fsync) -> None:
    """No-turn job, lock none: a cut after such an fsync puts the synced temp file back (hand count).

    Process 1 saves at the start, gets its final reply, writes its final temp file and pauses
    there (chance 5 under `no-dir-fsync`, 6 under `full`). The restart loads the start save and
    saves the same state (`start: tmp written`, `tmp synced`, `renamed`: chances 1-3, the temp
    file over process 1's), and process 1 wakes at `start: renamed`. Its fsync finds no temp
    file: it does nothing, so its `final: tmp synced` is at risk (chance 4): a cut there undoes
    the restart's rename and puts its synced temp file back. The checkpoint is the same state,
    the held restart goes on and finishes: no question, one model call more than the run alone.
    Reading the fsync as dropping the temp file leaves nothing at risk there: no cut is offered.
    """
    pause_at = 5 if fsync == "no-dir-fsync" else 6
    policy = replace(AGENT_LOOP, lock="none", fsync=fsync)
    env = Environment(("power-loss", "pause"))
    done = pause_oracle.replay(policy, NO_TURN, "keyed", ((pause_at, "pause"), (4, "power-loss")), (3,), env)
    assert done is not None
    assert (done.world.asks, done.world.model_calls) == (0, 2)
    assert done.world.checkpoint is not None
    assert done.world.checkpoint.done


def test_a_temp_file_a_cut_puts_back_is_renamed_as_a_synced_one() -> None:
    """No-turn job, lock none, `no-dir-fsync`: pause, cut, cut; the second cut undoes a rename (hand count).

    Process 1 pauses at `start: tmp synced` (chance 2). The restart writes and fsyncs its own
    start temp file (chances 1, 2), where process 1 wakes, renames it (chance 3) and the power
    goes: the rename is undone and the synced temp file is back. The held restart goes on and
    renames it (chance 1 after the cut) and the power goes again: that rename is undone too (the
    file was synced, 6.2 rule 3), not left unreadable (rule 4). The next restart loads nothing,
    begins afresh and finishes with no question.
    """
    policy = replace(AGENT_LOOP, lock="none", fsync="no-dir-fsync")
    env = Environment(("power-loss", "pause"))
    moves = ((2, "pause"), (3, "power-loss"), (1, "power-loss"))
    done = pause_oracle.replay(policy, NO_TURN, "keyed", moves, (2,), env)
    assert done is not None
    assert done.world.asks == 0
    assert done.world.checkpoint is not None
    assert done.world.checkpoint.done


@pytest.mark.parametrize("fsync", ["no-dir-fsync", "full"])
def test_three_moves_beside_a_pause_with_fsyncs(fsync: Fsync) -> None:
    """No-turn job, lock none, depth 3, pause and power loss: the explorer's figures are the pause oracle's."""
    _agree(replace(AGENT_LOOP, lock="none", fsync=fsync), NO_TURN, Environment(("power-loss", "pause")), 3)


def test_an_unreadable_checkpoint_while_another_process_lives() -> None:
    """No-turn job, lock none: pause, cut, pause; the restart asks and stops, the paused one finishes (hand count).

    Process 1 pauses at `start: renamed` (chance 2). The restart saves (`start: tmp written`,
    `start: renamed`: chances 1, 2) and the power goes at the second: its rename was never
    synced, so the checkpoint is unreadable. Process 1 still lives: no restart; it wakes when
    the restart stops (wake-up 0) and passes `final reply arrived` (chance 1), where it
    pauses. The restart there finds the file unreadable: one question, it stops; process 1
    wakes and its final save replaces the file. The run is done, with one question.
    """
    policy = replace(AGENT_LOOP, lock="none")
    env = Environment(("power-loss", "pause"))
    moves = ((2, "pause"), (2, "power-loss"), (1, "pause"))
    done = pause_oracle.replay(policy, NO_TURN, "keyed", moves, (0, 0), env)
    assert done is not None
    assert done.world.asks == 1
    assert done.world.checkpoint is not None
    assert done.world.checkpoint.done
    assert not done.world.torn


def test_three_moves_reach_a_question_beside_a_live_process() -> None:
    """No-turn job, lock none, depth 3: the explorer's figures are the pause oracle's (645 questions at three moves)."""
    figures = _agree(replace(AGENT_LOOP, lock="none"), NO_TURN, Environment(("power-loss", "pause")), 3)
    assert figures[3][3] == 645


def test_key_expiry_only_at_a_restart_with_no_other_process() -> None:
    """One-write job, lock none, depth 2, pause, power loss and key expiry: 80 expiries (oracle and explorer)."""
    env = Environment(("key-expiry", "power-loss", "pause"))
    figures = _agree(replace(AGENT_LOOP, lock="none"), ONE_WRITE, env, 2)
    assert figures[2][-1] == 80


# (e) and (f): `asks` counts the unreadable checkpoint's question; `calls+` is net.


def test_asks_and_calls_plus_under_power_loss() -> None:
    """save-after-reply (no ladder) on triage, power loss, depth 1: 24 questions and calls+ = -26 (hand count).

    34 crash points, each also a cut (68 scenarios). Crashes repeat 6 model calls (at `reply
    1 arrived`, `reply 1: tmp written`, the same two of reply 2, `final reply arrived`, `final:
    tmp written`); the 10 cuts at a `tmp written` act as crashes: +3. The other 24 cuts follow
    an unsynced rename: the restart asks (24 questions, no ladder rung) and stops, having made
    0 calls (`start: renamed`: -3), 1 (the 11 points to `turn 1: renamed`: -22), 2 (the 10 to
    `turn 2: renamed`: -10) or 3 (`final reply arrived`, `final: renamed`: 0): -35.
    6 + 3 - 35 = -26.
    """
    tally = sweep("save-after-reply", TRIAGE, "keyed", 1, POWER).by_crashes[1]
    counts = _counts("save-after-reply", TRIAGE, POWER, 1)
    assert (tally.scenarios, tally.asks, tally.calls_plus) == (68, 24, -26)
    baseline_calls = 3
    explorer_calls_plus = counts.counters[1][metrics.MODEL_CALLS] - baseline_calls * counts.scenarios[1]
    assert (counts.scenarios[1], counts.counters[1][metrics.ASKS], explorer_calls_plus) == (68, 24, -26)


AS_IS = replace(DESIGNS["save-after-reply"], transcript_on_restart="as-is")


def _walk_to(model: LoopModel, world: World, point: str) -> World:
    """Take the run's own next step until the running process is at `point`."""
    while model.crash_point(world) != point:
        world, _ = model.step(world, model.actions(world)[0])
    return world


def test_a_stuck_restart_beside_a_paused_process_gives_up_and_the_paused_one_finishes() -> None:
    """FAULTS.md 7 rule 11, by hand on triage (save-after-reply, `as-is`, a pause).

    Process 1 is paused at `tracker accepted create_a`: create_a is filed, its result not saved.
    The restart loads reply 1's save (turn 1, no result), saves it again (its startup save, temp
    file and rename) and sends that conversation as it is: refused for good (CONVERSATIONS.md
    1), stuck. Beside the paused process it gives up: its one action is the paused process's
    wake-up (a stuck process that stayed in place offered a step back to itself: the cycle the
    explorer refused). Process 1 goes on with its memory: it stores create_a's answer, writes
    its own temp file and renames it, files create_b and comment_a, and exits; no other process
    lives, so the run is finished, each write filed once.
    """
    model = LoopModel(compose("p", "", AS_IS), Env(TRIAGE, TRACKERS["keyed"], ("pause",)))
    world = _walk_to(model, model.initial(), "tracker accepted create_a")
    (pause,) = [a for a in model.actions(world) if a.label == "pause"]
    world, _ = model.step(world, pause)
    while not (world.process is not None and invariants.stuck(world)):
        world, _ = model.step(world, model.actions(world)[0])  # the restart's own steps, no wake-up yet
    assert [a.label for a in model.actions(world)] == ["wake"]
    while not model.is_finished(world):
        world, _ = model.step(world, model.actions(world)[0])
    assert world.second.other is None
    assert [world.tracker.count(call) for call in ("create_a", "create_b", "comment_a")] == [1, 1, 1]


@pytest.mark.parametrize("lock", PAUSE_LOCKS)
@pytest.mark.parametrize(
    ("job", "depth"), [(TRIAGE, 1), (ONE_WRITE, 1), (ONE_WRITE, 2)], ids=["triage-1", "one-1", "one-2"]
)
def test_as_is_beside_a_second_live_process_agrees_with_the_pause_oracle(lock: Lock, job: Job, depth: int) -> None:
    """save-after-reply with `as-is`, each lock, a pause: no cycle, and the pause oracle's figures (rule 11).

    The explorer used to stop here with "the state graph has a cycle": a stuck process's step
    left the world as it was.
    """
    _agree(replace(AS_IS, lock=lock), job, PAUSE, depth)
