"""A program's part of the state key (spec/key.py; SEMANTICS.md section 11, rules 1 and 4).

Of the instructions a process has left the key keeps their shape, a Store's answer left out
(rule 1: the loop only asks whether a call has a result), hashed once (`Hashed`: a probe of
the search hashes the key of every world it reaches), and whether they read the checkpoint's,
and the lock's, temp file before writing it (rule 4: a temp file no living process reads is
left out). `entry(program)` computes the three once per program; the key keeps them per
shared program (spec/running.py shares equal programs as one tuple).
"""

from __future__ import annotations

from crashsweep.spec.keyparts import Hashed
from crashsweep.spec.ops import CHECKPOINT, LOCK, CallModel, FsyncDir, FsyncTmp, Op, Ops, Rename, Store, WriteTmp

__all__ = ["Program", "entry", "op_shape", "reads_tmp"]

Program = tuple[Hashed, bool, bool]
"""A program's shape, and whether it reads the checkpoint's, and the lock's, temp file before writing it."""
_ANSWERING = frozenset({Store, CallModel})
"""The instructions whose shape is not themselves: a Store's answer is left out, and a model call's Stores'."""
_DISK = frozenset({WriteTmp, Rename, FsyncTmp, FsyncDir, CallModel})
"""The instructions that write or read a temp file, and a model call (whose programs may)."""
_FSYNCS = (FsyncTmp, FsyncDir)


def entry(program: Ops, hashed: int | None = None) -> Program:
    """The program's shape (hashed once), and whether it reads the checkpoint's, and the lock's, temp file first.

    `hashed` is hash(program) when the caller has it (a process keeps its program's). A
    program with no Store (nor a model call, which may hold one) is its own shape, and one
    that neither writes nor reads a file reads no temp file: both are told by the classes of
    its instructions alone.
    """
    kinds = set(map(type, program))
    answering = not kinds.isdisjoint(_ANSWERING)
    shape = Hashed(tuple(map(op_shape, program))) if answering else Hashed(program, hashed)
    if kinds.isdisjoint(_DISK):
        return shape, False, False
    return shape, reads_tmp(program, CHECKPOINT), reads_tmp(program, LOCK)


def op_shape(op: Op) -> Op:
    """The instruction with a Store's answer left out (nested ones too)."""
    if isinstance(op, Store):
        return Store(op.call, "", op.again)
    if isinstance(op, CallModel):
        return CallModel(tuple(map(op_shape, op.after_reply)), tuple(map(op_shape, op.after_final)))
    return op


def reads_tmp(ops: Ops, file: str) -> bool:
    """Whether running `ops` may read `file`'s temp file before writing it (a rename or an fsync first).

    A save writes its temp file, then renames it (spec/save.py, the one maker of saves), and a
    design's plan returns whole saves: what follows `ops` writes before it reads. A model call
    goes on with one of two programs: the temp file is read if either reads it first.
    """
    return bool(_first_use(ops, file))


def _first_use(ops: Ops, file: str) -> bool | None:
    """True if `ops` read `file`'s temp file before writing it, False if they write it first, None if neither."""
    for op in ops:
        if type(op) not in _DISK:  # most instructions touch no file (the classes are final)
            continue
        if isinstance(op, WriteTmp):
            if op.file == file:
                return False
        elif isinstance(op, Rename):
            if op.file == file:
                return True
        elif isinstance(op, _FSYNCS):
            if file == CHECKPOINT:
                return True
        elif isinstance(op, CallModel):
            after_reply, after_final = _first_use(op.after_reply, file), _first_use(op.after_final, file)
            if after_reply or after_final:
                return True
            if after_reply is False and after_final is False:
                return False
    return None
