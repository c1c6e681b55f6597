"""The zygote itself (zygote.py is the parent's side): fork a child per request, reap it, reply.

`python -m crashsweep.realsweep.process.zygote_server module:function` imports the entry point's module
(and with it the program's own imports), freezes its objects (gc.freeze: a child's collections
never touch, and so never copy, the pages it shares with the zygote), then serves the protocol
of zygote.py on its stdin and stdout until stdin closes and every child is reaped. For each
request it calls the module's `zygote_warm(argv)` (WARM) if there is one, and each warm-up
the program's imports registered (warming.py: a framework adapter's), forks, and in the
child becomes the requested process (its descriptors, work directory, environment and
argv) and runs the entry point; SIGCHLD wakes it (a wakeup pipe) to reap and reply. A
request that names another entry point (`entry`: the sweep's check, forked_check.py) is
forked without those warm-ups, which are the program's, and its child runs that entry point
instead; the zygote imports that entry point's module itself on the first such request
(crashsweep's own, with no effect at import), so that its children do not each import it.

It imports no more than it needs, and above all not threading: once imported, threading's
fork handler runs in every forked child (Python code that reinitialises its locks and its
table of threads), which cost each child about half a millisecond and a hundred copied
pages. A program that imports threading itself still pays that, and is served all the same.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import sys
from collections.abc import Sequence
from typing import Any

from crashsweep.realsweep.process import descendants, lifeline, warming
from crashsweep.realsweep.process.imported import Imported

WARM = "zygote_warm"
"""The optional function of the entry point's module the zygote calls with each request's argv before forking."""
REUSE = "reuse"
"""A request's field that asks whether the zygote can serve another sweep, and names the file its output goes to
from then on ("": only ask)."""


def _child(function: Any, request: dict[str, Any], inherited: Sequence[int]) -> None:
    """In the forked child: become the requested process, run the entry point, exit. Never returns.

    `function` is the request's own entry point when it names one (None: it could not be
    loaded in the zygote, so the child loads it and reports why it cannot), else the zygote's.
    """
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        lifeline.die_with_parent(request["zygote"])  # killed with the zygote (as the zygote ends with its stdin)
        descendants.lead_group()  # its forks are killed with its group when it ends (descendants.py)
        descendants.subreaper()  # its orphans stay its own, then the zygote's: never re-parented to PID 1
        for fd in inherited:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        _become(request["env"])
        if "entry" in request:  # not a process of the program: none of its crash points or hooks
            if function is None:
                from crashsweep.realsweep.probe.entry import load

                function = load(request["entry"])
        else:
            from crashsweep.realsweep.probe import crashpoint

            crashpoint.reset()
            if "CRASHSWEEP_POINTS" in os.environ:  # --points auto (probe/modes.py): its hooks, imported by main
                from crashsweep.realsweep.probe import auto

                auto.install(function)
        sys.argv = [function.__module__, *request["argv"]]
        result = function()
        status = result if isinstance(result, int) else 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except RuntimeError as error:
        status = _refused(error)
    except BaseException:
        import traceback  # only a failing child needs it: not imported in the zygote, whose memory children share

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _refused(error: RuntimeError) -> int:
    """The exit status of a child whose entry point raised `error`: REFUSED_STATUS for a SweepRefused, else 1."""
    from crashsweep.realsweep.probe import crashpoint

    if isinstance(error, crashpoint.SweepRefused):
        print(error, file=sys.stderr)
        return crashpoint.REFUSED_STATUS
    import traceback

    traceback.print_exception(error)
    return 1


def _become(changes: dict[str, str | None]) -> None:
    """Change the process's environment by `changes`: a value sets its variable, None removes it.

    A request names only the variables in which its environment differs from the one the
    zygote was started with (zygote.py; the zygote never changes its own), a few of them (its
    work directory, its logs, its tracker space): the request stays small to send and read,
    and each variable set or unset writes to memory the child shares with the zygote until
    then, which the kernel must copy page by page, so only those few are touched.
    """
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


class _Server:
    """The zygote's side: fork on each request read from stdin, reap on each SIGCHLD, reply on stdout."""

    def __init__(self, function: Any, replies: int) -> None:
        self.function, self.replies = function, replies
        self.warm = getattr(sys.modules.get(function.__module__), WARM, None)
        self.running: dict[int, int] = {}  # pid -> request id
        self.own: set[int] = set()  # the zygote's own children, started by the warm-up (a shared server): kept
        self.entries: dict[str, Any] = {}  # the other entry points requests named, loaded here (None: failed)
        self.imported = Imported()  # the files of what it imported: a changed one ends its reuse (imported.py)
        self.imported.note()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a handler, so that the wakeup fd is written
        signal.set_wakeup_fd(self.wake_write)

    def reply(self, data: dict[str, Any]) -> None:
        os.write(self.replies, (json.dumps(data) + "\n").encode("utf-8"))

    def serve(self) -> None:
        """Until stdin closes and every child has been reaped.

        Stdin closes when the sweep is done, or has stopped or died (even by SIGKILL): then no
        one will read what the children still running do, and they are killed (SIGKILL), as
        they would be at their crash points.
        """
        stdin, buffer, open_ = sys.stdin.fileno(), b"", True
        while open_ or self.running:
            readable = select.select([stdin, self.wake_read] if open_ else [self.wake_read], [], [])[0]
            if self.wake_read in readable:
                while True:
                    try:
                        if not os.read(self.wake_read, 4096):
                            break
                    except BlockingIOError:
                        break
            self.reap()
            if stdin in readable:
                chunk = os.read(stdin, 1 << 16)
                open_ = bool(chunk)
                if not open_:
                    for pid in self.running:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    request = json.loads(line)
                    if REUSE in request:
                        self.reuse(request)
                    else:
                        self.fork(request)

    def fork(self, request: dict[str, Any]) -> None:
        function = self.function
        if "entry" in request:  # another entry point (the sweep's check): none of the program's warm-ups
            function = self.entry(request["entry"])
            warms = []
        else:
            warms = [self.warm] if self.warm is not None else []
            # Those the program's imports registered (warming.py), once: a module may name one as its own.
            warms += [warm for warm in warming.WARMERS if warm is not self.warm]
        if warms:
            before = set(descendants.children(os.getpid()))
            for warm in warms:
                with contextlib.suppress(Exception, SystemExit):  # the child meets it again, and reports it
                    warm(list(request["argv"]))
            self.own |= set(descendants.children(os.getpid())) - before  # e.g. Temporal's dev server
            self.imported.note()
        sys.stdout.flush()
        sys.stderr.flush()
        request["zygote"] = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(function, request, (self.replies, self.wake_read, self.wake_write))
        with contextlib.suppress(OSError):  # as the child does: whichever runs first, its group is its own
            os.setpgid(pid, pid)
        self.running[pid] = request["id"]
        self.reply({"id": request["id"], "pid": pid})

    def reuse(self, request: dict[str, Any]) -> None:
        """Answer whether this zygote can serve another sweep ("why": "" if it can); if so, log to `REUSE`'s file.

        It cannot while a child runs, once its warm-ups started a process of their own (a
        server whose state the last sweep left), or when a file it imported has changed.
        """
        why = ""
        if self.running:
            why = "a process of the last sweep still runs"
        elif self.own:
            why = "its warm-up started processes of its own"
        elif (path := self.imported.changed()) is not None:
            why = f"{path} changed since it was imported"
        elif request[REUSE]:
            sys.stdout.flush()
            sys.stderr.flush()
            log = os.open(request[REUSE], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.close(log)
        self.reply({"id": request["id"], "why": why})

    def entry(self, spec: str) -> Any:
        """The entry point `spec` names, loaded in the zygote on its first request; None if it cannot be.

        Its module is loaded once here rather than in every child (crashsweep's forked check:
        no effect at import), then frozen with the rest. One that fails to load is left to each
        child, which loads it again and says why in its output.
        """
        if spec not in self.entries:
            from crashsweep.realsweep.probe.entry import load

            try:
                self.entries[spec] = load(spec)
            except ValueError:
                self.entries[spec] = None
            self.imported.note()
            gc.freeze()
        return self.entries[spec]

    def reap(self) -> None:
        """Reply the status of every child that has ended, once whatever it started is gone too.

        A child that ended is looked at before it is reaped (WNOWAIT): until then its ID is
        its group's and no other process's, so killing its group reaches its own processes
        only. Then its orphans, adopted by this subreaper, are killed and reaped by PID.
        """
        while self.running:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if ended is None or ended.si_pid == 0:
                return
            pid = ended.si_pid
            if pid in self.running:
                descendants.end_group(pid)
            _, wait_status = os.waitpid(pid, 0)
            number = self.running.pop(pid, None)
            if number is not None:
                descendants.end_orphans(self.running.keys() | self.own)
                self.reply({"id": number, "status": os.waitstatus_to_exitcode(wait_status)})


def main(argv: list[str] | None = None) -> int:
    """Serve fork requests for the entry point named by the one argument, until stdin closes."""
    from crashsweep.realsweep.probe.entry import load

    args = sys.argv[1:] if argv is None else argv
    function = load(args[0])
    if "CRASHSWEEP_POINTS" in os.environ:  # --points auto: the hooks' module loaded once, here, not per child
        from crashsweep.realsweep.probe import auto  # noqa: F401
    descendants.subreaper()  # the orphans of a child that ended come here, to be killed (reap)
    replies = os.dup(1)
    os.dup2(2, 1)  # a stray print of the zygote's must not break the protocol
    server = _Server(function, replies)
    gc.freeze()  # what the zygote holds is never collected in a child: its pages stay shared, not copied
    server.reply({"ready": True})
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
