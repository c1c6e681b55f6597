"""Tests of crashsweep.spec.keyprograms: a program's shape in the key, and the temp files it reads first."""

from __future__ import annotations

from crashsweep.spec.keyprograms import entry, op_shape, reads_tmp
from crashsweep.spec.ops import CHECKPOINT, LOCK, CallModel, Exit, FsyncTmp, Point, Rename, Send, Store, WriteTmp
from crashsweep.spec.save import save, take_lock


def test_a_program_without_answers_is_its_own_shape() -> None:
    """No Store and no model call: the shape is the program itself, hashed as it is (or by the caller's hash)."""
    program = (Send("a", False), *save("result a"))
    shape, reads, reads_lock = entry(program, hash(program))
    assert shape.items is program
    assert hash(shape) == hash(program)
    assert (reads, reads_lock) == (False, False)  # it writes the temp file before renaming it


def test_answers_are_left_out_of_the_shape() -> None:
    """Two programs that differ only in a Store's answer (nested in a model call too) have one shape."""
    one = (Point("p"), Store("a", "#1"), CallModel((Store("b", "#2"),), (Exit(),)))
    two = (Point("p"), Store("a", "#7"), CallModel((Store("b", "#9"),), (Exit(),)))
    assert entry(one)[0] == entry(two)[0]
    assert entry(one)[0] != entry((Point("q"), *one[1:]))[0]
    assert op_shape(Store("a", "#1")) == Store("a", "")


def test_the_temp_files_read_before_written() -> None:
    """A rename or an fsync first reads the checkpoint's temp file; the lock's is read by its own rename."""
    assert reads_tmp((Rename(), Point("x")), CHECKPOINT)
    assert reads_tmp((FsyncTmp(),), CHECKPOINT)
    assert not reads_tmp((WriteTmp(), Rename()), CHECKPOINT)
    assert not reads_tmp((Point("x"),), CHECKPOINT)
    assert reads_tmp(take_lock()[2:], LOCK)
    assert not reads_tmp(take_lock(), LOCK)
    assert entry((Point("x"), Rename()))[1:] == (True, False)
    model_call = CallModel((Rename(),), (WriteTmp(),))
    assert reads_tmp((model_call,), CHECKPOINT)  # either way on reads it first
