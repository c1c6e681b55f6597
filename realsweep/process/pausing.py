"""A pause for real (spec/FAULTS.md section 7): two live processes on one disk and tracker, held and let go.

A scenario of the fault `pause` (faults/pause.py, which hands it to `Runner.pause`) runs, in one fresh work
directory and tracker space:

1. process 1, held at its `index`-th crash point: it waits there on the snapshot protocol's
   FIFOs (crashpoint.py, CRASHSWEEP_SNAPSHOT) and is stopped (SIGSTOP), keeping its memory,
   its open files and its locks, and running no instruction;
2. the restart (process 2), started at once on the same disk and tracker: held in turn at its
   `wake`-th crash point, or (`wake` 0) run until it stops (it exits, or stops because its
   lock or token is refused: crashpoint.STOPPED_STATUS);
3. process 1 is let go (SIGCONT and its answer byte) and runs with its stale memory to its
   stop; then the held restart goes on to its own;
4. if the process that ended last stopped (the run unfinished, none alive), the supervisor
   restarts as after a crash (rule 6), and that process runs to the end.

The check then reads the final world; the counters are summed over every process. A scenario
whose restart ran to its stop lists the restart's points, which are the wake choices of the
point (sweep.py adds one scenario per point). A process that ends before its hold point
(its course differs from the run that listed the points) makes the scenario unreached.
"""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from crashsweep.realsweep.faults.nemesis import Fault
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.process.output import ending
from crashsweep.realsweep.process.snapshots import Snapshots, read_counters
from crashsweep.realsweep.values import Outcome, Scenario, ScenarioResult, SweepError

if TYPE_CHECKING:
    from crashsweep.realsweep.process.runner import Runner

Ended = tuple[int, list[str]]
"""A process's exit status and the points it passed."""


class Held:
    """One process of a pause scenario, run on a thread and held (waiting and stopped) at its point `at` (0: never)."""

    def __init__(
        self, runner: Runner, pool: ThreadPoolExecutor, where: tuple[Path, Path, dict[str, str]], number: int, at: int
    ) -> None:
        folder, workdir, env = where
        self.at, self.number = at, number
        self.held, self.release = threading.Event(), threading.Event()
        self.snapshots = Snapshots(folder / f"hold-{number}", self._hold)
        self.closed = False
        env = {**env, crashpoint.SNAPSHOT: str(self.snapshots.folder)}
        self.future: Future[Ended] = pool.submit(runner.ended, folder, workdir, env, number, 0, (), stops=True)
        self.future.add_done_callback(lambda _: self.held.set())  # ended: nothing more to wait for

    def _hold(self, index: int) -> None:
        """At each point (the process stopped): return at once, but at point `at` only once let go."""
        if index == self.at:
            self.held.set()
            self.release.wait()

    def wait_held(self) -> bool:
        """Wait until the process is held at its point; False when it ended without reaching it."""
        self.held.wait()
        return not self.future.done()

    def go_on(self) -> Ended:
        """Let it go on from its point (if held), wait for its end, stop the FIFOs' thread; its status and points."""
        self.release.set()
        try:
            return self.future.result()
        finally:
            self._close()

    def abandon(self) -> None:
        """After a failure elsewhere: let it go on and end, whatever its end, and free its FIFOs."""
        self.release.set()
        wait([self.future])
        self._close()

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            self.snapshots.close()


def run(runner: Runner, fault: Fault) -> ScenarioResult:
    """Run one pause scenario from a fresh work directory; see the module docstring."""
    folder, workdir, env, tracker = runner.prepare(f"s-f{fault.code}")
    where = (folder, workdir, env)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="pause") as pool:
        first = Held(runner, pool, where, 1, fault.index)
        second: Held | None = None
        try:
            if not first.wait_held():
                return _unreached(runner, folder, fault, 1, first)
            beside = (folder, workdir, {**env, **fault.restart_env()})  # a timeout's new attempt is told so
            second = Held(runner, pool, beside, 2, fault.wake)
            if fault.wake and not second.wait_held():
                return _unreached(runner, folder, fault, 2, first, second)
            _check_point(folder, 1, fault.index, fault.point)
            # Held restart: process 1 runs to its stop, then the restart; else the restart stopped first.
            ends = [first.go_on(), second.go_on()] if fault.wake else [second.go_on(), first.go_on()]
        except BaseException:
            for process in (first, second):
                if process is not None:
                    process.abandon()  # nobody waits forever on a failed scenario
            raise
    restart = ends[-1][0] == crashpoint.STOPPED_STATUS  # the last to end stopped: none lives, unfinished
    last, status = (2 if fault.wake else 1), ends[-1][0]
    if restart:
        last, status = 3, runner.ended(folder, workdir, env, 3, 0, (), restart=True)[0]
    outcome = runner.finish(Scenario((), workdir, tracker))
    if status != 0:  # the last process ended stuck (or its restart could not recover): the run never finishes
        stuck, failed = ending(status, folder / f"output-{last}.txt")
        outcome = replace(outcome, stuck=stuck, exit_status=failed)
    restart_points = ends[0][1] if not fault.wake else []
    result = ScenarioResult(
        (),
        outcome,
        read_counters(folder / "counters.log"),
        tuple(restart_points),
        faults=(fault.label,),
        beside=1 + restart,
    )
    if not runner.options.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def _check_point(folder: Path, number: int, index: int, point: str) -> None:
    """The point process `number` was held at must be the listed one: else its points depend on more than the disk."""
    log = folder / f"points-{number}.log"
    passed = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    if len(passed) < index or passed[index - 1] != point:
        held = passed[index - 1] if len(passed) >= index else "nothing"
        raise SweepError(f"process {number} was to be paused at {point!r} (point {index}), and passed {held!r} there")


def _unreached(runner: Runner, folder: Path, fault: Fault, number: int, *live: Held) -> ScenarioResult:
    """Process `number` ended before its hold point: let the others end, and report the scenario unreached."""
    for process in live:
        process.go_on()
    result = ScenarioResult(
        (), Outcome(), read_counters(folder / "counters.log"), (), faults=(fault.label,), unreached=number
    )
    if not runner.options.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return result
