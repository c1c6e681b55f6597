"""One process from a saved world: the points it passed, its outcome, and the crashed worlds it reports.

The program below writes state.json = {"done": k} before its point "saved k", k = 1, 2, 3, from
where its saved state left off; so by hand: from the empty world a process passes the three
points, and the world at (or killed at) point k holds done = k.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis
from crashsweep.realsweep.faults.wrong_answer import WRONG_ANSWER
from crashsweep.realsweep.process.runner import Runner, Step, runner
from crashsweep.realsweep.process.units import code, run_leg, struck
from crashsweep.realsweep.tracker.store import KEYS_TABLE, Store
from crashsweep.realsweep.values import Crash, Outcome, Scenario, SweepError, SweepOptions, Target, Unit

PROGRAM = textwrap.dedent(
    """
    import json, os
    from pathlib import Path
    from crashsweep.realsweep.probe.crashpoint import count, crashpoint

    def main():
        state = Path(os.environ["CRASHSWEEP_WORKDIR"]) / "state.json"
        done = json.loads(state.read_text())["done"] if state.exists() else 0
        count("starts")
        for step in range(done, 3):
            state.write_text(json.dumps({"done": step + 1}))
            crashpoint(f"saved {step + 1}")
    """
)


def finished(scenario: Scenario) -> Outcome:
    """Missing unless the state file says 3 steps."""
    done = json.loads((scenario.workdir / "state.json").read_text())["done"]
    return Outcome(missing=0 if done == 3 else 1, applied=1)


@pytest.fixture
def one(tmp_path: Path) -> Iterator[Runner]:
    """A runner of the program, without a tracker."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    target = Target.entry_point("prog:main", path=[str(tmp_path)])
    with runner(target, finished, SweepOptions(tracker=None, root=tmp_path / "root", workers=1)) as made:
        yield made


def _empty(folder: Path) -> Path:
    (folder / worlds.FILES).mkdir(parents=True)
    return folder


def _done(folder: Path) -> int:
    done: int = json.loads((folder / worlds.FILES / "state.json").read_text())["done"]
    return done


def test_a_run_to_the_end_reports_the_world_at_each_point(one: Runner, tmp_path: Path) -> None:
    """Snapshots: three points, three crashed worlds (done = 1, 2, 3), each saved when claimed."""
    world = _empty(tmp_path / "empty")
    unit = Unit(0, "root", (), world, None, snapshots=True)
    saved = tmp_path / "saved"

    def save(workdir: Path, space: Path | None, name: str) -> Path:
        worlds.save(workdir, space, saved / name)
        return saved / name

    leg = run_leg(one, unit, world, lambda key: True, save)
    assert leg.points == ("saved 1", "saved 2", "saved 3")
    assert leg.snapshots == 3
    assert leg.outcome == Outcome(missing=0, applied=1)
    assert leg.counters == {"starts": 1}
    assert [c.crash for c in leg.children] == [Crash(1, "saved 1"), Crash(2, "saved 2"), Crash(3, "saved 3")]
    assert [_done(c.world) for c in leg.children if c.world is not None] == [1, 2, 3]
    for child in leg.children:
        assert child.world is not None
        assert child.digest == worlds.digest(worlds.read_world(child.world))
    assert len({c.digest for c in leg.children}) == 3


def test_a_world_claimed_elsewhere_is_named_but_not_saved(one: Runner, tmp_path: Path) -> None:
    """claim() False: the child has its digest and no saved world, and nothing is saved."""
    world = _empty(tmp_path / "empty")
    unit = Unit(0, "root", (), world, None, snapshots=True)

    def save(workdir: Path, space: Path | None, name: str) -> Path:
        raise AssertionError("nothing should be saved")

    leg = run_leg(one, unit, world, lambda key: False, save)
    assert [c.world for c in leg.children] == [None, None, None]
    assert len({c.digest for c in leg.children}) == 3


def test_a_killed_process_reports_the_world_it_left(one: Runner, tmp_path: Path) -> None:
    """Killed at point 2: one child, done = 2; its digest is the one a snapshot at point 2 gives."""
    world = _empty(tmp_path / "empty")
    saved = tmp_path / "saved"

    def save(workdir: Path, space: Path | None, name: str) -> Path:
        worlds.save(workdir, space, saved / name)
        return saved / name

    killed = run_leg(one, Unit(0, "root", (), world, Crash(2, "saved 2")), world, lambda key: True, save)
    assert killed.outcome is None
    assert [c.crash for c in killed.children] == [Crash(2, "saved 2")]
    child = killed.children[0]
    assert child.world == saved / "n0-2"
    assert _done(child.world) == 2
    snapped = run_leg(one, Unit(0, "root", (), world, None, True), world, lambda key: False, save)
    assert child.digest == snapped.children[1].digest


def test_a_point_the_process_never_reaches_is_unreached(one: Runner, tmp_path: Path) -> None:
    """From a world where done = 2, a process passes only "saved 3": a kill at "saved 1" is never reached."""
    world = tmp_path / "two"
    (world / worlds.FILES).mkdir(parents=True)
    (world / worlds.FILES / "state.json").write_text(json.dumps({"done": 2}))
    path = (Crash(2, "saved 2"),)
    leg = run_leg(one, Unit(1, "two", path, world, Crash(1, "saved 1")), world, lambda key: True, _no_save)
    assert leg.unreached
    assert leg.children == ()
    end = run_leg(one, Unit(1, "two", path, world), world, lambda key: True, _no_save)
    assert end.points == ("saved 3",)
    assert end.children == ()  # no snapshots asked: the node is at the depth


def _no_save(workdir: Path, space: Path | None, name: str) -> Path:
    raise AssertionError("nothing should be saved")


def test_a_failing_check_names_the_scenario(tmp_path: Path) -> None:
    """The check raises: a SweepError that names the scenario by its crash indices."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    target = Target.entry_point("prog:main", path=[str(tmp_path)])

    def broken(scenario: Scenario) -> Outcome:
        raise KeyError("done")

    world = _empty(tmp_path / "empty")
    with runner(target, broken, SweepOptions(tracker=None, root=tmp_path / "root", workers=1)) as made:
        unit = Unit(3, "w", (Crash(4, "saved 1"), Crash(2, "saved 2")), world)
        with pytest.raises(SweepError, match=r"scenario 4,2: the check failed: KeyError"):
            run_leg(made, unit, world, lambda key: True, _no_save)


def test_code_names_a_scenario_by_its_crash_indices() -> None:
    """As the reports name scenarios."""
    assert code(()) == "(uninterrupted)"
    assert code((Crash(5, "a"), Crash(12, "b"))) == "5,12"


def test_a_fault_that_did_not_strike_where_it_was_offered_stops_the_sweep(tmp_path: Path) -> None:
    """A process told to lose a reply or hear a wrong answer must show it in its points and pauses."""
    lost = Fault(LOST_REPLY, 2, "tracker accepted create_a", 1)
    wrong = Fault(WRONG_ANSWER, 3, "person answers create_b", 1)

    def step(points: tuple[str, ...], pauses: tuple[tuple[int, str], ...] = ()) -> Step:
        return Step(points, {}, tmp_path, tmp_path, None, None, False, 0, pauses)

    both = step(
        ("start", "tracker accepted create_a", "tool failed create_a", "marker"), ((3, "person answers create_b"),)
    )
    struck((), both, (lost, wrong))  # both struck: nothing to say
    with pytest.raises(SweepError, match="lost-reply at tracker accepted create_a did not strike"):
        struck((), step(("start", "tracker accepted create_a", "tool returned create_a")), (lost,))
    with pytest.raises(SweepError, match="wrong-answer at person answers create_b did not strike"):
        struck((), step(("start",), ((1, "person answers create_b"),)), (wrong,))


ASKING = textwrap.dedent(
    """
    import os
    from pathlib import Path
    from crashsweep.realsweep.probe.crashpoint import crashpoint, pause
    from crashsweep.realsweep.probe.faults_env import wrong_answers

    def main():
        work = Path(os.environ["CRASHSWEEP_WORKDIR"])
        crashpoint("start")
        question = pause("person answers create_a")
        answer = "no" if question in wrong_answers() else "yes"
        (work / "answer").write_text(answer)
        crashpoint(f"answered {answer}")
    """
)
"""A program that asks a person once, between its two points: by hand, the pause comes after 1 point."""


def answered(scenario: Scenario) -> Outcome:
    """Missing when the person's answer was no."""
    return Outcome(missing=int((scenario.workdir / "answer").read_text() == "no"))


def test_a_process_suffers_its_faults_and_crashes_only_after_them(tmp_path: Path) -> None:
    """wrong-answer: offered after point 1; suffered, the process answers no, and its crashes come after the pause.

    By hand: the uninterrupted process passes "start", pauses (1 point passed), passes "answered
    yes"; the chance is the 1st pause, after 1 point. Told to hear a wrong answer it passes
    "answered no"; its only crash after the fault is at point 2, and no fault is left to offer.
    """
    (tmp_path / "prog.py").write_text(ASKING)
    target = Target.entry_point("prog:main", path=[str(tmp_path)])
    options = SweepOptions(tracker=None, root=tmp_path / "root", workers=1)
    world = _empty(tmp_path / "empty")
    saved = tmp_path / "saved"

    def save(workdir: Path, space: Path | None, name: str) -> Path:
        worlds.save(workdir, space, saved / name)
        return saved / name

    wrong = Fault(WRONG_ANSWER, 1, "person answers create_a", 1)
    with runner(target, answered, options, Nemesis(("wrong-answer",))) as made:
        plain = run_leg(made, Unit(0, "root", (), world, None, True), world, lambda key: False, save)
        assert (plain.points, plain.chances, plain.outcome) == (("start", "answered yes"), (wrong,), Outcome())
        assert [c.crash for c in plain.children] == [Crash(1, "start"), Crash(2, "answered yes")]
        unit = Unit(0, "root", (), world, None, True, (wrong,), 0)
        faulty = run_leg(made, unit, world, lambda key: True, save)
        assert (faulty.points, faulty.chances, faulty.outcome) == (("start", "answered no"), (), Outcome(missing=1))
        assert [c.crash for c in faulty.children] == [Crash(2, "answered no")]
        assert faulty.children[0].world == saved / "n0-wrong-answer-1.1-2"
        assert unit.level == 2  # a fault and a crash: the world it left is two moves deep
        killed = run_leg(
            made, replace(unit, crash=Crash(2, "answered no"), snapshots=False), world, lambda key: False, _no_save
        )
        assert [c.crash for c in killed.children] == [Crash(2, "answered no")]
        assert killed.children[0].digest == faulty.children[0].digest


def test_an_expiry_forgets_every_key_of_a_copy_of_the_world(one: Runner, tmp_path: Path) -> None:
    """key-expiry: no process; the saved copy keeps files and records, holds no key; the original is untouched."""
    world = tmp_path / "w"
    (world / worlds.FILES).mkdir(parents=True)
    (world / worlds.FILES / "state.json").write_text(json.dumps({"done": 2}))
    store = Store(world / worlds.TRACKER_FILE, honours_keys=True)
    store.create_issue("a", "", "run-1", "create_a", "k1")
    store.close()
    before = worlds.read_world(world)
    saved = tmp_path / "saved"

    def save(workdir: Path, space: Path | None, name: str) -> Path:
        worlds.save(workdir, space, saved / name)
        return saved / name

    unit = Unit(4, "w", (Crash(2, "saved 2"),), world, moves=1, expire=True)
    leg = run_leg(one, unit, world, lambda key: True, save)
    assert one.processes == 0
    assert (leg.points, leg.outcome, leg.chances) == ((), None, ())
    [child] = leg.children
    assert (child.crash, child.world, child.holds_keys) == (None, saved / "n4-key-expiry", False)
    assert _done(saved / "n4-key-expiry") == 2
    after = worlds.read_world(saved / "n4-key-expiry")
    tables = dict(after.tables)
    assert tables[KEYS_TABLE] == ()
    assert len(tables["records"]) == 1
    assert child.digest == worlds.digest(after) != worlds.digest(before)
    assert worlds.read_world(world) == before
    assert unit.level == 2
