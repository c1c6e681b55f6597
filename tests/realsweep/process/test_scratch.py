"""Where a sweep's scratch folder goes: a tmpfs with room when there is one, else the usual temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from crashsweep.realsweep.process import scratch
from tests.realsweep.helpers import child_env

MOUNTS = """\
sysfs /sys sysfs rw,nosuid 0 0
/dev/vda / ext4 rw,relatime 0 0
shm {where} tmpfs rw,nosuid,nodev 0 0
"""


def test_a_tmpfs_mount_point_is_recognised_and_the_last_mount_wins() -> None:
    table = MOUNTS.format(where="/dev/shm")
    assert scratch.is_tmpfs(table, Path("/dev/shm"))
    assert not scratch.is_tmpfs(table, Path("/"))
    assert not scratch.is_tmpfs(table, Path("/nowhere"))
    assert not scratch.is_tmpfs(table + "/dev/vdb /dev/shm ext4 rw 0 0\n", Path("/dev/shm"))


def test_a_writable_tmpfs_with_room_is_the_base(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS.format(where=tmp_path))
    assert scratch.memory_base(tmp_path, mounts, room=1) == tmp_path


def test_a_tmpfs_without_room_is_not(tmp_path: Path) -> None:
    """Docker's 64 MiB /dev/shm could not hold a deep sweep's worlds: the disk is used instead."""
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS.format(where=tmp_path))
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    assert scratch.memory_base(tmp_path, mounts, room=free + (1 << 40)) is None


def test_a_folder_that_is_not_a_tmpfs_mount_or_unreadable_mounts_give_none(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS.format(where="/dev/shm"))
    assert scratch.memory_base(tmp_path, mounts, room=1) is None
    assert scratch.memory_base(tmp_path, tmp_path / "no-such-file", room=1) is None


def test_tmpdir_set_by_the_user_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile reads TMPDIR once; make it read it again
    made = scratch.folder()
    assert made.parent == tmp_path
    assert made.name.startswith("crashsweep-")
    assert not any(made.iterdir())


def test_without_tmpdir_the_folder_is_new_and_under_the_memory_base_when_there_is_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    made = scratch.folder()
    try:
        base = scratch.memory_base()
        assert made.parent == (base if base is not None else Path(tempfile.gettempdir()))
        assert made.is_dir()
        assert not any(made.iterdir())
    finally:
        made.rmdir()


def _holder(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process that makes a scratch folder under `tmp_path` (TMPDIR) and waits; the folder."""
    code = "import sys; from crashsweep.realsweep.process import scratch; print(scratch.folder(), flush=True); input()"
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(TMPDIR=str(tmp_path)),
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_the_folder_of_a_run_killed_by_sigkill_is_removed_by_the_next_one_and_a_live_ones_stays(
    tmp_path: Path,
) -> None:
    """Each folder's lock dies with its process: the next folder() reaps the dead run's folder, not the live one's."""
    killed, dead = _holder(tmp_path)
    living, live = _holder(tmp_path)
    try:
        killed.kill()
        killed.wait(timeout=10)
        assert dead.is_dir()
        assert scratch.reap(tmp_path, "crashsweep-") == [dead]
        assert not dead.exists()
        assert live.is_dir()
    finally:
        for process in (killed, living):
            process.kill()
            process.communicate()
    (tmp_path / "crashsweep-not-ours").mkdir()  # not named as a scratch folder: never removed
    assert scratch.reap(tmp_path, "crashsweep-") == [live]
    assert [path.name for path in tmp_path.iterdir()] == ["crashsweep-not-ours"]
