"""Snapshots: the world of a process at every crash point it passes, taken while it waits there.

A process killed at point j leaves exactly the files and tracker records it had at j (the
kill runs nothing more; what it had written is in the kernel and the tracker). So instead of
one killed process per point, one process can pause at every point while the sweep reads its
world, and then go on: one run yields the crashed worlds of all its points, as ALICE builds
crash states from one recorded trace. The protocol (crashpoint.py, CRASHSWEEP_SNAPSHOT) is
two FIFOs in `folder`: the process writes the point's index, its process ID and a newline to
`request` and waits for one byte on `answer`. Here a thread reads each request, stops the
process (SIGSTOP: from then on its other threads, if any, stand still; between the request
and the stop they may get a little further than a kill at the point would have let them),
calls `take(index)` (which reads the world, and saves it when it is new), lets it go on
(SIGCONT) and answers "k" ("x" if `take` failed: the process then fails, and `close` raises
the error).

A sweep that takes snapshots still kills for real where it must be checked: `--kill` runs one
killed process per point instead, and the tests check that both build the same graph.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path


class Snapshots:
    """The FIFOs and the thread that answers one process's snapshot requests."""

    def __init__(self, folder: Path, take: Callable[[int], None]) -> None:
        self.folder, self.take = folder, take
        folder.mkdir()
        os.mkfifo(folder / "request")
        os.mkfifo(folder / "answer")
        # Read-write ends: opening never blocks, and the process's own opens find the other end open.
        self._request = os.open(folder / "request", os.O_RDWR)
        self._answer = os.open(folder / "answer", os.O_RDWR)
        self.taken = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name="snapshots", daemon=True)
        self._thread.start()

    def close(self) -> int:
        """Stop the thread (the process has ended); how many snapshots were taken."""
        os.write(self._request, b"0\n")
        self._thread.join()
        os.close(self._request)
        os.close(self._answer)
        if self.error is not None:
            raise self.error
        return self.taken

    def _serve(self) -> None:
        buffer = b""
        while True:
            while b"\n" not in buffer:
                buffer += os.read(self._request, 4096)
            line, _, buffer = buffer.partition(b"\n")
            index, _, pid = line.decode().partition(" ")
            if index == "0":
                return
            try:
                self._take(int(index), int(pid))
            except BaseException as error:  # answered below: the waiting process must not hang
                self.error = error
                os.write(self._answer, b"x")
                continue
            os.write(self._answer, b"k")

    def _take(self, index: int, pid: int) -> None:
        """Take the snapshot of process `pid`, stopped at its point `index`."""
        os.kill(pid, signal.SIGSTOP)
        try:
            self.take(index)
            self.taken += 1
        finally:
            os.kill(pid, signal.SIGCONT)


def read_counters(path: Path) -> dict[str, int]:
    """The counters a process logged (one line per unit), summed by name."""
    counters: dict[str, int] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line:
                counters[line] = counters.get(line, 0) + 1
    return counters
