"""Faults on the triage job: the figures spec/FAULTS.md leads to, each derived by hand below.

Conventions of the derivations: the crash points of the uninterrupted triage run are those of
SEMANTICS.md sections 7 and 9 (18, 34, 43, 38). A fault adds scenarios of its own: one per
chance on the paths it can be reached by, and the figures follow from what the rules say the
loop does after it.
"""

from __future__ import annotations

import pytest

from crashsweep import variants
from crashsweep.explorer import Exploration, explore, shortest_path
from crashsweep.spec import invariants
from crashsweep.spec.design import Env
from crashsweep.spec.faults import fault_counter
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.policy import Policy
from crashsweep.spec.tracker import TRACKERS
from crashsweep.spec.world import World
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel

SEVEN = tuple(variants.DESIGNS)


def _explore(
    design: str, depth: int, faults: tuple[str, ...] = (), tracker: str = "keyed", fresh: bool = False
) -> Exploration[World]:
    return explore(LoopModel(variants.design(design), Env(TRIAGE, TRACKERS[tracker], faults, fresh)), depth)


def _figures(ex: Exploration[World], k: int) -> tuple[int, int, int, int]:
    """Scenarios with k moves, with_dups, dups, missing."""
    m = ex.counts.measures[k]
    return ex.counts.scenarios[k], m["with_dups"], m["dups"], m["missing"]


def test_lost_reply_duplicates_save_after_reply_with_no_crash() -> None:
    """lost-reply, depth 1: save-after-reply duplicates with no crash.

    Depth 1: the 34 one-crash scenarios (9 with a duplicate, SEMANTICS.md section 8) plus one
    lost reply per write request of the uninterrupted run (create_a, create_b, comment_a: 3).
    Without a marker the loop sends the failed call again at once: a second record each time,
    so 37 scenarios, 9 + 3 = 12 with a duplicate, 12 duplicates, and a shortest counterexample
    with one move that is no crash.
    """
    ex = _explore("save-after-reply", 1, ("lost-reply",))
    assert _figures(ex, 1) == (37, 12, 12, 0)
    assert ex.counts.counters[1][fault_counter("lost-reply")] == 3
    violation = ex.verdicts[invariants.NO_DUPLICATE].node
    assert violation is not None
    kinds = [step.action.kind for step in shortest_path(ex, violation).steps if step.action is not None]
    assert kinds.count("fault") == 1
    assert "crash" not in kinds


@pytest.mark.parametrize(("design", "points"), [("idempotency-keys", 34), ("keys-and-markers", 43), ("agent-loop", 38)])
def test_lost_reply_leaves_keyed_designs_clean(design: str, points: int) -> None:
    """lost-reply, depth 1: the keyed designs stay clean.

    Depth 1, keyed tracker: the crash points plus 3 lost replies. The repeat (a plain retry, or
    rung 1 after the marker) carries the same key, which the tracker remembers: no duplicate.
    """
    ex = _explore(design, 1, ("lost-reply",))
    assert _figures(ex, 1) == (points + 3, 0, 0, 0)
    assert ex.holds


@pytest.mark.parametrize(
    ("design", "points", "before_first_write"), [("keys-and-markers", 43, 8), ("agent-loop", 38, 8)]
)
def test_key_expiry_after_one_crash_duplicates_keyed_designs(design: str, points: int, before_first_write: int) -> None:
    """key-expiry, depth 2: keys-and-markers and agent-loop (keyed) duplicate.

    Depth 2 (a crash, then the keys expire at the restart). Expiry has a chance only at a
    restart whose tracker holds a key: after a crash at any point from `tracker accepted
    create_a` on, i.e. all points but the 8 before it (keys-and-markers: start 2, reply 1, reply
    save 2, marker create_a 3; agent-loop: lock 2, start 2, reply 1, marker create_a 3). A
    duplicate follows when rung 1 re-sends a marked write the tracker applied, under a key it
    forgot: a crash at `tracker accepted`, `tool returned` or `result: tmp written` of each of
    the 3 writes, 9 scenarios with one duplicate each. Depth 1 is unchanged (expiry needs a
    restart, a restart needs a crash).
    """
    ex = _explore(design, 2, ("key-expiry",))
    plain = _explore(design, 2)
    expiries = points - before_first_write
    assert ex.counts.scenarios[1] == points
    assert ex.counts.scenarios[2] == plain.counts.scenarios[2] + expiries
    assert ex.counts.counters[2][fault_counter("key-expiry")] == expiries
    assert _figures(ex, 2)[1:] == (9, 9, 0)


@pytest.mark.parametrize("design", ["keys-and-markers", "agent-loop"])
def test_key_expiry_cannot_hurt_the_lookup_rung(design: str) -> None:
    """keyless-lookup remembers no key, so expiry has no chance; the lookup settles the marker."""
    ex = _explore(design, 2, ("key-expiry",), tracker="keyless-lookup")
    plain = _explore(design, 2, tracker="keyless-lookup")
    assert ex.counts.scenarios == plain.counts.scenarios
    assert ex.holds


def test_wrong_answer_makes_attempt_markers_duplicate_or_lose() -> None:
    """wrong-answer, depth 2: attempt-markers duplicates and loses.

    Depth 2 (a crash, then the person errs). A person is asked after a crash between a
    write's marker and its saved result: `marker: renamed`, `marker saved`, `tracker accepted`,
    `tool returned`, `result: tmp written`, 5 per write, 15 (the 15 questions at depth 1). The
    tracker holds the write after the last 3 (a wrong "no": sent again, a duplicate; 3 x 3 = 9)
    and not after the first 2 (a wrong "yes": never sent, missing; 2 x 3 = 6).
    """
    ex = _explore("attempt-markers", 2, ("wrong-answer",))
    plain = _explore("attempt-markers", 2)
    assert ex.counts.counters[1]["asks"] == 15
    assert ex.counts.scenarios[2] == plain.counts.scenarios[2] + 15
    assert _figures(ex, 2)[1:] == (9, 9, 6)
    assert not ex.verdicts[invariants.NO_DUPLICATE].holds
    assert not ex.verdicts[invariants.NO_LOSS].holds


@pytest.mark.parametrize("design", SEVEN)
def test_fresh_call_ids_leave_the_built_in_designs_unchanged(design: str) -> None:
    """Fresh call IDs leave every figure of the seven built-in designs as it is.

    Each built-in design either sends no key or makes the reply durable before its first
    write (a reply save, or agent-loop's marker save): a re-asked reply never reaches a send
    with the old IDs' records behind it, so every figure at depth 2 is that of stable IDs.
    """
    fresh, stable = _explore(design, 2, fresh=True), _explore(design, 2)
    assert fresh.counts.scenarios == stable.counts.scenarios
    assert fresh.counts.measures == stable.counts.measures
    assert {n: v.holds for n, v in fresh.verdicts.items()} == {n: v.holds for n, v in stable.verdicts.items()}


def test_fresh_call_ids_break_keys_sent_before_the_reply_is_saved() -> None:
    """Fresh call IDs break keys sent before the reply is saved.

    Policy: startup save, no reply save, a result save after each call, keys. Its triage run
    has 30 crash points (save-after-reply's 34 minus the 2 reply saves of 2 points). Stable IDs:
    no duplicate. Fresh IDs: a crash after create_a went out and before a rename makes reply 1
    durable (`tracker accepted create_a`, `tool returned create_a`, `result create_a: tmp
    written`) re-asks the model, which names create_a anew: a new key, a second record. In turn
    2 the read's result save makes reply 2 durable before comment_a goes out. So 3 of 30.
    """
    policy = Policy(
        startup_save=True, reply_save="never", result_saves="each-call", markers="none", keys="run-call", lock="none"
    )
    design = compose("keys-before-reply-save", "keys from call IDs, reply never saved first", policy)
    stable = explore(LoopModel(design, Env(TRIAGE, TRACKERS["keyed"])), 1)
    fresh = explore(LoopModel(design, Env(TRIAGE, TRACKERS["keyed"], fresh_ids=True)), 1)
    assert _figures(stable, 1) == (30, 0, 0, 0)
    assert _figures(fresh, 1) == (30, 3, 3, 0)


def test_no_fault_enabled_changes_nothing() -> None:
    """Every figure of the seed's row is the same whether the model is built with or without Env's defaults."""
    for design in SEVEN:
        model = variants.model(design, TRIAGE, TRACKERS["keyed"])
        assert model.env.faults == ()
        assert not model.env.fresh_ids
        assert all(action.kind != "fault" for action in model.actions(World()))
