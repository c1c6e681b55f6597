"""The persistence models (realsweep/syscalls/persistence.py) against the oracle written from spec/PERSISTENCE.md.

The oracle (tests/persistence_oracle.py) was written from the text alone. Here both list a
cut's crash states for the spec's worked journals and for journals hypothesis draws (a small
file system's calls, each one a program could have made), and must give the same disks in
the same order. `strict`'s one state is compared where the oracle says it loses something.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crashsweep.realsweep.syscalls import durable, persistence
from crashsweep.realsweep.syscalls.persistence import CrashState
from tests.persistence_oracle import crash_files

Entry = dict[str, Any]
OLD, NEW = b"old", b"new"


def write(file: str, offset: int, data: bytes) -> Entry:
    """A journal line of a write of `data` at `offset`."""
    return {"op": "write", "file": file, "offset": offset, "data": data.hex()}


REPLACE = [{"op": "create", "file": "s.tmp"}, write("s.tmp", 0, NEW), {"op": "fsync", "file": "s.tmp"}]
REPLACE += [{"op": "rename", "file": "s.tmp", "to": "s"}]


FOLDER_MOVED = [{"op": "mkdir", "file": "d"}, {"op": "create", "file": "d/f"}, write("d/f", 0, NEW)]
FOLDER_MOVED += [{"op": "fsync", "file": "d/f"}, {"op": "fsync", "file": "d"}, {"op": "fsync", "file": "."}]
FOLDER_MOVED += [{"op": "rename", "file": "d", "to": "e"}]
"""A database set up in a folder of its own, every part synced, then the folder renamed into place."""


def every_state(model: str, entries: list[Entry], start: Mapping[str, bytes | None]) -> list[durable.Files]:
    """The disks of every crash state `model` lists for the cut, in its order."""
    count = len(persistence.states(model, entries, start))
    return [persistence.files(model, entries, start, number) for number in range(1, count + 1)]


def agrees(model: str, entries: list[Entry], start: durable.Files) -> None:
    """The implementation's states are the oracle's (strict: its one state where it loses something)."""
    mine, theirs = every_state(model, entries, start), crash_files(model, start, entries)
    if model == persistence.STRICT:
        assert mine == [durable.replay(start, entries).after_cut()]
        assert theirs in ([], mine)
    else:
        assert mine == theirs


def test_section_3_1_a_synced_temporary_file_renamed() -> None:
    """spec 3.1: one state under each model; `s` is "old", the rename lost, `s.tmp` whole under ordered."""
    start = {"s": OLD}
    assert every_state("strict", REPLACE, start) == [{"s": OLD}]
    assert every_state("ordered", REPLACE, start) == [{"s": OLD, "s.tmp": NEW}]
    assert every_state("alice", REPLACE, start) == [{"s": OLD, "s.tmp": NEW}]


def test_section_3_1_without_the_fsync_alice_finds_the_empty_file_under_the_new_name() -> None:
    """spec 3.1 without e3: ordered 3 states, `s` "old" in each; alice 5, the last `s` renamed and empty."""
    journal = [REPLACE[0], REPLACE[1], REPLACE[3]]
    start = {"s": OLD}
    assert persistence.states("ordered", journal, start) == tuple(CrashState("prefix", k) for k in range(3))
    assert all(state["s"] == OLD for state in every_state("ordered", journal, start))
    assert persistence.states("alice", journal, start) == (
        CrashState("prefix", 0),
        CrashState("prefix", 1),
        CrashState("grown", 1),
        CrashState("prefix", 2),
        CrashState("omit", i=2),
    )
    assert every_state("alice", journal, start)[-1] == {"s": b""}


def test_section_3_2_a_record_overwritten_in_place_tears_at_each_sector() -> None:
    """spec 3.2: a 4096-byte overwrite, unsynced: ordered 1 state, alice 8, 7 of them mixing old and new."""
    start = {"r": b"o" * 4096}
    journal = [write("r", 0, b"n" * 4096)]
    assert len(persistence.states("ordered", journal, start)) == 1
    found = every_state("alice", journal, start)
    assert len(found) == 8
    mixed = [state["r"] for state in found if state["r"] not in (b"o" * 4096, b"n" * 4096)]
    assert mixed == [b"n" * (512 * j) + b"o" * (4096 - 512 * j) for j in range(1, 8)]


def test_a_cut_with_no_call_since_the_barrier_has_no_state() -> None:
    """n == b: the last call is an fsync, so ordered and alice list nothing (the cut is not offered)."""
    for model in ("ordered", "alice"):
        assert persistence.states(model, REPLACE[:3], {}) == ()


def test_a_state_beyond_the_cuts_list_is_refused_in_one_line() -> None:
    """`--crash 'NAME / state 9'` where the cut has fewer states: a ValueError naming how many there are."""
    with pytest.raises(ValueError, match="has 1 crash state"):
        persistence.files("ordered", REPLACE, {"s": OLD}, 2)


NAMES = ("a", "b", "d/c")


@st.composite
def journals(draw: st.DrawFn) -> tuple[durable.Files, list[Entry]]:
    """A start folder and calls a program could make on it: each call names what exists when it is made."""
    start: durable.Files = {"d": None, "a": draw(st.binary(max_size=1100))}
    files = {"a"}
    entries: list[Entry] = []
    for _ in range(draw(st.integers(0, 9))):
        choice = draw(st.sampled_from(("create", "write", "fsync", "rename", "truncate", "unlink", "dir")))
        name = draw(st.sampled_from(NAMES))
        if choice == "create" and name not in files:
            files.add(name)
            entries.append({"op": "create", "file": name})
        elif choice == "write" and name in files:
            data = draw(st.binary(min_size=1, max_size=1300))
            entries.append(write(name, draw(st.integers(0, 1200)), data))
        elif choice == "truncate" and name in files:
            entries.append({"op": "truncate", "file": name, "length": draw(st.integers(0, 900))})
        elif choice == "fsync" and name in files:
            entries.append({"op": "fsync", "file": name})
        elif choice == "dir":
            entries.append({"op": "fsync", "file": draw(st.sampled_from((".", "d")))})
        elif choice == "rename" and name in files:
            to = draw(st.sampled_from([n for n in NAMES if n != name]))
            files.discard(name)
            files.add(to)
            entries.append({"op": "rename", "file": name, "to": to})
        elif choice == "unlink" and name in files:
            files.discard(name)
            entries.append({"op": "unlink", "file": name})
    return start, entries


@pytest.mark.parametrize("model", list(persistence.MODELS))
@given(drawn=journals())
def test_every_model_lists_the_oracles_states_in_its_order(
    model: str, drawn: tuple[durable.Files, list[Entry]]
) -> None:
    start, entries = drawn
    agrees(model, entries, start)


@pytest.mark.parametrize("model", list(persistence.MODELS))
def test_the_worked_journals_agree(model: str) -> None:
    """The spec's journals and their variants, each model, both implementations."""
    cases: list[tuple[durable.Files, list[Entry]]] = [
        ({"s": OLD}, REPLACE),
        ({"s": OLD}, [REPLACE[0], REPLACE[1], REPLACE[3]]),
        ({"r": b"o" * 4096}, [write("r", 0, b"n" * 4096)]),
        ({"r": b"x" * 100}, [write("r", 700, b"y" * 1200), {"op": "fsync", "file": "."}, write("r", 0, b"z")]),
        ({"d": None, "d/f": OLD}, [{"op": "rename", "file": "d", "to": "e"}, write("e/f", 0, NEW)]),
        ({}, FOLDER_MOVED),
        ({}, [*FOLDER_MOVED, {"op": "fsync", "file": "."}, {"op": "create", "file": "e/g"}]),
    ]
    for start, journal in cases:
        agrees(model, journal, start)
