"""Where a sweep's processes run: the seam between the sweep's bookkeeping and the engines.

The sweep of every scenario (sweep.py) and the merging sweep (dedup/graph.py) keep their results
and their graph in the calling process and hand out units of work: a whole scenario
(`scenario`), or one process from a saved world (`leg`, process/units.py). A `Workers` runs them and
answers with futures. `LocalWorkers` runs them on a pool of threads over one `Runner` (one
tracker service, a zygote per thread, worlds saved as folders); ray.py runs them as
Ray actor tasks on a cluster. Both give the same results, so the sweep's rows do not depend
on where it ran.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Set
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.faults.nemesis import Fault
from crashsweep.realsweep.process.runner import Runner
from crashsweep.realsweep.process.units import run_leg
from crashsweep.realsweep.values import Crash, Leg, ScenarioResult, Unit

W = TypeVar("W")
T = TypeVar("T")


class LocalWorkers:
    """Units of work on threads of this process, over one runner.

    The runner lets at most `options.workers` processes of the program run at a time; the pool
    has twice as many threads, so that while those run, other threads restore, digest and save
    the worlds of their units (work of this process, not of the program) instead of waiting.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.pool = ThreadPoolExecutor(max_workers=2 * runner.options.workers, thread_name_prefix="sweep")
        self._claimed: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Wait for the threads (the sweep is over or failed)."""
        self.pool.shutdown(wait=True, cancel_futures=True)

    def empty(self) -> Path:
        folder = self.runner.root / "worlds" / "root"
        (folder / worlds.FILES).mkdir(parents=True)
        return folder

    def leg(self, unit: Unit[Path], known: Set[str]) -> Future[Leg[Path]]:
        level = unit.level

        def claim(key: str) -> bool:
            """Exactly one leg saves each new world: the first to find it."""
            with self._lock:
                new = (key, level) not in self._claimed
                self._claimed.add((key, level))
            return new

        return self.pool.submit(run_leg, self.runner, unit, unit.world, claim, self._save)

    def _save(self, workdir: Path, space: Path | None, name: str) -> Path:
        folder = self.runner.root / "worlds" / name
        worlds.save(workdir, space, folder)
        return folder

    def scenario(self, crashes: tuple[Crash, ...], fault: Fault | None = None) -> Future[ScenarioResult]:
        return self.pool.submit(self.runner.run, crashes, fault)

    def release(self, world: Path) -> None:
        if not self.runner.options.keep:
            shutil.rmtree(world, ignore_errors=True)

    def processes(self) -> int:
        return self.runner.processes

    def first_start(self) -> float | None:
        return self.runner.first_start()

    def stop(self) -> None:
        self.runner.halt()
