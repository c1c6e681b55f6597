"""The fsync steps a policy adds to a save, and what a power cut leaves (spec/FAULTS.md section 6)."""

from __future__ import annotations

import pytest

from crashsweep.spec.durability import at_risk, fsync_dir, fsync_tmp, power_cut, rename, with_fsyncs, write_tmp
from crashsweep.spec.ops import LOCK, CallModel, Exit, FsyncDir, FsyncTmp, Point, Rename, WriteTmp
from crashsweep.spec.save import save, save_marker, take_lock
from crashsweep.spec.world import Checkpoint, Snapshot

OLD, NEW = Snapshot("run-1"), Snapshot("run-1", done=True)


def _points(ops: tuple[object, ...]) -> list[str]:
    return [op.name for op in ops if isinstance(op, Point)]


def test_none_is_the_seeds_save() -> None:
    """fsync "none" changes nothing: the save of SEMANTICS.md section 3, the same tuple."""
    ops = save("reply 1")
    assert with_fsyncs(ops, "none") is ops


@pytest.mark.parametrize(
    ("fsync", "points"),
    [
        ("no-dir-fsync", ["marker a: tmp written", "marker a: tmp synced", "marker a: renamed", "marker saved a"]),
        (
            "full",
            [
                "marker a: tmp written",
                "marker a: tmp synced",
                "marker a: renamed",
                "marker a: dir synced",
                "marker saved a",
            ],
        ),
    ],
)
def test_each_fsync_is_a_step_with_its_crash_point(fsync: str, points: list[str]) -> None:
    """The temp file's fsync comes before the rename, the directory's right after it."""
    ops = with_fsyncs(save_marker("a"), fsync)
    assert _points(ops) == points
    kinds = [type(op) for op in ops if not isinstance(op, Point)]
    expected = [WriteTmp, FsyncTmp, Rename] + ([FsyncDir] if fsync == "full" else [])
    assert kinds == expected


def test_saves_inside_a_model_call_are_rewritten_and_the_lock_file_is_not() -> None:
    """The final save (inside CallModel) gets its fsyncs; the lock file's save keeps two points."""
    ops = (*take_lock(), CallModel(after_reply=save("reply 1"), after_final=(*save("final"), Exit())))
    out = with_fsyncs(ops, "full")
    lock = out[: len(take_lock()) + 1]
    assert lock[:-1] == take_lock()
    assert isinstance(lock[-1], CallModel)
    assert not any(isinstance(op, FsyncTmp | FsyncDir) for op in lock)
    assert take_lock()[2] == Rename(LOCK)
    call = out[-1]
    assert isinstance(call, CallModel)
    assert _points(call.after_final) == [
        "final: tmp written",
        "final: tmp synced",
        "final: renamed",
        "final: dir synced",
    ]
    assert _points(call.after_reply)[-1] == "reply 1: dir synced"


def test_full_save_is_at_risk_until_the_directory_is_synced() -> None:
    """full: the temp file's content, then the rename, each at risk until its fsync."""
    disk = Checkpoint(OLD)
    written = write_tmp(disk, NEW)
    assert at_risk(written)
    assert power_cut(written) == Checkpoint(OLD)
    synced = fsync_tmp(written)
    assert not at_risk(synced)
    renamed = rename(synced)
    assert renamed.committed == NEW
    assert power_cut(renamed) == Checkpoint(OLD, NEW)  # the rename is undone, the synced temp is back
    assert not at_risk(fsync_dir(renamed))


def test_no_dir_fsync_rename_stays_at_risk_until_the_next_save_begins() -> None:
    """no-dir-fsync: nothing makes the rename durable but the next save's start (older saves are on disk)."""
    renamed = rename(fsync_tmp(write_tmp(Checkpoint(OLD), NEW)))
    assert power_cut(renamed).committed == OLD
    nxt = write_tmp(renamed, OLD)
    assert power_cut(nxt) == Checkpoint(NEW)


def test_an_fsync_of_a_temp_file_the_other_process_renamed_changes_nothing() -> None:
    """Two processes (FAULTS.md 7 rule 8): B writes, fsyncs and renames; A's fsync after it loses nothing.

    The temp file is one inode, synced through B's descriptor; A's fsync of it cannot make its
    new name durable, nor undo what is durable: a cut still undoes the rename and puts the
    synced temp file back (6.2 rule 3), even when the content renamed equals the old checkpoint.
    """
    for new in (NEW, OLD):
        renamed = rename(fsync_tmp(write_tmp(Checkpoint(OLD), new)))
        assert fsync_tmp(renamed) == renamed
        assert power_cut(fsync_tmp(renamed)) == Checkpoint(OLD, new)
        assert at_risk(fsync_tmp(renamed))


def test_a_directory_fsync_makes_no_temp_file_durable() -> None:
    """Two processes (FAULTS.md 7 rule 8): A renamed, B then wrote a temp file, A fsyncs the directory.

    The directory's fsync makes names durable, not a file's content: B's unsynced temp file is
    still lost by a cut (6.2 rule 2); B's own fsync makes it durable.
    """
    renamed = rename(fsync_tmp(write_tmp(Checkpoint(OLD), NEW)))
    written = write_tmp(renamed, OLD)
    assert fsync_dir(written) == written
    assert power_cut(fsync_dir(written)) == Checkpoint(NEW)
    assert not at_risk(fsync_tmp(fsync_dir(written)))


def test_an_unsynced_file_renamed_into_place_is_unreadable_after_a_cut() -> None:
    """none: the rename may reach the disk before the content; the cut leaves an unreadable file."""
    renamed = rename(write_tmp(Checkpoint(OLD), NEW))
    cut = power_cut(renamed)
    assert cut.torn
    assert cut.committed is None
    assert not at_risk(cut)
    # A later save over the unreadable file: at its start the file is still unreadable.
    assert power_cut(write_tmp(cut, NEW)) == cut


def test_a_durable_disk_is_not_at_risk() -> None:
    """A checkpoint made without power loss (the seed's value) has nothing a cut could undo."""
    disk = Checkpoint(OLD, NEW)
    assert not at_risk(disk)
    assert power_cut(disk) is disk
    assert hash(disk) == hash(Checkpoint(OLD, NEW, torn=False, at_cut=None))
