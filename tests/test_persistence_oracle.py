"""The persistence oracle (tests/persistence_oracle.py) on journals whose crash states are derived by hand.

The first tests are spec/PERSISTENCE.md section 3's worked counts; the others are journals
derived in their docstrings from section 2's rules. Notation: b is the barrier (the place of
the last fsync, 0 without one), n the number of entries, live(k) the work folder after e1..ek.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.persistence_oracle import Files, barrier, crash_files, pieces

OLD = b"old"


def op(name: str, file: str, **fields: Any) -> dict[str, Any]:
    """A journal entry."""
    return {"op": name, "file": file, **fields}


def write(file: str, offset: int, data: bytes) -> dict[str, Any]:
    """A journal `write` entry (its bytes in hex, as the journal holds them)."""
    return op("write", file, offset=offset, data=data.hex())


SAVE = [op("create", "s.tmp"), write("s.tmp", 0, b"new"), op("fsync", "s.tmp"), op("rename", "s.tmp", to="s")]
"""Section 3.1: e1 create s.tmp, e2 write its 3 bytes, e3 fsync s.tmp, e4 rename s.tmp over s."""


def test_synced_temp_file_renamed_folder_never_synced() -> None:
    """Section 3.1, with the fsync of s.tmp: one state under every model.

    b = 3, n = 4. strict keeps `s` = "old" (the rename and the create are not durable, so s.tmp
    is gone); ordered and alice have prefix(3) alone: s "old", s.tmp its 3 bytes. writeback has
    prefix(3) too, and no ahead(4): e4 is metadata, but no write lies in e4 .. e3 (none).
    """
    start: Files = {"s": OLD}
    assert barrier(SAVE) == 3
    assert crash_files("strict", start, SAVE) == [{"s": OLD}]
    assert crash_files("ordered", start, SAVE) == [{"s": OLD, "s.tmp": b"new"}]
    assert crash_files("alice", start, SAVE) == [{"s": OLD, "s.tmp": b"new"}]
    assert crash_files("writeback", start, SAVE) == [{"s": OLD, "s.tmp": b"new"}]


def test_unsynced_temp_file_renamed() -> None:
    """Section 3.1 without e3: 3 ordered states, 4 writeback states, 5 alice states.

    b = 0, n = 3. ordered: prefix(0..2), `s` "old" in each, never renamed. writeback: those 3,
    then ahead(3) (e3 a rename with the write e2 before it; e1 has no write before it, so no
    ahead(1)): create, the write's size alone (3 zero bytes), rename: `s` is 3 zeros. alice: prefix(0);
    prefix(1) then grown(1) (s.tmp 3 zero bytes; 1 piece: no torn state); prefix(2); omit(2)
    (create and rename, no write: `s` renamed and empty). strict: `s` "old", s.tmp gone.
    """
    start: Files = {"s": OLD}
    journal = [SAVE[0], SAVE[1], SAVE[3]]
    assert barrier(journal) == 0
    assert crash_files("strict", start, journal) == [{"s": OLD}]
    ordered = crash_files("ordered", start, journal)
    assert ordered == [{"s": OLD}, {"s": OLD, "s.tmp": b""}, {"s": OLD, "s.tmp": b"new"}]
    assert all(state["s"] == OLD for state in ordered)
    assert crash_files("writeback", start, journal) == [*ordered, {"s": b"\0\0\0"}]
    assert crash_files("alice", start, journal) == [
        {"s": OLD},
        {"s": OLD, "s.tmp": b""},
        {"s": OLD, "s.tmp": b"\0\0\0"},
        {"s": OLD, "s.tmp": b"new"},
        {"s": b""},
    ]


def test_record_overwritten_in_place() -> None:
    """Section 3.2: a 4 KiB record overwritten in place, 1 ordered or writeback state, 8 alice states.

    A synced 4096-byte record, e1 rewrites all of it at 0, no fsync. b = 0, n = 1. strict and
    ordered: prefix(0), the old record. writeback: prefix(0), no metadata call at all, no ahead.
    alice: prefix(0), torn(0, 1..7) (8 pieces of 512, the first j new), no grown(0): 8 states,
    7 of them mixing old and new sectors.
    """
    start: Files = {"r": b"o" * 4096}
    journal = [write("r", 0, b"n" * 4096)]
    assert crash_files("strict", start, journal) == [start]
    assert crash_files("ordered", start, journal) == [start]
    assert crash_files("writeback", start, journal) == [start]
    alice = crash_files("alice", start, journal)
    assert alice == [start] + [{"r": b"n" * 512 * j + b"o" * (4096 - 512 * j)} for j in range(1, 8)]
    mixed = [state for state in alice if b"o" in (state["r"] or b"") and b"n" in (state["r"] or b"")]
    assert len(mixed) == 7


def test_append_that_grows_a_file() -> None:
    """An append past a 512 boundary: 2 pieces, so one torn state, and a grown state.

    f holds 1000 bytes "a" (synced); e1 appends 100 bytes "b" at 1000. b = 0, n = 1. The write
    covers [1000, 1100): pieces [1000, 1024) of 24 bytes and [1024, 1100) of 76. ordered:
    prefix(0). alice: prefix(0); torn(0, 1): "a"*1000 + "b"*24 (size 1024); grown(0): "a"*1000
    + 100 zero bytes (it ends past 1000). strict: the append undone, f as it was.
    """
    start: Files = {"f": b"a" * 1000}
    journal = [write("f", 1000, b"b" * 100)]
    assert pieces(1000, 100) == [24, 76]
    assert crash_files("strict", start, journal) == [start]
    assert crash_files("ordered", start, journal) == [start]
    assert crash_files("alice", start, journal) == [
        start,
        {"f": b"a" * 1000 + b"b" * 24},
        {"f": b"a" * 1000 + b"\0" * 100},
    ]


def test_unaligned_write_spanning_three_pieces() -> None:
    """An unaligned write of 1200 bytes at 700: 3 pieces, 2 torn states, and a grown state.

    f holds 1024 bytes "a"; e1 writes 1200 bytes "b" at 700, [700, 1900): boundaries 1024 and
    1536 make 3 pieces of 324, 512 and 364. alice: prefix(0); torn(0, 1) = "a"*700 + "b"*324
    (1024 bytes); torn(0, 2) = "a"*700 + "b"*836 (1536); grown(0) = "a"*1024 + 876 zeros
    (1900 > 1024). 4 states. ordered: prefix(0) alone.
    """
    start: Files = {"f": b"a" * 1024}
    journal = [write("f", 700, b"b" * 1200)]
    assert pieces(700, 1200) == [324, 512, 364]
    assert crash_files("ordered", start, journal) == [start]
    assert crash_files("alice", start, journal) == [
        start,
        {"f": b"a" * 700 + b"b" * 324},
        {"f": b"a" * 700 + b"b" * 836},
        {"f": b"a" * 1024 + b"\0" * 876},
    ]


def test_the_barrier_is_the_later_fsync() -> None:
    """Two fsyncs: the barrier is the later one.

    From an empty folder: e1 create f, e2 write "aa" at 0, e3 fsync f, e4 write "bb" at 2, e5
    fsync f, e6 write "cc" at 4, e7 write "dd" at 0. b = 5 (not 3), n = 7. ordered: prefix(5) =
    "aabb", prefix(6) = "aabbcc". alice: prefix(5); e6 is one piece that grows 4 -> 6: grown(5)
    = "aabb" + 2 zero bytes; prefix(6); e7 does not grow; omit(6) (all but e6) = "ddbb". strict:
    f's data is durable but its name never is (no fsync of "."): the empty folder.
    """
    journal = [
        op("create", "f"),
        write("f", 0, b"aa"),
        op("fsync", "f"),
        write("f", 2, b"bb"),
        op("fsync", "f"),
        write("f", 4, b"cc"),
        write("f", 0, b"dd"),
    ]
    assert barrier(journal) == 5
    assert crash_files("ordered", {}, journal) == [{"f": b"aabb"}, {"f": b"aabbcc"}]
    assert crash_files("alice", {}, journal) == [
        {"f": b"aabb"},
        {"f": b"aabb\0\0"},
        {"f": b"aabbcc"},
        {"f": b"ddbb"},
    ]
    assert crash_files("strict", {}, journal) == [{}]


@pytest.mark.parametrize("model", ["strict", "ordered", "writeback", "alice"])
def test_cut_right_after_the_barrier_has_no_state(model: str) -> None:
    """A cut with n == b has no state.

    f = "old"; e1 write "new" at 0, e2 fsync f: b = n = 2, so k runs over nothing (ordered,
    alice), and strict's durable state (f's name from the start, its data synced) is live(2).
    """
    journal = [write("f", 0, b"new"), op("fsync", "f")]
    assert crash_files(model, {"f": OLD}, journal) == []


def test_strict_rename_durable_data_not() -> None:
    """POINTS.md 4 rule 3: a durable rename of data never synced leaves `s` empty.

    create s.tmp, write "new", rename over s, fsync "." (no fsync of s.tmp): the rename is
    durable, the data not, so `s` is empty; without the fsync of "." `s` is "old".
    """
    steps = [SAVE[0], SAVE[1], SAVE[3]]
    assert crash_files("strict", {"s": OLD}, [*steps, op("fsync", ".")]) == [{"s": b""}]
    assert crash_files("strict", {"s": OLD}, steps) == [{"s": OLD}]


def test_strict_new_folder_entries_need_their_own_fsync() -> None:
    """strict: a new folder's entries are durable only once the folder itself is fsynced.

    mkdir d, create d/f, write "x", fsync d/f, fsync ".": d's name is durable, but d's own entries
    were never synced (a new folder's durable entries are empty): the cut leaves d empty. An
    fsync of d then makes the cut equal to the live state: no state.
    """
    journal = [op("mkdir", "d"), op("create", "d/f"), write("d/f", 0, b"x"), op("fsync", "d/f"), op("fsync", ".")]
    assert crash_files("strict", {}, journal) == [{"d": None}]
    assert crash_files("strict", {}, [*journal, op("fsync", "d")]) == []


def test_exchange_unlink_rmdir_live() -> None:
    """exchange, unlink and rmdir replayed live.

    exchange swaps two names: a = "1", b = "22", e1 exchange: ordered prefix(0) = the start.
    unlink d/f then rmdir d from {d, d/f}: ordered prefix(0) = start, prefix(1) = {d} (2
    states); strict: nothing synced, the start.
    """
    start: Files = {"a": b"1", "b": b"22"}
    assert crash_files("ordered", start, [op("exchange", "a", to="b")]) == [start]
    folder: Files = {"d": None, "d/f": b"x"}
    journal = [op("unlink", "d/f"), op("rmdir", "d")]
    assert crash_files("ordered", folder, journal) == [folder, {"d": None}]
    assert crash_files("strict", folder, journal) == [folder]


def test_omit_leaves_a_hole() -> None:
    """omit-one keeps later writes where the program made them: a hole where the dropped one was.

    From empty: e1 create f, e2 write "aa" at 0, e3 write "bb" at 2. b = 0, n = 3. alice:
    prefix(0) {}; prefix(1) f ""; grown(1) 2 zero bytes; prefix(2) "aa"; grown(2) "aa" + 2 zero
    bytes; omit(2) (e3 at 2 over an empty file) 2 zero bytes + "bb". e1 is no write, so no
    omit(1): 6 states.
    """
    journal = [op("create", "f"), write("f", 0, b"aa"), write("f", 2, b"bb")]
    assert crash_files("alice", {}, journal) == [
        {},
        {"f": b""},
        {"f": b"\0\0"},
        {"f": b"aa"},
        {"f": b"aa\0\0"},
        {"f": b"\0\0bb"},
    ]


def test_states_are_told_apart_by_how_they_are_made() -> None:
    """Two states that leave the same files are two states (section 1): the counts follow the calls.

    f = "old", e1 writes "old" at 0 again, no fsync: b = 0, n = 1. ordered: prefix(0), 1 state,
    which leaves f = "old" as live(1) does. strict loses nothing (its cut is live(1)): no state.
    """
    journal = [write("f", 0, OLD)]
    assert crash_files("ordered", {"f": OLD}, journal) == [{"f": OLD}]
    assert crash_files("alice", {"f": OLD}, journal) == [{"f": OLD}]
    assert crash_files("strict", {"f": OLD}, journal) == []


def test_unknown_model() -> None:
    """Only the four models of section 2 exist."""
    with pytest.raises(ValueError, match="unknown persistence model"):
        crash_files("data=journal", {}, [])


def test_strict_loses_a_bare_create_and_a_truncate() -> None:
    """strict's state is offered whenever it differs from live(n), whatever rule 4 reads.

    A bare create (no write) of f, folder never fsynced: the cut leaves the empty folder, live(1)
    holds an empty f, so 1 state. A synced f = "old" truncated to 0, no fsync: the cut keeps
    "old", 1 state. (POINTS.md 4 rule 4's list of what leaves something unsynced names neither
    create nor truncate, and rule 2 offers the cut only where rule 4 reads a risk.)
    """
    assert crash_files("strict", {}, [op("create", "f")]) == [{}]
    assert crash_files("strict", {"f": OLD}, [op("truncate", "f", length=0)]) == [{"f": OLD}]


@pytest.mark.parametrize(
    ("offset", "data", "after", "ahead"),
    [
        (3, b"defg", b"abcdefg", b"abc\0\0\0\0"),
        (1, b"XYZW", b"aXYZW", b"abc\0\0"),
        (5, b"xy", b"abc\0\0xy", b"abc\0\0\0\0"),
    ],
)
def test_writeback_append_then_rename(offset: int, data: bytes, after: bytes, ahead: bytes) -> None:
    """A write past the end of f, then a rename of f to g: ahead(2) keeps the new size, not the bytes.

    f = "abc" (synced), e1 writes `data` at `offset`, ending past 3, e2 renames f to g. b = 0,
    n = 2. prefix(0) = the start; prefix(1) = f `after`; ahead(2) (a rename with the write e1
    before it): g has the write's end as its size, "abc" where the old size reached (the write's
    bytes there lost too, offset 1), zeros past it. An append at 3: "abc" + 4 zeros; a write at 5
    over a hole: "abc" + 4 zeros as well. 3 states; ordered has the first 2.
    """
    start: Files = {"f": b"abc"}
    journal = [write("f", offset, data), op("rename", "f", to="g")]
    assert crash_files("ordered", start, journal) == [start, {"f": after}]
    assert crash_files("writeback", start, journal) == [start, {"f": after}, {"g": ahead}]


def test_writeback_two_writes_then_two_renames() -> None:
    """Two writes then two renames: 4 prefixes and 2 ahead states, each without either write's data.

    a = b = "old" (synced); e1 writes "AAAA" to a at 0 (a grows 3 -> 4), e2 writes "BB" to b at 0
    (no growth), e3 renames a to c, e4 renames b to d. b = 0, n = 4. prefix(0) the start,
    prefix(1) a "AAAA", prefix(2) b "BBd" too, prefix(3) a renamed c. ahead(3) (writes e1, e2
    before it): the rename a -> c, c = "old" + 1 zero (a's size kept, its data lost), b "old".
    ahead(4): both renames, c = "old" + 1 zero, d = "old". No state keeps one write's data and drops the
    other's: ahead(j) drops every write since the barrier. 6 states.
    """
    start: Files = {"a": OLD, "b": OLD}
    journal = [write("a", 0, b"AAAA"), write("b", 0, b"BB"), op("rename", "a", to="c"), op("rename", "b", to="d")]
    assert crash_files("writeback", start, journal) == [
        start,
        {"a": b"AAAA", "b": OLD},
        {"a": b"AAAA", "b": b"BBd"},
        {"c": b"AAAA", "b": b"BBd"},
        {"c": b"old\0", "b": OLD},
        {"c": b"old\0", "d": OLD},
    ]


def test_writeback_metadata_without_a_write_since_the_barrier() -> None:
    """A metadata call after the barrier with no write between: no ahead state.

    f = "old"; e1 writes "new" at 0, e2 fsync f, e3 renames f to g, e4 writes "NEWER" to g at 0.
    b = 2, n = 4. prefix(2) f "new", prefix(3) g "new". e3 is metadata, but its only earlier
    write e1 lies before the barrier: no ahead(3). e4 is a write, no metadata call: no ahead(4).
    2 states, the same as ordered.
    """
    journal = [write("f", 0, b"new"), op("fsync", "f"), op("rename", "f", to="g"), write("g", 0, b"NEWER")]
    expected: list[Files] = [{"f": b"new"}, {"g": b"new"}]
    assert crash_files("ordered", {"f": OLD}, journal) == expected
    assert crash_files("writeback", {"f": OLD}, journal) == expected


def test_writeback_truncate_after_a_write() -> None:
    """truncate is metadata: it persists ahead of a write before it.

    f = "ab"; e1 writes "XYZW" at 1 (live "aXYZW", grows 2 -> 5), e2 truncates f to 3 (live
    "aXY"). b = 0, n = 2. prefix(0) "ab", prefix(1) "aXYZW", ahead(2): the write's size alone
    ("ab" + 3 zeros), then the truncate to 3: "ab" + 1 zero. 3 states.
    f = "abcdef"; e1 writes "XY" at 0 (no growth), e2 truncates to 4. ahead(2): the write leaves
    nothing, the truncate cuts the old bytes: "abcd". prefix(0), prefix(1) "XYcdef": 3 states.
    """
    journal = [write("f", 1, b"XYZW"), op("truncate", "f", length=3)]
    assert crash_files("writeback", {"f": b"ab"}, journal) == [{"f": b"ab"}, {"f": b"aXYZW"}, {"f": b"ab\0"}]
    journal = [write("f", 0, b"XY"), op("truncate", "f", length=4)]
    states = crash_files("writeback", {"f": b"abcdef"}, journal)
    assert states == [{"f": b"abcdef"}, {"f": b"XYcdef"}, {"f": b"abcd"}]


def test_writeback_ahead_stops_at_its_metadata_call() -> None:
    """ahead(j) applies nothing after ej, and each write since the barrier only as its size.

    From empty: e1 create f, e2 write "aa" at 0, e3 mkdir d, e4 write "bb" at 2, e5 rename f to
    d/f. b = 0, n = 5. prefix(0..4): {}, f "", f "aa", + d, f "aabb" and d. ahead(1): no write
    before e1. ahead(3): f 2 zeros, d (e4 after e3 not applied). ahead(5): d, d/f 4 zeros (e2
    then e4 each grow f). 7 states.
    """
    journal = [
        op("create", "f"),
        write("f", 0, b"aa"),
        op("mkdir", "d"),
        write("f", 2, b"bb"),
        op("rename", "f", to="d/f"),
    ]
    assert crash_files("writeback", {}, journal) == [
        {},
        {"f": b""},
        {"f": b"aa"},
        {"f": b"aa", "d": None},
        {"f": b"aabb", "d": None},
        {"f": b"\0\0", "d": None},
        {"d": None, "d/f": b"\0\0\0\0"},
    ]


def test_writeback_empty_write_still_counts() -> None:
    """Reading: a write of no bytes is "a write among" the calls, so ahead(j) exists.

    f = "old"; e1 writes no bytes at 0, e2 renames f to g. b = 0, n = 2. prefix(0), prefix(1)
    (f "old" both), ahead(2): g "old", the same files as live(2), the crash's own; a state
    still, as states are told apart by how they are made (section 1). 3 states.
    """
    journal = [write("f", 0, b""), op("rename", "f", to="g")]
    assert crash_files("writeback", {"f": OLD}, journal) == [{"f": OLD}, {"f": OLD}, {"g": OLD}]
