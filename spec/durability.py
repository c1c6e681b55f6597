"""Saves with explicit durability: a design's fsync policy, and what a power cut leaves on disk.

The rules are section 6 of spec/FAULTS.md. A design's fsync policy decides the steps of each
checkpoint save (`with_fsyncs` rewrites the two-step save of SEMANTICS.md section 3):

- `none` (the seed's save, so every count of SEMANTICS.md): write the temp file, rename;
- `no-dir-fsync`: write the temp file, fsync it (`<what>: tmp synced`), rename;
- `full`: the same, then fsync the directory (`<what>: dir synced`).

Under crashes alone an fsync changes nothing on disk, so only its crash point counts. When the
environment may cut the power, the checkpoint value also records what a cut would leave
(`Checkpoint.at_cut`); the functions below keep it, one per disk step, all pure.
"""

from __future__ import annotations

from typing import get_args

from crashsweep.spec.ops import CHECKPOINT, CallModel, FsyncDir, FsyncTmp, Op, Ops, Point, Rename
from crashsweep.spec.policy import Fsync, Unreadable
from crashsweep.spec.world import Checkpoint, Snapshot, make_checkpoint

FSYNCS: tuple[Fsync, ...] = get_args(Fsync)
UNREADABLES: tuple[Unreadable, ...] = get_args(Unreadable)
POWER_LOSS = "power-loss"
"""The fault kind's name (spec/faults.py): with it enabled, the checkpoint tracks what is durable."""
TMP_WRITTEN = ": tmp written"

_REWRITTEN: dict[tuple[Ops, str], Ops] = {}
_REWRITTEN_LIMIT = 1 << 16


def with_fsyncs(ops: Ops, fsync: str) -> Ops:
    """`ops` with every checkpoint save given the fsync steps of `fsync` (the lock file's saves are left alone)."""
    if fsync == "none":
        return ops
    known = _REWRITTEN.get((ops, fsync))
    if known is None:
        if len(_REWRITTEN) >= _REWRITTEN_LIMIT:
            _REWRITTEN.clear()
        known = _REWRITTEN[(ops, fsync)] = _rewrite(ops, fsync)
    return known


def _rewrite(ops: Ops, fsync: str) -> Ops:
    out: list[Op] = []
    renamed: str | None = None  # the save whose `renamed` point comes next
    for op in ops:
        if isinstance(op, CallModel):
            op = CallModel(_rewrite(op.after_reply, fsync), _rewrite(op.after_final, fsync))
        if isinstance(op, Rename) and op.file == CHECKPOINT and out and _tmp_written(out[-1]):
            last = out[-1]
            assert isinstance(last, Point)
            renamed = last.name.removesuffix(TMP_WRITTEN)
            out += [FsyncTmp(), Point(f"{renamed}: tmp synced")]
        out.append(op)
        if renamed is not None and isinstance(op, Point) and op.name == f"{renamed}: renamed":
            if fsync == "full":
                out += [FsyncDir(), Point(f"{renamed}: dir synced")]
            renamed = None
    return tuple(out)


def _tmp_written(op: Op) -> bool:
    return isinstance(op, Point) and op.name.endswith(TMP_WRITTEN)


def _settled(disk: Checkpoint, cut: Checkpoint | None) -> Checkpoint:
    """`disk` with `cut` as what a power cut leaves; None when the cut would leave `disk` itself."""
    if cut is not None and (cut.committed, cut.tmp, cut.torn) == (disk.committed, disk.tmp, disk.torn):
        cut = None
    return make_checkpoint(disk.committed, disk.tmp, torn=disk.torn, at_cut=cut)


def write_tmp(disk: Checkpoint, memory: Snapshot) -> Checkpoint:
    """A save begins: what came before it is on disk for good; the new temp file's content is not."""
    now = make_checkpoint(disk.committed, memory, torn=disk.torn)
    return _settled(now, make_checkpoint(disk.committed, None, torn=disk.torn))


def fsync_tmp(disk: Checkpoint) -> Checkpoint:
    """The temp file's content is durable; with no temp file (the other process renamed it) nothing changes."""
    cut = disk.at_cut
    if cut is None or disk.tmp is None:
        return disk
    return _settled(disk, make_checkpoint(cut.committed, disk.tmp, torn=cut.torn))


def rename(disk: Checkpoint) -> Checkpoint:
    """The temp file replaces the checkpoint; a cut undoes the rename, or tears the file if its content was unsynced."""
    now = make_checkpoint(disk.tmp, None)
    synced = disk.at_cut is None or disk.at_cut.tmp is disk.tmp or disk.at_cut.tmp == disk.tmp
    if synced:
        return _settled(now, make_checkpoint(disk.committed, disk.tmp, torn=disk.torn))
    return _settled(now, make_checkpoint(None, None, torn=True))


def fsync_dir(disk: Checkpoint) -> Checkpoint:
    """The rename is durable: a cut leaves the renamed file (unreadable if its content was never synced).

    With a temp file on disk (the other process wrote it since the rename) there is no rename in
    flight, and a directory's fsync makes no file's content durable: nothing changes.
    """
    cut = disk.at_cut
    if cut is None or cut.torn or disk.tmp is not None:
        return disk
    return _settled(disk, None)


def power_cut(disk: Checkpoint) -> Checkpoint:
    """What a power cut leaves of `disk`: every step not yet durable is undone."""
    cut = disk.at_cut
    return disk if cut is None else cut


def at_risk(disk: Checkpoint) -> bool:
    """Whether a power cut would leave something other than `disk`."""
    return disk.at_cut is not None
