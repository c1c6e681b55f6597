"""The tracker service's control channel: a parent that keeps one service for several sweeps moves its databases.

A sweep starts a tracker service with its databases in a folder of the sweep's (service.py).
A process that sweeps more than once may keep the service between sweeps (crashsweep.realsweep.
process.trackers) instead of starting an interpreter for each: then, with `--control`, the
service reads one request a line on its standard input and answers each on its standard output:

    release         -> released     every database closed (the sweep's folder complete on disk);
                                    a request meanwhile is refused as while the service stops
    root FOLDER     -> rooted       later requests use the databases in FOLDER (made if need be)
    (end of input)                  the service stops, as on SIGTERM (the parent is gone or done)

A request it cannot carry out is answered `error ...` (one line), and the service goes on as it was.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import TextIO

from crashsweep.realsweep.tracker.server import TrackerServer
from crashsweep.realsweep.tracker.spaces import Spaces

RELEASE, ROOT = "release", "root"
RELEASED, ROOTED, ERROR = "released", "rooted", "error"


def answer(server: TrackerServer, line: str) -> str:
    """Carry out one request of the channel on `server`; its answer (one line, no newline)."""
    word, _, rest = line.rstrip("\n").partition(" ")
    if word == RELEASE:
        server.spaces.close()
        return RELEASED
    if word == ROOT and rest:
        root = Path(rest)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return f"{ERROR} cannot make {root}: {error.strerror or error}"
        old, server.spaces = server.spaces, Spaces(root, honours_keys=server.spaces.honours_keys)
        old.close()
        return ROOTED
    return f"{ERROR} unknown request {line.strip()!r}"


def listen(server: TrackerServer, requests: TextIO = sys.stdin, answers: TextIO = sys.stdout) -> threading.Thread:
    """A daemon thread that answers the channel's requests; at the end of `requests` it stops the service."""

    def loop() -> None:
        for line in requests:
            answers.write(answer(server, line) + "\n")
            answers.flush()
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=loop, name="control", daemon=True)
    thread.start()
    return thread
