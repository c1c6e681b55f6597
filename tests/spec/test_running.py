"""Tests of crashsweep.spec.running: processes as values, sharing their programs without changing them."""

from __future__ import annotations

from crashsweep.spec import running
from crashsweep.spec.ops import Ops, Point, Rename, WriteTmp
from crashsweep.spec.running import Process, make_process, make_process_at
from crashsweep.spec.world import Snapshot


def test_equal_programs_are_one_shared_tuple() -> None:
    """Two processes built from equal (not identical) programs hold one tuple and one point name."""
    memory = Snapshot("run-1")
    one = Process(memory, (WriteTmp(), Point("a: tmp written")), "".join(["a", ": renamed"]))
    two = make_process(Snapshot("run-1"), (WriteTmp(), Point("a: tmp written")), "a: renamed")
    assert one == two
    assert hash(one) == hash(two)
    assert one.pending is two.pending
    assert one.point is two.point


def test_sharing_never_changes_equality() -> None:
    """Past the tables' bound they start afresh; processes made before and after still compare by value."""
    memory = Snapshot("run-1")
    before = make_process(memory, (Rename(),), "p")
    running._forget()
    running._NAMES.clear()
    after = make_process(memory, (Rename(),), "p")
    assert before.pending is not after.pending
    assert before == after
    assert hash(before) == hash(after)
    assert before != make_process(memory, (WriteTmp(),), "p")
    assert before != make_process(memory, (Rename(),), "q")


def test_rest_of_a_shared_program_is_the_rest_by_value() -> None:
    """make_process_at gives make_process(program[start:]) for a shared program and for a fresh one."""
    memory = Snapshot("run-1")
    program: Ops = (WriteTmp(), Point("a: tmp written"), Rename(), Point("a: renamed"))
    shared = make_process(memory, program, "p").pending  # now in the table of programs
    fresh: Ops = tuple(list(program))
    for source in (shared, fresh):
        for start in range(len(program) + 1):
            made = make_process_at(memory, source, start, "q")
            expected = make_process(memory, program[start:], "q")
            assert made == expected
            assert hash(made) == hash(expected)
            assert made.pending is expected.pending
    running._forget()
    assert make_process_at(memory, shared, 2, "q").pending == (Rename(), Point("a: renamed"))


def test_a_program_of_the_same_instructions_is_found_by_them() -> None:
    """Another tuple of the very same instruction objects is the shared one; so is its rest and its point name."""
    memory = Snapshot("run-1")
    ops = (WriteTmp(), Point("a: tmp written"), Rename(), Point("a: renamed"))
    shared = make_process(memory, ops, "p").pending
    again = make_process(memory, tuple(list(ops)), "p")
    assert again.pending is shared
    first = make_process_at(memory, shared, 2, "a: tmp written")
    second = make_process_at(memory, shared, 2, "".join(["a: tmp ", "written"]))
    assert first.pending is second.pending
    assert second.point is first.point
    assert type(second) is Process
