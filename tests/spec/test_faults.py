"""Tests of crashsweep.spec.faults: where each fault kind is enabled, what it does, and the option parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.spec.design import Design, Env
from crashsweep.spec.faults import (
    CHANGED_ARGS_FAULT,
    FAULTS,
    KEY_EXPIRY,
    LOST_REPLY,
    WRONG_ANSWER,
    FaultError,
    parse_call_ids,
    parse_faults,
)
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.ops import AskPerson, Failed, Pause, Point, Send
from crashsweep.spec.process import WRONG_ANSWER as SAID_YES
from crashsweep.spec.process import advance, boot, paused, resume
from crashsweep.spec.tracker import KEYED
from crashsweep.spec.world import World
from crashsweep.variants import attempt_markers, idempotency_keys, save_after_reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL = Env(TRIAGE, KEYED, tuple(FAULTS))


def _run_to(point: str, design: Design, env: Env, world: World | None = None) -> World:
    """Start (or restart) `world` and continue until the process is at `point`."""
    world, _ = boot(World() if world is None else world, env, design)
    while world.process is not None and world.process.point != point:
        world, _ = advance(world, env, design)
    assert world.process is not None, f"never reached {point!r}"
    return world


def _finish(world: World, design: Design, env: Env) -> World:
    """Continue until the run is finished, taking no fault."""
    while not world.finished:
        world, _ = boot(world, env, design) if world.process is None else advance(world, env, design)
    return world


def test_lost_reply_is_enabled_only_where_the_reply_is_still_to_come() -> None:
    """At `tracker accepted C` with `tool returned C` next, and nowhere else on the way there."""
    world = _run_to("tracker accepted create_a", save_after_reply.DESIGN, ALL)
    assert LOST_REPLY.enabled(world)
    assert not LOST_REPLY.enabled(advance(world, ALL, save_after_reply.DESIGN)[0])  # at tool returned
    assert not LOST_REPLY.enabled(World())


def test_a_lost_reply_keeps_the_record_and_fails_the_tool() -> None:
    """The strike leaves the tracker as it is and sends the process to `tool failed C`."""
    world = _run_to("tracker accepted create_a", save_after_reply.DESIGN, ALL)
    struck = LOST_REPLY.strike(world)
    assert struck.tracker == world.tracker
    assert struck.process is not None
    failed = Failed("create_a", Send("create_a", keyed=False))
    assert struck.process.pending[:2] == (Point("tool failed create_a"), failed)
    after, _ = resume(struck, ALL, save_after_reply.DESIGN)
    assert after.process is not None
    assert after.process.point == "tool failed create_a"


def test_a_lost_reply_makes_save_after_reply_send_again() -> None:
    """No marker: the failed call is sent again at once, a second record (FAULTS.md section 2)."""
    design = save_after_reply.DESIGN
    world, _ = resume(LOST_REPLY.strike(_run_to("tracker accepted create_a", design, ALL)), ALL, design)
    done = _finish(world, design, ALL)
    assert done.tracker.count("create_a") == 2


def test_fails_after_accept_offers_no_lost_reply_on_its_failing_request() -> None:
    """The failing request's reply is already an error: there is no reply left to lose."""
    job = load_job(EXAMPLES / "triage-fails.toml")
    env = Env(job, KEYED, ("lost-reply",))
    world = _run_to("tracker accepted create_a", save_after_reply.DESIGN, env)
    assert not LOST_REPLY.enabled(world)


def test_key_expiry_needs_a_restart_and_a_remembered_key() -> None:
    """Enabled in a stopped world after a start while the tracker holds keys; it keeps the records."""
    design = idempotency_keys.DESIGN
    before_write = _run_to("reply 1 arrived", design, ALL).crashed()
    assert not KEY_EXPIRY.enabled(before_write)  # no key yet
    after_write = _run_to("tool returned create_a", design, ALL)
    assert not KEY_EXPIRY.enabled(after_write)  # a running process: not a restart
    stopped = after_write.crashed()
    assert KEY_EXPIRY.enabled(stopped)
    forgot = KEY_EXPIRY.strike(stopped)
    assert forgot.tracker.keys == ()
    assert forgot.tracker.records == stopped.tracker.records
    assert not KEY_EXPIRY.enabled(forgot)
    assert not KEY_EXPIRY.enabled(World())


def _at_question(design: Design, env: Env) -> World:
    """attempt-markers crashed at `tool returned create_a`, restarted up to the person's pause."""
    world = _run_to("tool returned create_a", design, env).crashed()
    world, _ = boot(world, env, design)
    while world.process is not None and not paused(world):
        world, _ = advance(world, env, design)
    return world


def test_wrong_answer_pauses_before_the_person_answers() -> None:
    """With wrong-answer on, the process pauses before AskPerson; without, it does not."""
    world = _at_question(attempt_markers.DESIGN, ALL)
    assert world.process is not None
    assert world.process.point == "person answers create_a"
    assert world.process.pending[0] == Pause("person answers create_a")
    assert WRONG_ANSWER.enabled(world)
    assert not WRONG_ANSWER.enabled(World())
    plain = Env(TRIAGE, KEYED)
    quiet = _at_question(attempt_markers.DESIGN, plain)
    assert quiet.finished  # no pause: the process ran to its exit


def test_a_wrong_no_sends_again_and_a_plain_answer_does_not() -> None:
    """create_a was applied: the wrong answer ("no") sends it again; the usual one takes its result."""
    design = attempt_markers.DESIGN
    world = _at_question(design, ALL)
    wrong, counters = resume(WRONG_ANSWER.strike(world), ALL, design)
    assert counters["asks"] == 1
    assert _finish(wrong, design, ALL).tracker.count("create_a") == 2
    right, _ = advance(world, ALL, design)
    assert _finish(right, design, ALL).tracker.count("create_a") == 1


def test_a_wrong_yes_loses_the_write() -> None:
    """create_a was never sent (crash at `marker saved`): a wrong "yes" stores a result with no record."""
    design = attempt_markers.DESIGN
    world = _run_to("marker saved create_a", design, ALL).crashed()
    world, _ = boot(world, ALL, design)
    while not paused(world):
        world, _ = advance(world, ALL, design)
    struck = WRONG_ANSWER.strike(world)
    assert struck.process is not None
    assert struck.process.pending[0] == AskPerson("create_a", False, wrong=True)
    done = _finish(resume(struck, ALL, design)[0], design, ALL)
    assert done.tracker.count("create_a") == 0
    assert done.checkpoint.committed is not None
    assert done.checkpoint.committed.turns[0].result("create_a") == SAID_YES


def test_fresh_call_ids_suffix_each_reply() -> None:
    """Each reply the model hands out gets a new suffix; a stable model gives none."""
    fresh = Env(TRIAGE, KEYED, fresh_ids=True)
    world = _run_to("tool returned create_a", save_after_reply.DESIGN, fresh)
    assert world.replies == 1
    assert world.process is not None
    assert world.process.memory.turns[0].ids == "@1"
    stable = _run_to("tool returned create_a", save_after_reply.DESIGN, Env(TRIAGE, KEYED))
    assert (stable.replies, stable.process.memory.turns[0].ids if stable.process else None) == (0, "")


def test_parse_faults_keeps_registry_order_and_refuses_unknown_kinds() -> None:
    """Names in any order come back in registry order; an unknown one names the known kinds."""
    assert parse_faults("wrong-answer, lost-reply") == ("lost-reply", "wrong-answer")
    assert parse_faults("") == ()
    known = "lost-reply, key-expiry, wrong-answer, power-loss, pause, changed-args, trim-context"
    with pytest.raises(FaultError, match=f"unknown fault 'power' \\(known: {known}\\)"):
        parse_faults("power")


def test_parse_call_ids() -> None:
    """stable or fresh, nothing else."""
    assert (parse_call_ids("stable"), parse_call_ids("fresh")) == (False, True)
    with pytest.raises(FaultError, match="unknown --call-ids 'new'"):
        parse_call_ids("new")


def test_changed_args_strikes_only_a_reply_handed_out_before() -> None:
    """CONVERSATIONS.md 2.3: the first `reply 1 arrived` is no chance; after a crash, the re-ask is.

    save-after-reply on triage with `changed-args` on: start, Save(start) (2 points), reply 1
    arrives (handed out once: not enabled). Crash there and restart: the re-asked reply 1 is a
    chance, and the strike gives its calls arguments of version 2 (and of 3 after a second one).
    """
    env, design = Env(TRIAGE, KEYED, faults=("changed-args",)), save_after_reply.DESIGN
    world, _ = boot(World(), env, design)
    while world.process is not None and world.process.point != "reply 1 arrived":
        world, _ = advance(world, env, design)
    assert not CHANGED_ARGS_FAULT.enabled(world)
    world, _ = boot(world.crashed(), env, design)
    while world.process is not None and world.process.point != "reply 1 arrived":
        world, _ = advance(world, env, design)
    assert CHANGED_ARGS_FAULT.enabled(world)
    struck = CHANGED_ARGS_FAULT.strike(world)
    assert not CHANGED_ARGS_FAULT.enabled(struck)  # once per arrival
    after, _ = advance(struck, env, design)
    assert after.process is not None
    last = after.process.memory.last
    assert last is not None
    assert last.args == 2
