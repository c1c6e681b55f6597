"""The local engine's workers: units of work on threads, exactly one leg saving each new world.

The program is process/test_units.py's: from the empty world it passes "saved 1", "saved 2", "saved 3",
and the world at point k holds done = k (by hand).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from crashsweep.realsweep import world
from crashsweep.realsweep.engines.local import LocalWorkers
from crashsweep.realsweep.process.runner import runner
from crashsweep.realsweep.values import Completions, Crash, Outcome, SweepError, SweepOptions, Target, Unit
from tests.realsweep.process.test_units import PROGRAM, finished


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[LocalWorkers]:
    """Local workers of two threads over a runner of the program."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    target = Target.entry_point("prog:main", path=[str(tmp_path)])
    with runner(target, finished, SweepOptions(tracker=None, root=tmp_path / "root", workers=2)) as made:
        local = LocalWorkers(made)
        try:
            yield local
        finally:
            local.close()


def test_the_same_new_world_is_saved_by_one_leg_only(workers: LocalWorkers) -> None:
    """Four processes killed at point 2 from the same world: four children with one digest, one saved world."""
    empty = workers.empty()
    assert list(empty.iterdir()) == [empty / world.FILES]
    unit = Unit(0, "root", (), empty, Crash(2, "saved 2"))
    legs = [future.result() for future in [workers.leg(unit, set()) for _ in range(4)]]
    children = [leg.children[0] for leg in legs]
    assert len({child.digest for child in children}) == 1
    saved = [child.world for child in children if child.world is not None]
    assert saved == [workers.runner.root / "worlds" / "n0-2"]
    assert workers.processes() == 4


def test_a_released_world_is_removed(workers: LocalWorkers) -> None:
    """release() removes the saved folder (without --keep)."""
    empty = workers.empty()
    workers.release(empty)
    assert not empty.exists()


def test_a_whole_scenario_runs_on_the_pool(workers: LocalWorkers) -> None:
    """A scenario of one crash at point 1: two processes, the restart passes "saved 2" and "saved 3"."""
    result = workers.scenario((Crash(1, "saved 1"),)).result()
    assert result.points == ("saved 2", "saved 3")
    assert result.outcome.missing == 0
    assert workers.processes() == 2


def test_a_stopped_runner_starts_nothing(workers: LocalWorkers) -> None:
    """After stop(), a unit fails with "stopped" instead of starting a process."""
    workers.stop()
    with pytest.raises(SweepError, match="stopped"):
        workers.scenario(()).result()
    assert workers.processes() == 0


LIVE = """
import os, time
from pathlib import Path
from crashsweep.realsweep.probe.crashpoint import crashpoint

def main():
    live = Path(os.environ["LIVE_FOLDER"])
    mine = live / str(os.getpid())
    mine.touch()
    time.sleep(0.1)  # long beside a fork: the others the pool would start meanwhile are started
    seen = os.open(live.parent / "seen.txt", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(seen, f"{len(list(live.iterdir()))}\\n".encode())
    mine.unlink()
    crashpoint("done")
"""


def test_the_pool_runs_at_most_workers_processes_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight processes on a pool of two workers (four threads): each sees at most two alive, itself included."""
    (tmp_path / "live.py").write_text(LIVE)
    (tmp_path / "live").mkdir()
    monkeypatch.setenv("LIVE_FOLDER", str(tmp_path / "live"))
    target = Target.entry_point("live:main", path=[str(tmp_path)])
    options = SweepOptions(tracker=None, root=tmp_path / "root", workers=2)
    with runner(target, lambda scenario: Outcome(), options) as made:
        local = LocalWorkers(made)
        try:
            unit = Unit(0, "root", (), local.empty(), None)
            legs = [future.result() for future in [local.leg(unit, set()) for _ in range(8)]]
        finally:
            local.close()
    assert [leg.points for leg in legs] == [("done",)] * 8
    seen = [int(line) for line in (tmp_path / "seen.txt").read_text().split()]
    assert len(seen) == 8
    assert max(seen) == 2


def test_completions_hands_back_each_future_once_in_the_order_they_end() -> None:
    """Three futures ended 2, 0, 1 (one before it was added): taken back in that order, none left pending."""
    futures: list[Future[int]] = [Future() for _ in range(3)]
    futures[2].set_result(2)
    waiting: Completions[int] = Completions()
    for future in futures:
        waiting.add(future)
    futures[0].set_result(0)
    futures[1].set_exception(RuntimeError("one"))
    assert waiting.next() is futures[2]
    assert waiting.next().result() == 0
    with pytest.raises(RuntimeError, match="one"):
        waiting.next().result()
    assert waiting.pending == set()
