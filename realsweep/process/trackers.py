"""Tracker services shared by the sweeps of one process: one interpreter started, not one per sweep.

A sweep against a tracker starts the tracker service (crashsweep.realsweep.tracker.service), a
process of its own with its databases in the sweep's folder, and stops it at its end: about 60 ms
of CPU each time, most of it the interpreter's start and imports. Within `zygotes.shared()` the
service is kept instead, like the sweep's zygote: at the sweep's end it closes its databases
(the sweep's folder is then complete on disk, kept or removed as before), and the next sweep
against a tracker of the same mode moves it to its own folder (the service's control channel,
crashsweep.realsweep.tracker.control) rather than start another. A kept service that does not
answer is stopped, and a new one started.

What a scenario sees does not change: it still has a space of its own in its sweep's folder,
and a service that moved holds no database of an earlier sweep open.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crashsweep.realsweep.process import zygotes
from crashsweep.realsweep.tracker.service import ServiceProcess


@contextmanager
def service(root: Path, mode: str) -> Iterator[ServiceProcess]:
    """A tracker service in `mode` with its databases in `root`: a kept one moved there, else a new one.

    At the block's end it is kept for the next sweep while sweeps share (zygotes.shared), its
    databases closed first; else it is stopped.
    """
    started = _kept(root, mode)
    if started is None:
        started = ServiceProcess(root, mode, control=zygotes.sharing()).__enter__()
    try:
        yield started
    finally:
        if started.control and zygotes.sharing() and started.release():
            zygotes.keep(started)
        else:
            started.close()


def _kept(root: Path, mode: str) -> ServiceProcess | None:
    """A kept service of `mode`, moved to `root`; None if none is kept (or none moved)."""
    while (kept := zygotes.take(ServiceProcess.key_of(sys.executable, mode))) is not None:
        assert isinstance(kept, ServiceProcess)
        if kept.root_at(root):
            return kept
        kept.close()
    return None
