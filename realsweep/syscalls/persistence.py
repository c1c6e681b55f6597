"""Persistence models as values: the crash states a power cut may leave of a journal (spec/PERSISTENCE.md).

`strict` is durable.py's one state (POINTS.md 4, rule 2). `ordered` keeps a prefix of the calls
since the last fsync (the barrier); `writeback` adds states where metadata got ahead of the
data written before it (`ahead`); `alice` adds ALICE's states: a write torn at 512-byte
boundaries, a file grown before its data, one write omitted. A state is a value (`CrashState`),
numbered from 1 in the model's order; `states` lists them from the journal alone (the start
copy gives the files' sizes), `files` gives the disk one of them leaves. The shim counts a
cut's states as the program passes each point (trace.py); the strike lays out the chosen one.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crashsweep.realsweep.syscalls.durable import Disk, Files, replay

PERSISTENCE = "CRASHSWEEP_PERSISTENCE"
"""The variable that tells the shim (trace.py) a sweep's model other than strict: it counts each cut's states."""
STRICT = "strict"
MODELS = {
    STRICT: "nothing persists that the program did not force (POSIX at its weakest; the default)",
    "ordered": "calls persist in the order they returned: a cut keeps a prefix since the last fsync",
    "writeback": "metadata persists in order, and data may come after it: ordered's prefixes, then each "
    "rename or create since the last fsync with the writes before it lost (their files' sizes kept)",
    "alice": "ALICE's crash states: prefixes, a write torn at 512-byte boundaries, a file grown "
    "before its data, one write omitted",
}
"""Each model's name and what it says, in the order `--persistence` lists them."""
SECTOR = 512
METADATA = frozenset({"create", "truncate", "rename", "exchange", "unlink", "mkdir", "rmdir"})
"""The calls that change names or sizes: what `writeback` persists in order, ahead of data."""
Entry = dict[str, Any]


@dataclass(frozen=True, slots=True)
class CrashState:
    """One state of a cut, by how it is made (spec/PERSISTENCE.md section 2).

    `prefix`: the first k calls kept; `torn`: then j of the `pieces` of call k+1; `grown`: then
    call k+1's file grown, its data not; `omit`: all but call i; `ahead`: the metadata calls up
    to call i, the writes among them without their data.
    """

    how: str
    k: int = 0
    j: int = 0
    pieces: int = 0
    i: int = 0


def barrier(entries: Sequence[Entry]) -> int:
    """The place (from 1) of the last fsync among the entries, 0 when there is none."""
    return max((n for n, entry in enumerate(entries, start=1) if entry["op"] == "fsync"), default=0)


def states(model: str, entries: Sequence[Entry], start: Mapping[str, bytes | None]) -> tuple[CrashState, ...]:
    """The crash states `model` gives a cut after `entries` (from `start`), in its order (spec section 2).

    `strict`'s one state is the durable disk; whether it is offered is POINTS.md 4's reading of
    the names (names.at_risk), so it is listed here whatever the journal holds.
    """
    if model == STRICT:
        return (CrashState("strict"),)
    if model not in MODELS:
        raise ValueError(f"unknown persistence model {model!r} (known: {', '.join(MODELS)})")
    since, calls = barrier(entries), len(entries)
    found: list[CrashState] = []
    disk = replay(dict(start), list(entries[:since]))
    for k in range(since, calls):
        found.append(CrashState("prefix", k))
        entry = entries[k]
        if model == "alice" and entry["op"] == "write":
            cuts = _pieces(int(entry["offset"]), len(bytes.fromhex(entry["data"])))
            found.extend(CrashState("torn", k, j, len(cuts)) for j in range(1, len(cuts)))
            if _grows(disk, entry):
                found.append(CrashState("grown", k))
        disk.apply(entry)
    if model == "alice":
        found.extend(CrashState("omit", i=i) for i in range(since + 1, calls) if entries[i - 1]["op"] == "write")
    if model == "writeback":
        found.extend(CrashState("ahead", i=j) for j in _ahead(entries, since))
    return tuple(found)


def files(model: str, entries: Sequence[Entry], start: Mapping[str, bytes | None], number: int) -> Files:
    """The disk the `number`-th state (from 1) of `model` leaves; ValueError when there is no such state."""
    found = states(model, entries, start)
    if not 1 <= number <= len(found):
        raise ValueError(f"a cut here has {len(found)} crash state(s) under {model}, not a state {number}")
    state = found[number - 1]
    if state.how == "strict":
        return replay(dict(start), list(entries)).after_cut()
    if state.how == "omit":
        return replay(dict(start), [e for n, e in enumerate(entries, start=1) if n != state.i]).files()
    if state.how == "ahead":
        return _metadata_ahead(start, entries, state.i)
    disk = replay(dict(start), list(entries[: state.k]))
    if state.how == "torn":
        entry = entries[state.k]
        end = _pieces(int(entry["offset"]), len(bytes.fromhex(entry["data"])))[state.j - 1]
        kept = bytes.fromhex(entry["data"])[: end - int(entry["offset"])]
        disk.apply({**entry, "data": kept.hex()})
    elif state.how == "grown":
        entry = entries[state.k]
        node = disk.live[entry["file"]]
        end = int(entry["offset"]) + len(bytes.fromhex(entry["data"]))
        disk.content[node] = disk.content[node].ljust(end, b"\0")
    return disk.files()


def _ahead(entries: Sequence[Entry], since: int) -> list[int]:
    """The places j (from 1) of the metadata calls after the barrier with a write between the barrier and them."""
    found, written = [], False
    for j in range(since + 1, len(entries) + 1):
        op = entries[j - 1]["op"]
        if op in METADATA and written:
            found.append(j)
        written = written or op == "write"
    return found


def _metadata_ahead(start: Mapping[str, bytes | None], entries: Sequence[Entry], upto: int) -> Files:
    """`ahead(upto)`: calls to the barrier whole, then the metadata to `upto`; each write's data lost, its size kept."""
    since = barrier(entries[:upto])
    disk = replay(dict(start), list(entries[:since]))
    for entry in entries[since:upto]:
        if entry["op"] != "write":
            disk.apply(entry)
            continue
        node, length = disk.live.get(entry["file"]), len(bytes.fromhex(entry["data"]))
        if node in disk.content and length:  # a write of no bytes grows nothing
            assert node is not None
            disk.content[node] = disk.content[node].ljust(int(entry["offset"]) + length, b"\0")
    return disk.files()


def _pieces(offset: int, length: int) -> list[int]:
    """Where each piece of a write of `length` bytes at `offset` ends, split at the file's 512-byte boundaries."""
    end = offset + length
    ends = [b for b in range((offset // SECTOR + 1) * SECTOR, end, SECTOR)]
    return [*ends, end]


def _grows(disk: Disk, entry: Entry) -> bool:
    """Whether the write ends past its file's size in the live disk (an append, or a write past the end)."""
    node = disk.live.get(entry["file"])
    if node is None or node not in disk.content:
        return False
    length = len(bytes.fromhex(entry["data"]))
    return length > 0 and int(entry["offset"]) + length > len(disk.content[node])
