"""One swept process whose crash points are its system calls: `python -m crashsweep.realsweep.syscalls.trace -- ARGV`.

The shim runs ARGV under the tracer (ptrace.py) and speaks the sweep's protocol for it, the
same as crashpoint.py does inside a Python program:

- each call that is a point (names.py; kept by CRASHSWEEP_POINTS_INCLUDE / _EXCLUDE) appends
  its name to CRASHSWEEP_POINTS_LOG at the call's entry, before the decision, in one write on
  an O_APPEND descriptor; CRASHSWEEP_WHERE_LOG gets "name<TAB>call(file or peer)";
- each call the filters dropped that touches the work folder appends "<points passed> excluded
  <name>" to CRASHSWEEP_PAUSES_LOG (a pause, no point): no crash is tried there, but what it
  leaves unsynced is what a power cut loses (names.at_risk counts it);
- CRASHSWEEP_CRASH_AT ("k:name", or a bare index n): at that call's entry every traced thread
  and child is killed by SIGKILL, the chosen one in its syscall-entry stop (the call never
  runs), and the shim then kills itself by SIGKILL: to the sweep the process died as at a
  marked point. Not chosen: the shim exits with the program's own status;
- CRASHSWEEP_SNAPSHOT=<folder> (a merging sweep's snapshots): at each point not chosen the
  shim holds the call at its entry and asks the sweep to copy the world, as crashpoint.py
  does (its own process ID is the one stopped meanwhile; the program is held by the tracer),
  so one run gives the world a kill at each of its points would leave;
- CRASHSWEEP_FS_JOURNAL=<file> (power loss): the work folder as the process found it is copied
  to <file>.start, and each call on a file under the work folder that returned appends one
  JSON line to <file> (journal.py); durable.py rebuilds from both what a power cut leaves;
- CRASHSWEEP_PERSISTENCE=<model> (power loss under a model other than strict): the journal is
  kept in memory, and at each point's entry, and once more at exit, the shim logs to the
  pauses how many crash states a cut there has (`crash states N`: persistence.py), so the
  sweep offers one scenario per state.

The program itself runs without the sweep's protocol variables (a traced Python program's own
marks pass silently: syscalls go alone) but keeps the rest (tracker URL, work folder, counters).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from crashsweep.realsweep.probe import crashpoint, fsjournal, modes
from crashsweep.realsweep.syscalls import durable, names, persistence
from crashsweep.realsweep.syscalls.calls import WATCH, Effect, decode
from crashsweep.realsweep.syscalls.journal import Journal
from crashsweep.realsweep.syscalls.names import Namer
from crashsweep.realsweep.syscalls.ptrace import Tracee, TraceError, Tracer

WORKDIR = "CRASHSWEEP_WORKDIR"
STRIPPED = (
    crashpoint.POINTS_LOG,
    crashpoint.CRASH_AT,
    crashpoint.WHERE_LOG,
    crashpoint.SNAPSHOT,
    crashpoint.PAUSES_LOG,
    fsjournal.JOURNAL,
    persistence.PERSISTENCE,
    modes.MODES_ENV,
    modes.INCLUDE_ENV,
    modes.EXCLUDE_ENV,
)
"""The protocol's variables: the shim's, not the traced program's."""


class Shim(Tracee):
    """The sweep's side of a traced program: points logged in order, the chosen call killed, the journal kept."""

    watch = WATCH  # the program stops only at the calls `decode` reads (seccomp.py)

    def __init__(self, env: Mapping[str, str], workdir: str) -> None:
        self.namer = Namer(workdir, env)
        self.filters = modes.Points.from_env(env)
        self.log, self.where = env.get(crashpoint.POINTS_LOG, ""), env.get(crashpoint.WHERE_LOG, "")
        self.pauses = env.get(crashpoint.PAUSES_LOG, "")
        self.point = crashpoint.crash_point()
        self.index = 0 if self.point is not None else crashpoint.crash_at()
        path = env.get(fsjournal.JOURNAL, "")
        self.model = env.get(persistence.PERSISTENCE, persistence.STRICT)
        counting = self.model != persistence.STRICT
        self.journal = Journal(path, self.namer) if path or counting else None
        self.start: durable.Files | None = durable.read(Path(self.namer.workdir)) if counting else None
        self.passed = 0
        self.seen: dict[str, int] = {}
        self.killed = False
        self.tracer: Tracer | None = None
        self._fds: dict[str, int] = {}

    def entry(self, pid: int, arch: int, nr: int, args: tuple[int, ...]) -> None:
        """Name the call; log it if kept (if dropped, on the work folder: as a pause); kill at the chosen one."""
        effect = decode(pid, arch, nr, args)
        if effect is None:
            return
        name = self.namer.name(effect)
        if name is not None and self._kept(effect, name):
            self.passed += 1
            self.seen[name] = self.seen.get(name, 0) + 1
            self._append(self.log, name)
            self._append(self.where, f"{name}\t{self.namer.where(effect)}")
            self.count_states(self.passed - 1)
            if self._chosen(name):
                self.killed = True
                assert self.tracer is not None
                self.tracer.kill_all()
                return
            crashpoint.hold(self.passed)  # a snapshot sweep copies the world while the call waits at its entry
        elif name is not None and any(self.namer.inside(path) for path in effect.paths):
            self._append(self.pauses, f"{self.passed} {names.EXCLUDED}{name}")
        if self.journal is not None:
            self.journal.enter(pid, effect)

    def exit(self, pid: int, rval: int) -> None:
        """Put the call that returned on record (power loss)."""
        if self.journal is not None:
            self.journal.leave(pid, rval)

    def count_states(self, passed: int) -> None:
        """Under a persistence model: log how many crash states a cut after `passed` points has (a pause)."""
        if self.start is None or self.journal is None:
            return
        found = persistence.states(self.model, self.journal.entries, self.start)
        self._append(self.pauses, f"{passed} {names.STATES}{self.model} {len(found)}")

    def _kept(self, effect: Effect, name: str) -> bool:
        what = name.partition(" ")[2]
        return self.filters.keeps(effect.call, what, what.strip("<>"), *effect.paths)

    def _chosen(self, name: str) -> bool:
        if self.point is not None:
            return self.point == (self.seen[name], name)
        return self.passed == self.index

    def _append(self, path: str, line: str) -> None:
        """One line in one write(2) on the log's O_APPEND descriptor (in the kernel before any kill)."""
        if not path:
            return
        fd = self._fds.get(path)
        if fd is None:
            fd = self._fds[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (line + "\n").encode("utf-8"))


def run(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """Trace `argv` as one swept process; the status to exit with (the shim kills itself when it killed)."""
    workdir = env.get(WORKDIR) or os.getcwd()
    shim = Shim(env, workdir)
    if shim.journal is not None:
        shutil.copytree(workdir, shim.journal.start, symlinks=True, dirs_exist_ok=True)
    program_env = {key: value for key, value in env.items() if key not in STRIPPED}
    shim.tracer = Tracer(argv, program_env, shim)
    status = shim.tracer.run()
    if shim.killed:
        crashpoint.die()
    shim.count_states(shim.passed)  # the cut at exit (spec/POINTS.md 4, rule 6)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def main(args: Sequence[str] | None = None) -> int:
    """The command line: `-- ARGV` (the `--` may be left out)."""
    argv = list(sys.argv[1:] if args is None else args)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: python -m crashsweep.realsweep.syscalls.trace -- PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    try:
        return run(argv, os.environ)
    except (TraceError, ValueError) as error:
        print(f"crashsweep trace: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
