"""Running one scenario: a fresh work directory, each process in turn (started or forked), the check.

A crashed process must have died by SIGKILL at exactly the point it was to die at, and a last
process must exit 0; anything else is the program's failure (TargetFailed) or a sign that its
points do not depend only on what is on disk (SweepError). The worker threads of the pool
fork their processes from one zygote when the target can be forked (zygote.py), at most
`options.workers` processes at a time whatever the number of threads (`_slots`). A scenario of
the fault `pause` (two live processes, which may also stop by themselves) is pausing.py's.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

from crashsweep.realsweep import histories
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis, process_env
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.process import cuts, forked_check, grouped, pausing, scratch, trackers, zygotes
from crashsweep.realsweep.process.output import ending, said
from crashsweep.realsweep.process.snapshots import Snapshots, read_counters
from crashsweep.realsweep.process.stage import FaultStage
from crashsweep.realsweep.process.zygote import Zygote, ZygoteError
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.realsweep.values import (
    CANNOT_RECOVER,
    Check,
    Crash,
    Outcome,
    Scenario,
    ScenarioResult,
    SweepError,
    SweepOptions,
    Target,
    TargetFailed,
)
from crashsweep.realsweep.world import capture, digest, restore

TRACKER_URL = "CRASHSWEEP_TRACKER_URL"
WORKDIR = "CRASHSWEEP_WORKDIR"
CRASH_STATUSES = (-9, crashpoint.KILLED_STATUS)


@dataclass(frozen=True)
class Live:
    """Where a running process's world is: what a snapshot reads while the process waits at a point."""

    workdir: Path
    space: Path | None
    points_log: Path
    counters_log: Path


AtPoint = Callable[[int, Live], None]
"""Called while the process waits at its point `index` (from 1), stopped: read its world there."""


@dataclass(frozen=True)
class Step:
    """One process run from a saved world: the points it passed, its counters, where its world is now."""

    points: tuple[str, ...]
    counters: Mapping[str, int]
    folder: Path
    workdir: Path
    space: Path | None
    tracker: TrackerClient | None
    unreached: bool
    snapshots: int = 0
    """How many points it paused at for `at_point` (0 for a program that ignores the protocol)."""
    pauses: tuple[tuple[int, str], ...] = ()
    """Its pauses (crashpoint.pause: a fault's chances that are no crash point): (points passed before, name)."""
    stuck: str = ""
    """Why it can never go on (it exited with crashpoint.STUCK_STATUS: its last line; or it could not
    recover: `ending`), "" otherwise."""
    exit_status: int = 0
    """The status a restart that could not recover exited with (spec/POINTS.md 5); 0 otherwise."""


class Runner:
    """Runs scenarios: fresh directories, subprocesses, the check."""

    def __init__(
        self,
        target: Target,
        check: Check,
        options: SweepOptions,
        root: Path,
        service: ServiceProcess | None,
        nemesis: Nemesis | None = None,
    ) -> None:
        self.target, self.check, self.options, self.root, self.service = target, check, options, root, service
        self.nemesis = nemesis or Nemesis()
        self.processes = 0
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(options.workers)
        self._zygote_lock = threading.Lock()  # the first worker starts the zygote; the others wait for it
        self._started: Zygote | None = None
        self._warming: threading.Thread | None = None
        # What a zygote forks for each process: the program's entry point, or under the syscall
        # tracer the tracer's shim (which forks and execs the program itself); None: every process started.
        self._forked = _forked(target, options)
        self.forks = options.spawn == "fork" and self._forked is not None and hasattr(os, "fork")
        self._checks_fork = self.forks and not options.points.syscalls
        """Whether the check runs in a child of the zygote: one that imported the program (not the shim's)."""
        self._names = itertools.count(1)
        self._groups = grouped.Groups()
        """The groups of the processes started from a command line now running (`halt` kills them)."""
        self._argv = _argv(target, options)
        self._env = {**os.environ, **target.env, **self.nemesis.env(), **options.points.env()}
        """Every process's environment before its own variables: read once (os.environ decodes each read)."""
        self._upgraded = None if target.upgrade is None else _argv(target.upgrade, options)
        """The restarts' command line when they run an upgrade (spec/RETRIES.md section 2)."""
        self._first_exec: float | None = None
        self.cuts = cuts.Cuts(root / "cuts", cuts.sharing())
        """The kills the crash states of one power cut share (cuts.py)."""

    def warm(self) -> None:
        """Start the zygote now, on a thread of its own, when processes are forked from one.

        Its interpreter start and imports then overlap whatever the caller starts meanwhile
        (the tracker service); the first process waits for it (`_zygote`'s lock). A zygote that
        fails to start here is started again by the first process, which reports the error.
        """
        if self.forks:
            self._warming = threading.Thread(target=self._try_zygote, name="zygote-start", daemon=True)
            self._warming.start()

    def first_start(self) -> float | None:
        """When the first process of the program started (time.monotonic), None before it has.

        A forked process starts once the zygote has imported the program and warmed it, so what
        comes before is the sweep's setup (the tracker service, the interpreter, the imports).
        """
        with self._zygote_lock:
            zygote = self._started
        starts = [t for t in (self._first_exec, None if zygote is None else zygote.first_fork) if t is not None]
        return min(starts, default=None)

    def _try_zygote(self) -> None:
        with contextlib.suppress(SweepError):
            self._zygote()

    def close(self) -> None:
        """Stop the zygote (once it has started, if it was starting)."""
        if self._warming is not None:
            self._warming.join()
        with self._zygote_lock:
            zygote, self._started = self._started, None
        if zygote is not None:
            zygotes.ended(zygote)  # kept for the next sweep of the program while sweeps share zygotes
        self.cuts.close()

    def _zygote(self) -> Zygote:
        """The zygote every worker thread forks its processes from, started on first use."""
        with self._zygote_lock:
            if self._started is None:
                assert self._forked is not None
                log = self.root / "zygote.txt"
                env = {**os.environ, **self.target.env, **self.options.points.env()}  # auto: hooks preloaded
                entry, _, flags = self._forked
                try:
                    self._started = zygotes.started(entry, env, log, flags=flags)
                except ZygoteError as error:
                    raise SweepError(str(error)) from None
            return self._started

    def run(self, crashes: tuple[Crash, ...], fault: Fault | None = None, *, worlds: bool = False) -> ScenarioResult:
        """Run one scenario from a fresh work directory: each crash in turn, then a process to the end.

        A `fault` (a scenario of one move, with no crash) is suffered by its one process, or
        is carried out by its kind: a scenario of its own (pause), a process it ends (power loss).
        `worlds`: each process's `fresh_id()` derives from the digest of the world it starts
        from, as in a merging sweep (else it is random): two runs of a deterministic program
        from the same world then send the same IDs (sweep.determinism).
        """
        alone = None if fault is None else fault.alone(self)
        if alone is not None:
            return alone
        name = "s" + "".join(f"-{c.index}" for c in crashes) + ("" if fault is None else f"-f{fault.code}")
        folder, workdir, env, tracker = self.prepare(name)
        if fault is not None:
            env.update(fault.env())
        space = None if self.service is None else self.service.root / f"{name}.sqlite3"

        def started(env: dict[str, str]) -> dict[str, str]:
            if not worlds:
                return env
            world = capture(workdir, space if space is not None and space.exists() else None)
            key = self.options.state_key  # the key a merging sweep names worlds by (a lock's pid blanked)
            return {**env, crashpoint.WORLD: digest(world if key is None else key(world))}

        for number, crash in enumerate(crashes, start=1):
            _, points = self.ended(folder, workdir, started(env), number, crash.crash_at, crashes)
            if points.count(crash.point) < crash.occurrence:  # it ended normally before its point
                return self._unreached(folder, crashes, number, points)
        first = len(crashes) + 1
        if fault is not None and fault.strike(FaultStage(self, folder, workdir, env, first, crashes, space)):
            cut = self.passed(folder, first)
            if not fault.reached(cut):  # it ended before its point: no cut there (a re-run's)
                return self._unreached(folder, crashes, first, cut, (fault.label,))
            first += 1  # the fault ended that process (a power cut)
        status, points = self.ended(folder, workdir, started(env), first, 0, crashes, restart=first > 1)
        outcome = self.finish(Scenario(crashes, workdir, tracker))
        stuck, failed = ending(status, folder / f"output-{first}.txt")  # stuck or failed: it never finishes
        outcome = replace(outcome, stuck=stuck, exit_status=failed) if stuck else outcome
        faults = () if fault is None else (fault.label,)
        logged = folder / f"pauses-{first}.log"
        pauses = crashpoint.read_pauses(logged.read_text(encoding="utf-8")) if logged.exists() else ()
        counted = _counted(read_counters(folder / "counters.log"), failed)
        result = ScenarioResult(crashes, outcome, counted, tuple(points), faults=faults, pauses=pauses)
        if self.options.keep:  # the scenario's history beside its files (spec/HISTORY.md)
            histories.keep(result, folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
        return result

    def pause(self, fault: Fault) -> ScenarioResult:
        """A scenario of two live processes (spec/FAULTS.md section 7): the pause kind's (faults/pause.py)."""
        return pausing.run(self, fault)

    def prepare(self, name: str) -> tuple[Path, Path, dict[str, str], TrackerClient | None]:
        """A scenario's fresh folder, work directory, environment and tracker space, all named `name`."""
        if self.stop.is_set():
            raise SweepError("stopped")
        folder = self.root / "scenarios" / name
        workdir = folder / "work"
        workdir.mkdir(parents=True, exist_ok=False)
        env = {**self._env, WORKDIR: str(workdir)}
        env[crashpoint.COUNTERS_LOG] = str(folder / "counters.log")
        tracker = None
        if self.service is not None:
            env[TRACKER_URL] = self.service.space_url(name)
            tracker = TrackerClient(env[TRACKER_URL])
        return folder, workdir, env, tracker

    def checked(self, scenario: Scenario) -> Outcome:
        """The check's outcome of `scenario`, unchecked (finish and the merging sweep's units judge it).

        A check named by its spec (forked_check.ForkedCheck) runs in a child of this runner's
        zygote where it forks from one (the program's modules are imported there), else here.
        """
        with forked_check.forking(self._zygote if self._checks_fork else None):
            return self.check(scenario)

    def finish(self, scenario: Scenario) -> Outcome:
        """The check's outcome of a finished scenario (a failing or wrong check is the sweep's error)."""
        crashes = scenario.crashes
        try:
            outcome = self.checked(scenario)
        except Exception as error:  # the user's check: report which scenario it failed on
            raise SweepError(f"{_where(crashes, 0)}: the check failed: {type(error).__name__}: {error}") from error
        if not isinstance(outcome, Outcome):
            raise SweepError(f"the check returned {type(outcome).__name__}, not crashsweep.realsweep.sweep.Outcome")
        return outcome

    def step(
        self,
        world: Path,
        digest_: str,
        path: tuple[Crash, ...],
        crash: Crash | None,
        at_point: AtPoint | None = None,
        faults: tuple[Fault, ...] = (),
    ) -> Step:
        """Run one process from the world saved in `world` (digest `digest_`), reached by the crashes `path`.

        It suffers `faults` (in-process ones, told by the nemesis) and dies at `crash` (None:
        it runs to the end); `fresh_id()` in it derives its IDs from the digest. With
        `at_point` it pauses at every point while `at_point` reads its world (snapshots.py).
        The caller reads or saves the world it left, then removes `step.folder`.
        """
        if self.stop.is_set():
            raise SweepError("stopped")
        with self._lock:
            name = f"p{next(self._names)}"
        folder = self.root / "processes" / name
        workdir = folder / "work"
        folder.mkdir(parents=True)
        env = {**self._env, WORKDIR: str(workdir), crashpoint.WORLD: digest_}
        env.update(process_env(faults))
        env[crashpoint.COUNTERS_LOG] = str(folder / "counters.log")
        env[crashpoint.PAUSES_LOG] = str(folder / "pauses.log")
        space, tracker = None, None
        if self.service is not None:
            space = self.service.root / f"{name}.sqlite3"
            env[TRACKER_URL] = self.service.space_url(name)
            tracker = TrackerClient(env[TRACKER_URL])
        restore(world, workdir, space or folder / "no-tracker.sqlite3")
        crashes = path if crash is None else (*path, crash)
        number = len(crashes) + (crash is None)
        taker = None
        if at_point is not None:
            live = Live(workdir, space, folder / f"points-{number}.log", folder / "counters.log")
            taker = Snapshots(folder / "snap", lambda index: at_point(index, live))
            env[crashpoint.SNAPSHOT] = str(taker.folder)
        restart = crash is None and number > 1  # run to its end after a crash: its failure is the scenario's end
        try:
            status, points = self.ended(
                folder, workdir, env, number, crash.crash_at if crash else 0, crashes, restart=restart
            )
        finally:
            taken = 0 if taker is None else taker.close()
        stuck, failed = ending(status, folder / f"output-{number}.txt") if crash is None else ("", 0)
        unreached = crash is not None and points.count(crash.point) < crash.occurrence
        counters = _counted(read_counters(folder / "counters.log"), failed)
        logged = folder / "pauses.log"
        pauses = crashpoint.read_pauses(logged.read_text(encoding="utf-8")) if logged.exists() else ()
        return Step(tuple(points), counters, folder, workdir, space, tracker, unreached, taken, pauses, stuck, failed)

    def passed(self, folder: Path, number: int) -> list[str]:
        """The points process `number` of the scenario in `folder` passed, from its points log."""
        return _logged(folder / f"points-{number}.log")

    def _unreached(
        self, folder: Path, crashes: tuple[Crash, ...], number: int, points: list[str], faults: tuple[str, ...] = ()
    ) -> ScenarioResult:
        """A scenario whose process `number` ended normally without passing its point (`points`: those it passed)."""
        counters = read_counters(folder / "counters.log")
        result = ScenarioResult(crashes, Outcome(), counters, tuple(points), unreached=number, faults=faults)
        if not self.options.keep:
            shutil.rmtree(folder, ignore_errors=True)
        return result

    def ended(
        self,
        folder: Path,
        workdir: Path,
        env: dict[str, str],
        number: int,
        crash_at: int | str,
        crashes: tuple[Crash, ...],
        *,
        stops: bool = False,
        restart: bool = False,
    ) -> tuple[int, list[str]]:
        """Run process `number` of a scenario, dying at `crash_at` ("k:name"; 0: none); its exit status and points.

        It may end stuck (crashpoint.STUCK_STATUS: it can never go on), which ends its scenario.
        `stops`: it may also stop by itself (crashpoint.STOPPED_STATUS), as beside a second live
        process. Such a process takes no slot of `_slots`: the two processes of a pause live at
        once, one held while the other runs, and a slot each could leave every slot to a held
        process whose partner waits for one (with one worker, always).
        `restart`: it is the last process, after a crash or a power cut; any status it exits with
        is its scenario's end (`ending`: one that cannot recover, spec/POINTS.md 5). Any other
        process that exits with a status it should not is the program's failure (TargetFailed).
        """
        log = folder / f"points-{number}.log"
        env = {**env, crashpoint.POINTS_LOG: str(log), crashpoint.CRASH_AT: str(crash_at)}
        env.setdefault(crashpoint.PAUSES_LOG, str(folder / f"pauses-{number}.log"))
        with nullcontext() if stops else self._slots:  # at most `workers` crash-only processes at a time
            status = self._start(folder, workdir, env, number, crashes)
        with self._lock:
            self.processes += 1
        points = _logged(log)
        if status == crashpoint.REFUSED_STATUS:  # the program refuses the sweep itself: no finding, stop
            raise SweepError(f"{_where(crashes, number)}: {said(folder / f'output-{number}.txt')}")
        ends = (0, crashpoint.STUCK_STATUS, crashpoint.STOPPED_STATUS) if stops else (0, crashpoint.STUCK_STATUS)
        expected = (*CRASH_STATUSES, *ends) if crash_at else ends
        if crash_at and status in CRASH_STATUSES and not _reached(points, str(crash_at)):
            raise TargetFailed(f"{_where(crashes, number)}: killed by SIGKILL before its point {crash_at!r}")
        if status not in expected and not (restart and not crash_at):
            raise TargetFailed(
                f"{_where(crashes, number)}: exited with status {status}"
                + (f" after {len(points)} point(s), before point {crash_at}" if crash_at else "")
                + f": {said(folder / f'output-{number}.txt')}"
            )
        return status, points

    def _start(self, folder: Path, workdir: Path, env: dict[str, str], number: int, crashes: tuple[Crash, ...]) -> int:
        """Run process `number` (forked from the zygote, or started from the target's argv); its exit status.

        A restart runs the target's upgrade when it has one: forked from the same zygote when it
        is the same entry point (other arguments), else started from its own command line.
        """
        version = self.target.version(number)
        forked = self._forked if version is self.target else _forked(version, self.options)
        if not self.forks or forked is None or self._forked is None or forked[0] != self._forked[0]:
            return self._exec(folder, workdir, {**env, **version.env}, number, crashes)
        if self.options.points.syscalls:  # the program's own environment, as a started shim passes it on
            env = {**env, **version.env}
        try:
            output = folder / f"output-{number}.txt"
            return self._zygote().run(list(forked[1]), workdir, env, output, self.options.timeout)
        except TimeoutError:
            raise TargetFailed(
                f"{_where(crashes, number)}: still running after {self.options.timeout:g} s (a hang?)"
            ) from None
        except ZygoteError as error:
            raise SweepError(str(error)) from None

    def _exec(self, folder: Path, workdir: Path, env: dict[str, str], number: int, crashes: tuple[Crash, ...]) -> int:
        """Start process `number` from the target's argv; its exit status, its descendants gone (grouped.py)."""
        argv = self._argv if number == 1 or self._upgraded is None else self._upgraded
        output = folder / f"output-{number}.txt"
        if self._first_exec is None:
            self._first_exec = time.monotonic()
        try:
            return grouped.run(argv, workdir, env, output, self.options.timeout, self._groups, (WORKDIR, str(workdir)))
        except subprocess.TimeoutExpired:
            raise TargetFailed(
                f"{_where(crashes, number)}: still running after {self.options.timeout:g} s (a hang?)"
            ) from None
        except OSError as error:
            raise SweepError(f"cannot start {argv[0]!r}: {error.strerror or error}") from None

    def halt(self) -> None:
        """Stop: no process starts any more, and those running are killed with their descendants.

        A swept process leads a group of its own, which a Ctrl-C at the terminal does not reach.
        """
        self.stop.set()
        self._groups.end_all()
        with self._zygote_lock:
            zygote = self._started
        if zygote is not None:
            zygote.halt()


def _argv(target: Target, options: SweepOptions) -> tuple[str, ...]:
    """The command line of one process that is not forked: the target's, or under the points' tracer.

    With `auto` points a Python entry point runs through the probe's entry module, which
    installs the hooks that find them (probe/auto.py) before calling it.
    """
    if options.points.syscalls:
        from crashsweep.realsweep.syscalls import command

        return command.wrap(target.argv)
    if options.points.auto and target.fork is not None:
        entry = (sys.executable, *_flags(target), "-m", "crashsweep.realsweep.probe.entry")
        return (*entry, target.fork, *target.fork_argv)
    return target.argv


FLAGS = frozenset({"-S", "-s", "-E", "-I", "-B", "-O", "-OO", "-u"})
"""The interpreter's options a zygote takes over from the program's command line (none takes an argument)."""


def _forked(target: Target, options: SweepOptions) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """What a zygote forks for a process of `target`: entry point, argv, the zygote's interpreter options.

    None where none can be forked. Under the syscall tracer it is the tracer's shim, whatever the
    program (it execs the program under ptrace), run as crashsweep runs: forked, it costs no
    interpreter start of its own.
    """
    if options.points.syscalls:
        from crashsweep.realsweep.syscalls import command

        return command.ENTRY, command.shim_argv(target.argv), ()
    if target.fork is None:
        return None
    return target.fork, target.fork_argv, _flags(target)


def _flags(target: Target) -> tuple[str, ...]:
    """The options before `-m` of a target that runs this interpreter (`python -S -m ...`: ("-S",)).

    The zygote starts as the program would (the reference loop's `-S` spares it site-packages).
    """
    argv = target.argv
    if not argv or argv[0] != sys.executable or "-m" not in argv:
        return ()
    return tuple(flag for flag in argv[1 : argv.index("-m")] if flag in FLAGS)


def _logged(log: Path) -> list[str]:
    """The points a process passed, from its points log (none when it wrote none)."""
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _counted(counters: Mapping[str, int], failed: int) -> Mapping[str, int]:
    """A scenario's counters, with CANNOT_RECOVER when its restart could not recover (summed as every counter is)."""
    return {**counters, CANNOT_RECOVER: 1} if failed else counters


def _where(crashes: tuple[Crash, ...], number: int) -> str:
    """The scenario (and process, from 1) in words."""
    where = f"scenario {','.join(str(c.index) for c in crashes)}" if crashes else "the uninterrupted run"
    return f"{where}, process {number}" if number else where


def _reached(points: list[str], crash_at: str) -> bool:
    """Did the listed points include the crash point "k:name" (the k-th pass of name)?"""
    occurrence, _, name = crash_at.partition(":")
    return points.count(name) >= int(occurrence)


def check_options(options: SweepOptions) -> None:
    """Refuse options no engine can run, before any process starts."""
    if options.depth < 1:
        raise SweepError(f"depth must be at least 1, got {options.depth}")
    if options.spawn not in ("fork", "exec"):
        raise SweepError(f"spawn must be fork or exec, got {options.spawn!r}")
    if options.workers < 1:
        raise SweepError(f"workers must be at least 1, got {options.workers}")
    if options.ran and (options.dedup or options.keep):
        raise SweepError("scenarios already run are taken by a sweep of every scenario that keeps no folder")


def check_points(target: Target, options: SweepOptions) -> None:
    """Refuse points the target cannot give: auto points need a Python entry point, syscalls the tracer."""
    if options.points.auto and target.fork is None:
        raise SweepError(
            f"--points auto finds the effects of a Python entry point (module:function); {target.label!r} is"
            " a command: give --points syscalls"
        )
    if options.points.syscalls:
        from crashsweep.realsweep.syscalls import command

        command.check()


@contextmanager
def runner(target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None = None) -> Iterator[Runner]:
    """A runner in a new or empty root folder, with its tracker service when the options ask for one."""
    check_options(options)
    check_points(target, options)
    if options.root is None:
        root = scratch.folder()
    else:
        root = options.root
        if root.exists() and any(root.iterdir()):
            raise SweepError(f"{root}: not empty; give a new or empty folder to keep the sweep's files in")
        root.mkdir(parents=True, exist_ok=True)
    try:
        with ExitStack() as stack:
            made = Runner(target, check, options, root, None, nemesis)
            stack.callback(made.close)
            made.warm()  # the zygote's interpreter starts while the tracker service's does
            if options.tracker is not None:
                made.service = stack.enter_context(trackers.service(root / "tracker", options.tracker))
            yield made
    finally:
        if options.root is None:
            scratch.release(root, remove=not options.keep)
        elif not options.keep:
            shutil.rmtree(root, ignore_errors=True)
