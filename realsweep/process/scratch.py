"""Where a sweep keeps its scratch files: a memory-backed folder (tmpfs) when the machine has one.

A sweep writes thousands of short-lived work directories, saved worlds and tracker spaces,
and every process of a durable loop fsyncs each save (the file and its folder), and the
tracker commits each write. On a disk each fsync waits for the device (about a millisecond
here); on tmpfs it returns at once. Nothing of what the sweep checks depends on it: a crash
the sweep makes is a process killed by SIGKILL, after which everything the process wrote
is in the kernel whatever the file system (the sweep does not simulate a power cut, see
crashpoint.py), and the calls themselves (write, fsync, rename) are still made. So a sweep
whose folder the user did not choose (`--keep DIR`) works in a new folder under
`/dev/shm` when that is a tmpfs mount with room to spare, and else where `tempfile`
puts temporary folders. A TMPDIR set in the environment is the user's choice and wins.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SHM = Path("/dev/shm")
MOUNTS = Path("/proc/mounts")
ROOM = 1 << 30
"""The least free space (bytes) a tmpfs must have to hold a sweep's worlds: Docker's default
/dev/shm is 64 MiB, which a deep sweep could fill."""


def folder(prefix: str = "crashsweep-") -> Path:
    """A new, empty folder for a sweep's scratch files; see the module docstring."""
    base = None if os.environ.get("TMPDIR") else memory_base()
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def memory_base(candidate: Path = SHM, mounts: Path = MOUNTS, room: int = ROOM) -> Path | None:
    """`candidate` when it is a writable tmpfs mount point with `room` bytes free; else None."""
    try:
        table = mounts.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not is_tmpfs(table, candidate) or not os.access(candidate, os.W_OK | os.X_OK):
        return None
    try:
        stats = os.statvfs(candidate)
    except OSError:
        return None
    return candidate if stats.f_bavail * stats.f_frsize >= room else None


def is_tmpfs(table: str, mount_point: Path) -> bool:
    """Whether the mount table (/proc/mounts' format) mounts a tmpfs at `mount_point` (the last mount wins)."""
    found = False
    for line in table.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1] == str(mount_point):
            found = fields[2] == "tmpfs"
    return found
