"""The state key (spec/key.py, SEMANTICS.md section 11): the merged search gives the full search's figures.

The full graph (`projection=False`, one node per world) is the reference: over the registry
(every design, tracker, fault kind and call-ID mode) on small jobs at depths 2-3, the search
that merges worlds by their key must give the same scenarios per move count, the same summed
counters and measures, the same verdicts, and shortest counterexamples and witnesses of the
same length and moves, each a real run of the model (replayed from its code).
"""

from __future__ import annotations

from typing import Any

import pytest

from crashsweep.explorer.path import replay, shortest_path
from crashsweep.explorer.search import Exploration, explore
from crashsweep.spec.faults import FAULTS
from crashsweep.spec.job import Call, Job, load_job
from crashsweep.spec.key import Chain, Members, WorldKeys, world_key
from crashsweep.spec.keyparts import Hashed
from crashsweep.spec.memory import Snapshot, Turn
from crashsweep.spec.records import Record, Tracker
from crashsweep.spec.tracker import KEYED, TRACKERS
from crashsweep.spec.world import Checkpoint, World
from crashsweep.variants import model, names
from tests.paths import ROOT

ONE_WRITE = load_job(ROOT / "examples" / "one-write.toml")
FAILS = load_job(ROOT / "examples" / "triage-fails.toml")
APPROVAL = load_job(ROOT / "examples" / "triage-approval.toml")
TWO_TURNS = Job(
    "two-turns",
    (
        (Call("w1", "create_issue", True), Call("w2", "create_issue", True)),
        (Call("r3", "search_issues", False), Call("w4", "create_issue", True)),
    ),
)
ENVIRONMENTS = [((), False), ((), True), *(((fault,), False) for fault in FAULTS)]
"""Crashes alone, fresh call IDs, and each fault kind of the registry."""


def environment_id(value: object) -> str:
    """A parameter's id: the faults joined, or fresh/stable."""
    if isinstance(value, tuple):
        return ",".join(value) or "crashes"
    return "fresh" if value else "stable"


def signature(exploration: Exploration[Any]) -> tuple[object, ...]:
    """Every figure the two searches must share: counts, and each verdict with its path's length and moves."""
    verdicts = {}
    for name, verdict in exploration.verdicts.items():
        path = None
        if verdict.node is not None:
            found = shortest_path(exploration, verdict.node)
            path = (len(found.steps), found.crashes)
        verdicts[name] = (verdict.holds, path)
    return exploration.counts, verdicts


def both(design: object, job: Job, tracker: str, depth: int, faults: tuple[str, ...], fresh: bool) -> None:
    """Explore full and merged; assert equal signatures, fewer or as many nodes, and real paths."""
    loop = model(design, job, TRACKERS[tracker], faults=faults, fresh_ids=fresh)  # type: ignore[arg-type]
    full = explore(loop, depth, projection=False)
    merged = explore(loop, depth)
    assert not full.projected
    assert merged.projected
    assert signature(merged) == signature(full)
    assert merged.states <= full.states
    for verdict in merged.verdicts.values():
        if verdict.node is not None:  # the merged search's path is a real run: its code replays to its world
            path = shortest_path(merged, verdict.node)
            assert replay(loop, depth, path.code).end == path.end


@pytest.mark.parametrize(("faults", "fresh"), ENVIRONMENTS, ids=environment_id)
@pytest.mark.parametrize("design", names())
def test_every_design_and_fault_on_one_write_at_depth_three(design: str, faults: tuple[str, ...], fresh: bool) -> None:
    """The smallest job with a write, keyless (every rung of the ladder), three moves: the same figures.

    tests/cli/test_frontier.py compares the 512 designs of the policy space on triage at depth 2.
    """
    both(design, ONE_WRITE, "keyless", 3, faults, fresh)


@pytest.mark.parametrize("tracker", list(TRACKERS))
@pytest.mark.parametrize("design", names())
def test_every_design_and_tracker_on_two_turns_at_depth_two(design: str, tracker: str) -> None:
    """A job of two turns (a read among the writes), where a duplicate's tail merges with others, at depth 2."""
    both(design, TWO_TURNS, tracker, 2, (), False)


@pytest.mark.parametrize("job", [FAILS, APPROVAL], ids=["fails-after-accept", "approval"])
@pytest.mark.parametrize("design", names())
def test_every_design_on_the_situation_jobs(design: str, job: Job) -> None:
    """A tool failing after accept (the calls struck) and an approval gate (the approvals), keyless, depth 2."""
    both(design, job, "keyless", 2, (), False)


def test_the_tails_merge() -> None:
    """Sometimes: on a job where a duplicate shifts every later answer, the key stores fewer states."""
    loop = model("save-after-reply", TWO_TURNS, KEYED)
    assert explore(loop, 2).states < explore(loop, 2, projection=False).states


def test_answers_are_left_out_and_the_order_of_records() -> None:
    """Two worlds that differ in answers and in the order of their records have one key."""
    one, two = Record("a", "run-1"), Record("b", "run-1")
    first = Tracker(records=(one, two, one))
    second = Tracker(records=(two, one, one))
    memory = Snapshot("run-1", turns=(Turn(1, results=(("a", "#1"),)),))
    other = Snapshot("run-1", turns=(Turn(1, results=(("a", "#3"),)),))
    assert world_key(World(tracker=first)) == world_key(World(tracker=second))
    # The same pairs and one extra record: dups, missing and the invariants read no more.
    assert world_key(World(tracker=first)) == world_key(World(tracker=Tracker(records=(one, two, two))))
    other_run = Tracker(records=(one, two, Record("a", "run-2")))
    assert world_key(World(tracker=first)) != world_key(World(tracker=other_run))
    assert world_key(World(tracker=first)) != world_key(World(tracker=Tracker(records=(one, two))))
    assert world_key(World(process=None, checkpoint=_disk(memory))) == world_key(World(checkpoint=_disk(other)))
    without = Snapshot("run-1", turns=(Turn(1),))
    assert world_key(World(checkpoint=_disk(memory))) != world_key(World(checkpoint=_disk(without)))


def _disk(snapshot: Snapshot) -> Checkpoint:
    return Checkpoint(committed=snapshot)


def test_chains_and_members_compare_by_value() -> None:
    """Shared or not, chains are equal as sequences and members as sets (the key is exact)."""
    a = Chain(Chain(None, 1), 2)
    assert a == Chain(Chain(None, 1), 2)
    assert a != Chain(Chain(None, 2), 1)
    assert hash(a) == hash(Chain(Chain(None, 1), 2))
    x = Members(Members(None, "p"), "q")
    y = Members(Members(None, "q"), "p")
    assert x == y
    assert hash(x) == hash(y)
    assert x != Members(Members(None, "p"), "r")


def test_a_long_prefix_folds_without_recursion() -> None:
    """A snapshot of many turns, built whole or turn by turn, keys the same (no recursion limit)."""
    turns = tuple(Turn(n, results=((f"c{n}", f"#{n}"),), complete=True) for n in range(1, 3001))
    whole = Snapshot("run-1", turns=turns)
    built = Snapshot("run-1")
    for turn in turns:
        built = built.appended(turn)
    assert world_key(World(checkpoint=_disk(whole))) == world_key(World(checkpoint=_disk(built)))


def test_runs_are_named_by_their_age() -> None:
    """Rule 3: run-2 of two handed out is run-1 of one; an older run, or an ID of another form, is not."""
    one = World(tracker=Tracker(records=(Record("a", "run-1"),)), checkpoint=_disk(Snapshot("run-1")), runs=1)
    two = World(tracker=Tracker(records=(Record("a", "run-2"),)), checkpoint=_disk(Snapshot("run-2")), runs=2)
    older = World(tracker=Tracker(records=(Record("a", "run-1"),)), checkpoint=_disk(Snapshot("run-1")), runs=2)
    assert world_key(one) == world_key(two)
    assert world_key(one) != world_key(older)
    other_form = World(checkpoint=_disk(Snapshot("mine")), runs=1)
    assert world_key(other_form) != world_key(World(checkpoint=_disk(Snapshot("yours")), runs=1))
    assert world_key(World(runs=0)) != world_key(World(runs=1))  # a first start or a restart


def test_a_duplicate_is_kept_as_a_flag() -> None:
    """Rule 2: two or three records of one call are one key (dups is summed on the path); one record is not."""
    a = Record("a", "run-1")
    twice, thrice = Tracker(records=(a, a)), Tracker(records=(a, a, a))
    assert world_key(World(tracker=twice, runs=1)) == world_key(World(tracker=thrice, runs=1))
    assert world_key(World(tracker=twice, runs=1)) != world_key(World(tracker=Tracker(records=(a,)), runs=1))


def test_a_temp_file_no_one_reads_first_is_left_out() -> None:
    """Rule 4: with no process, a left temp file is no part of the key; between a write and its rename it is."""
    left = Checkpoint(committed=Snapshot("run-1"), tmp=Snapshot("run-1", turns=(Turn(1),)))
    assert world_key(World(checkpoint=left, runs=1)) == world_key(World(checkpoint=_disk(Snapshot("run-1")), runs=1))
    loop = model("save-after-reply", ONE_WRITE, KEYED)
    world, _ = loop.step(loop.initial(), loop.actions(loop.initial())[0])
    assert world.process is not None
    assert world.process.point == "start: tmp written"
    assert world.checkpoint.tmp is not None
    renamed_early = World(Checkpoint(), world.tracker, world.process, runs=world.runs)
    assert loop.key(world) != loop.key(renamed_early)


def test_hashed_tuples_compare_by_value() -> None:
    """A Hashed keeps its tuple's hash (or the one its caller had) and is equal to a Hashed of an equal tuple."""
    one = Hashed((1, "a"))
    assert one == Hashed((1, "a"), hash((1, "a")))
    assert hash(one) == hash((1, "a"))
    assert one != Hashed((1, "b"))
    assert one != (1, "a")  # a key's part, never the bare tuple


def test_a_world_with_no_process_gets_the_key_of_its_parts() -> None:
    """Crashed worlds of the same parts get one key object; a world differing in any count does not."""
    keys = WorldKeys()
    disk = _disk(Snapshot("run-1", turns=(Turn(1, results=(("a", "#1"),)),)))
    tracker = Tracker(records=(Record("a", "run-1"),))
    first = keys(World(disk, tracker, runs=1))
    assert keys(World(disk, tracker, runs=1)) is first
    assert keys(World(disk, tracker, runs=1, replies=1)) != first
    assert keys(World(disk, tracker, runs=1, finished=True)) != first
    assert keys(World(_disk(Snapshot("run-1", turns=(Turn(1),))), tracker, runs=1)) != first
    assert WorldKeys()(World(disk, tracker, runs=1)) == first  # the same value from fresh tables
