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

A scratch folder must not outlive its run. The run removes it at its end, Ctrl-C and SIGTERM
included; a run killed by SIGKILL cannot, so its process holds each folder locked (flock, which
the kernel lets go of when the process dies), and every new folder first removes the folders
of its kind (named `crashsweep-*.sweep`) that no process holds any more.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

SHM = Path("/dev/shm")
MOUNTS = Path("/proc/mounts")
ROOM = 1 << 30
"""The least free space (bytes) a tmpfs must have to hold a sweep's worlds: Docker's default
/dev/shm is 64 MiB, which a deep sweep could fill."""


SUFFIX = ".sweep"
"""The end of a scratch folder's name: only such folders are ever reaped (others of crashsweep's are not)."""
_HELD: dict[Path, int] = {}


def folder(prefix: str = "crashsweep-") -> Path:
    """A new, empty folder for a sweep's scratch files, locked by this process; see the module docstring.

    It is made and locked under a name that `reap` ignores, then renamed to its own (the lock
    is the folder's, whatever its name): no other run can reap it in between.
    """
    base = None if os.environ.get("TMPDIR") else memory_base()
    reap(Path(base or tempfile.gettempdir()), prefix)
    made = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    lock = os.open(made, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    named = made.with_name(made.name + SUFFIX)
    os.rename(made, named)
    _HELD[named] = lock
    return named


def release(path: Path, *, remove: bool = True) -> None:
    """Remove the scratch folder `path` (unless not `remove`) and let go of its lock."""
    if remove:
        shutil.rmtree(path, ignore_errors=True)
    lock = _HELD.pop(path, None)
    if lock is not None:
        os.close(lock)


def reap(base: Path, prefix: str) -> list[Path]:
    """Remove the scratch folders (`prefix`*SUFFIX) in `base` that no live process holds locked; those removed."""
    removed: list[Path] = []
    try:
        candidates = [e for e in base.iterdir() if e.name.startswith(prefix) and e.name.endswith(SUFFIX)]
    except OSError:
        return removed
    for candidate in candidates:
        try:
            lock = os.open(candidate, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # not a folder, or already gone
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its run goes on
            continue
        else:
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
        finally:
            os.close(lock)
    return removed


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
