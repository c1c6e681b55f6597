"""Tests of crashsweep.spec.process: loading, starting, and running from crash point to crash point."""

from __future__ import annotations

from crashsweep.spec import metrics, process
from crashsweep.spec.design import Design, Env, startup_save
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.ops import AskPerson, Ops, Point, Send
from crashsweep.spec.policy import Policy
from crashsweep.spec.process import advance, boot
from crashsweep.spec.tracker import KEYED
from crashsweep.spec.world import Checkpoint, LockFile, Record, Snapshot, Tracker, Turn, World
from crashsweep.variants import attempt_markers
from crashsweep.variants.composed import compose

ENV = Env(TRIAGE, KEYED)
DESIGN = attempt_markers.DESIGN


def _points(world: World, design: Design = DESIGN) -> list[str]:
    """The crash points one process passes from `world` to its exit."""
    world, _ = boot(world, ENV, design)
    names = []
    while world.process is not None:
        names.append(world.process.point)
        world, _ = advance(world, ENV, design)
    return names


def test_fresh_start_takes_a_new_run_id_and_saves_it_first() -> None:
    """No checkpoint: a fresh run ID, and the first point is the startup save's temp file."""
    world, counters = boot(World(), ENV, DESIGN)
    assert world.runs == 1
    assert world.process is not None
    assert world.process.memory == Snapshot("run-1")
    assert world.process.point == "start: tmp written"
    assert world.checkpoint.tmp == Snapshot("run-1")
    assert counters == {}


def test_run_ids_never_repeat() -> None:
    """A second fresh start (the first one's save was cut) gets another run ID."""
    first, _ = boot(World(), ENV, DESIGN)
    second, _ = boot(first.crashed(), ENV, DESIGN)
    assert second.process is not None
    assert second.process.memory.run == "run-2"


def test_done_run_exits_at_once() -> None:
    """A checkpoint marked done ends the process before any crash point."""
    world, counters = boot(World(Checkpoint(Snapshot("run-1", done=True))), ENV, DESIGN)
    assert world.finished
    assert world.process is None
    assert counters == {}


def test_temp_file_is_ignored_on_load() -> None:
    """A stale temp file is never read: the committed checkpoint is loaded."""
    committed = Snapshot("run-1")
    stale = Snapshot("run-1", turns=(Turn(1, complete=True),))
    world, _ = boot(World(Checkpoint(committed, stale), runs=1), ENV, DESIGN)
    assert world.process is not None
    assert world.process.memory == committed


def test_model_call_is_counted_on_the_stretch_that_makes_it() -> None:
    """The stretch from `start: renamed` to `reply 1 arrived` makes one model call."""
    world, _ = boot(World(), ENV, DESIGN)
    world, _ = advance(world, ENV, DESIGN)
    world, counters = advance(world, ENV, DESIGN)
    assert world.process is not None
    assert world.process.point == "reply 1 arrived"
    assert counters == {metrics.MODEL_CALLS: 1}


def _asking(memory: Snapshot, env: Env) -> Ops:
    return (AskPerson("create_a", False), Point("after"))


ASKING = Design("asking", "asks at once", startup_save, _asking)


def _asked(tracker: Tracker) -> World:
    memory = Snapshot("run-1", turns=(Turn(1, marked=("create_a",)),))
    world, _ = boot(World(Checkpoint(memory), tracker, runs=1), ENV, ASKING)
    world, _ = advance(world, ENV, ASKING)
    world, counters = advance(world, ENV, ASKING)
    assert counters == {metrics.ASKS: 1}
    return world


def test_person_says_yes_when_the_tracker_holds_the_write() -> None:
    """A "yes": the record's answer becomes the result and nothing is sent."""
    tracker = Tracker((Record("create_b", "run-1"), Record("create_a", "run-1")))
    world = _asked(tracker)
    assert world.tracker == tracker
    assert world.process is not None
    assert world.process.point == "after"
    assert world.process.memory.turns[0].result("create_a") == "#2"


def test_person_says_no_for_another_run_and_the_write_is_sent() -> None:
    """A "no" (the record is of another run): the write is sent now, passing its usual points."""
    world = _asked(Tracker((Record("create_a", "run-0"),)))
    assert world.process is not None
    assert world.process.point == "tracker accepted create_a"
    assert world.tracker.records[-1] == Record("create_a", "run-1")


def test_read_passes_one_point() -> None:
    """A read changes nothing and passes only `tool returned`."""

    def reading(memory: Snapshot, env: Env) -> Ops:
        return (Send("search", False), Point("after"))

    design = Design("reading", "reads", startup_save, reading)
    world, _ = boot(World(Checkpoint(Snapshot("run-1", turns=(Turn(1),))), runs=1), ENV, design)
    world, _ = advance(world, ENV, design)
    world, _ = advance(world, ENV, design)
    assert world.process is not None
    assert world.process.point == "tool returned search"
    assert world.tracker == Tracker()


def test_uninterrupted_run_passes_43_points_and_finishes() -> None:
    """attempt-markers passes the 43 crash points of SEMANTICS.md section 7 and finishes."""
    assert len(_points(World())) == 43


def test_stretches_share_the_instructions_they_append() -> None:
    """Two runs to the same crash point hold one program tuple; lock files are one object per value."""
    first, _ = boot(World(), ENV, DESIGN)
    second, _ = boot(World(), ENV, DESIGN)
    for _ in range(4):  # past the start save and the first reply
        first, _ = advance(first, ENV, DESIGN)
        second, _ = advance(second, ENV, DESIGN)
    assert first.process is not None
    assert second.process is not None
    assert first.process.pending is second.process.pending
    assert process._lock_file("run-1", None) is process._lock_file("run-1", None) == LockFile("run-1")


def _restart(how: str) -> World:
    """A restart whose checkpoint holds turn 1 with create_a's result and create_b's orphaned call."""
    policy = Policy(
        startup_save=True,
        reply_save="before-first-send",
        result_saves="each-call",
        markers="none",
        keys="none",
        lock="none",
        transcript_on_restart=how,  # type: ignore[arg-type]  # each of the three values, by the caller
    )
    saved = Snapshot("run-1", turns=(Turn(1, results=(("create_a", "#1"),)),))
    world = World(checkpoint=Checkpoint(saved), tracker=Tracker((Record("create_a", "run-1"),)), runs=1)
    env, design = Env(TRIAGE, KEYED), compose("d", "d", policy)
    after, counters = boot(world, env, design)
    while after.process is not None and after.process.point.startswith("start: "):  # past Save(start)
        after, counters = advance(after, env, design)
    if how == "as-is":
        assert counters == {metrics.MODEL_CALLS: 1}  # the refused request is a model call
    return after


def test_as_is_sends_the_orphaned_call_and_is_stuck() -> None:
    """CONVERSATIONS.md 1: the provider refuses a conversation with a call without a result, for good."""
    after = _restart("as-is")
    assert after.process is not None
    assert after.process.point == "the provider refuses the conversation: create_b has no result"


def test_repair_gives_the_orphaned_call_an_unknown_outcome_and_asks_the_model() -> None:
    """CONVERSATIONS.md 1: no request for create_b; the turn is completed and saved, then reply 2."""
    after = _restart("repair")
    assert after.process is not None
    last = after.process.memory.last
    assert last is not None
    assert last.result("create_b") == process.OUTCOME_UNKNOWN
    assert after.tracker.size == 1
    assert after.process.point == "turn 1: tmp written"


def test_resume_pending_sends_the_orphaned_call() -> None:
    """The default settles the orphaned call first: create_b goes to the tracker."""
    after = _restart("resume-pending")
    assert after.process is not None
    assert after.process.point == "tracker accepted create_b"
