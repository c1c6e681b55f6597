"""The crash states of one power cut share one killed process (process/cuts.py): fewer processes, the same outcomes.

docs/examples/record_upgrade.c under `--persistence alice` (its cuts counted by hand in
tests/realsweep/syscalls/test_persistence_sweeps.py and docs/guide/power-loss.md): without
--wal, 4 cuts with 2, 11, 1 and 8 states (22); with it, 7 cuts with 2, 11, 1, 2, 11, 8 and 1
(36). A sweep runs the uninterrupted run (1 process), each crash scenario (2: killed, then
restarted) and each state's restart (1 each); a kill a state before the sharing, a kill a cut
with it.
"""

from __future__ import annotations

import sqlite3
import subprocess
import threading
from collections import Counter
from contextlib import closing
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.process import cuts
from crashsweep.realsweep.sweep import ScenarioResult, SweepOptions, SweepResult, Target, replay, sweep
from crashsweep.realsweep.values import Check
from tests.conftest import require_tool
from tests.realsweep.syscalls.conftest import EXAMPLES, example_check

STATE = " / state "
CUT = "power-loss at "
SYSCALLS = Points(("syscalls",))
ALICE = Nemesis(("power-loss",), persistence="alice")
ORDERED = Nemesis(("power-loss",), persistence="ordered")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """docs/examples/record_upgrade.c and my_loop.c, compiled with cc."""
    cc = require_tool("cc")
    folder = tmp_path_factory.mktemp("cuts")
    found = {}
    for name in ("record_upgrade", "my_loop"):
        subprocess.run(
            [cc, "-O2", "-Wall", "-Werror", "-o", str(folder / name), str(EXAMPLES / f"{name}.c")], check=True
        )
        found[name] = folder / name
    return found


def swept(
    argv: list[str], check: Check, tracker: str = "keyed", shared: bool = True, nemesis: Nemesis | None = None
) -> SweepResult:
    """The depth-1 sweep of `argv` under power loss and alice (or `nemesis`), its cuts' kills shared or not."""
    options = SweepOptions(depth=1, points=SYSCALLS, workers=2, dedup=False, tracker=tracker)
    if shared:
        return sweep(Target.command(argv), check, options, nemesis=nemesis or ALICE)
    with cuts.unshared():
        return sweep(Target.command(argv), check, options, nemesis=nemesis or ALICE)


def seen(scenario: ScenarioResult) -> tuple[object, ...]:
    """What a scenario showed: its moves, outcome (its History's events too), counters and last points."""
    outcome = replace(scenario.outcome, history=None)
    events = () if scenario.outcome.history is None else scenario.outcome.history.events
    return (scenario.crashes, scenario.faults, outcome, events, dict(scenario.counters), scenario.points)


def by_label(result: SweepResult) -> dict[str, tuple[object, ...]]:
    return {scenario.code: seen(scenario) for scenario in result.scenarios}


def test_the_states_of_a_cut_share_its_kill_and_show_what_they_showed_each_alone(compiled: dict[str, Path]) -> None:
    """Without --wal: 57 processes unshared (1 + 6 x 2 + 22 x 2), 39 shared (1 + 12 + 22 restarts + 4 kills).

    Every scenario shows the same in both, and each state of the torn cut `fsync record`
    (state 1 recovers, states 2 to 8 are torn overwrites whose restart exits 3) shows what
    the same state re-run alone (`--crash 'fsync record / state S'`: 2 processes) shows.
    """
    argv, check = [str(compiled["record_upgrade"])], example_check("record_upgrade_check")
    shared, unshared = swept(argv, check), swept(argv, check, shared=False)
    assert (unshared.processes, shared.processes) == (1 + 6 * 2 + 22 * 2, 1 + 6 * 2 + 22 + 4)
    assert by_label(shared) == by_label(unshared)
    cut = Counter(s.faults[0].partition(STATE)[0] for s in shared.scenarios if s.faults)
    assert cut == {
        f"{CUT}pwrite64 record.tmp": 2,
        f"{CUT}fsync record.tmp": 11,
        f"{CUT}fsync .": 1,
        f"{CUT}fsync record": 8,
    }
    options = SweepOptions(depth=1, points=SYSCALLS, workers=1, dedup=False, tracker="keyed")
    for number in range(1, 9):
        label = f"{CUT}fsync record{STATE}{number}"
        alone = replay(Target.command(argv), check, options, [("fsync record", 1)], ALICE, cut=True, state=number)
        ran = next(s for s in shared.scenarios if s.faults == (label,))
        assert seen(alone)[1:] == seen(ran)[1:], label  # its crashes' indices are 0: named by its point
        assert alone.outcome.exit_status == (0 if number == 1 else 3)


def test_with_wal_the_kills_are_one_a_cut(compiled: dict[str, Path]) -> None:
    """With --wal: 1 + 11 x 2 + 36 restarts + 7 kills = 66 processes (95 with a kill per state), none unrecovered."""
    result = swept([str(compiled["record_upgrade"]), "--wal"], example_check("record_upgrade_check"))
    assert result.processes == 1 + 11 * 2 + 36 + 7
    assert len([s for s in result.scenarios if s.faults]) == 36
    assert all(s.outcome.exit_status == 0 and s.outcome.missing == 0 for s in result.scenarios)


def test_a_shared_state_starts_from_the_tracker_the_killed_process_left(compiled: dict[str, Path]) -> None:
    """my_loop.c (no fsync, keyless) files requests at the tracker: shared or not, every state shows the same.

    A state that did not start from the kill's tracker space would miss the requests sent
    before the cut, and its restart's re-sent request would show no duplicate. Swept under `ordered`,
    whose cuts have several states each too (the sharing is the same), in fewer processes than alice.
    """
    argv, check = [str(compiled["my_loop"]), "--no-fsync"], example_check("my_c_loop_check")
    shared = swept(argv, check, "keyless", nemesis=ORDERED)
    unshared = swept(argv, check, "keyless", shared=False, nemesis=ORDERED)
    assert by_label(shared) == by_label(unshared)
    states = len([s for s in shared.scenarios if s.faults])
    kills = len({s.faults[0].partition(STATE)[0] for s in shared.scenarios if s.faults})
    assert states > kills  # some cut has several states: some kill is shared
    assert unshared.processes - shared.processes == states - kills
    assert any(s.outcome.dups for s in shared.scenarios if s.faults)


def made(folder: Path, space: Path) -> None:
    """A scenario folder after a kill: its work directory, a journal with its start copy, a log; a tracker space."""
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "live").write_text("killed here")
    (folder / "journal-1.jsonl").write_text('{"op": "create", "file": "a"}\n')
    (folder / "journal-1.jsonl.start").mkdir()
    (folder / "journal-1.jsonl.start" / "old").write_text("old")
    (folder / "points-1.log").write_text("write a\n")
    with closing(sqlite3.connect(space)) as db:
        db.execute("CREATE TABLE records (id INTEGER)")
        db.execute("INSERT INTO records VALUES (7)")
        db.commit()


def fresh(folder: Path) -> None:
    (folder / "work").mkdir(parents=True)


def test_once_kills_for_the_first_state_and_copies_the_kill_s_leftovers_for_the_others(tmp_path: Path) -> None:
    """3 states: one kill; the 2nd and 3rd get its files (not its work folder) and its space; then nothing is kept."""
    kept = cuts.Cuts(tmp_path / "cuts")
    kills: list[Path] = []

    def end(folder: Path, space: Path) -> None:
        kills.append(folder)
        made(folder, space)

    for n in (1, 2, 3):
        folder, space = tmp_path / f"s{n}", tmp_path / f"s{n}.sqlite3"
        if n > 1:
            fresh(folder)
        kept.once("cut", folder, space, partial(end, folder, space), lambda: 3)
        assert (folder / "journal-1.jsonl.start" / "old").read_text() == "old"
        assert (folder / "points-1.log").read_text() == "write a\n"
        with closing(sqlite3.connect(space)) as db:
            assert db.execute("SELECT id FROM records").fetchall() == [(7,)]
    assert kills == [tmp_path / "s1"]
    assert not (tmp_path / "s2" / "work" / "live").exists()  # the strike lays the state's disk out itself
    assert not any((tmp_path / "cuts").iterdir())  # the last state took what was kept: it is gone
    folder, space = tmp_path / "s4", tmp_path / "s4.sqlite3"
    kept.once("cut", folder, space, lambda: end(folder, space), lambda: 3)  # a state past the count: kills again
    assert kills == [tmp_path / "s1", folder]
    kept.close()


def test_states_taken_at_once_by_several_threads_share_one_kill(tmp_path: Path) -> None:
    kept = cuts.Cuts(tmp_path / "cuts")
    kills: list[int] = []
    lock = threading.Lock()

    def state(n: int) -> None:
        folder, space = tmp_path / f"s{n}", tmp_path / f"s{n}.sqlite3"
        fresh(folder)

        def end() -> None:
            with lock:
                kills.append(n)
            (folder / "work").rmdir()
            made(folder, space)

        kept.once("cut", folder, space, end, lambda: 6)

    threads = [threading.Thread(target=state, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(kills) == 1
    assert all((tmp_path / f"s{n}" / "points-1.log").exists() for n in range(6))
    kept.close()


def test_unshared_kills_for_every_state_and_other_cuts_are_apart(tmp_path: Path) -> None:
    """Inside `unshared` a runner's cuts run every kill; two cuts never share one."""
    with cuts.unshared():
        assert not cuts.sharing()
        alone = cuts.Cuts(tmp_path / "a", cuts.sharing())
    assert cuts.sharing()
    kills: list[str] = []
    for cut in ("x", "x", "y"):
        alone.once(cut, tmp_path, None, partial(kills.append, cut), lambda: 2)
    assert kills == ["x", "x", "y"]
    shared = cuts.Cuts(tmp_path / "b")
    kills.clear()
    for n, cut in enumerate(("x", "y", "x", "y")):
        folder = tmp_path / f"t{n}"
        folder.mkdir()

        def end(c: str = cut, f: Path = folder) -> None:
            kills.append(c)
            (f / "log").write_text(c)

        shared.once(cut, folder, None, end, lambda: 2)
        assert (folder / "log").read_text() == cut
    assert kills == ["x", "y"]
