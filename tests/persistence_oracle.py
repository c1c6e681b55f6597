"""The persistence oracle: the crash states of a power cut, per spec/PERSISTENCE.md, from the text alone.

What: `crash_files(model, start, entries)` lists the states of the work folder a cut after all
of `entries` may leave under the model `strict`, `ordered`, `writeback` or `alice`, in the
spec's order. A state (like `start`) is a value: relative path -> the file's bytes, or None for
a folder.

Why a second implementation: the states are easy to get subtly wrong (a torn write's pieces,
a barrier off by one, a rename surviving without its data), so the tests compare the real one
(realsweep/syscalls/persistence.py) against this plain one, written from spec/PERSISTENCE.md
and spec/POINTS.md section 4 rule 2 without reading the real code.

How: a tiny file system of nodes (`_Disk`). A file has a live and a durable content; a folder
has live and durable entries (name -> node). Each journal entry changes the live side; an
fsync copies the live side of its node to the durable side. `ordered`, `writeback` and
`alice` states are each the live state of a modified entry list (a prefix, a prefix plus a
shortened write or a growing truncate, the list without one write, the list with its writes
since the barrier turned into growing truncates); `strict` reads the durable side.

Readings taken where the text leaves room:
- No model lists the prefix of all n calls (live(n), the crash's own), and states are told
  apart by how they are made, never deduplicated by the files they leave (section 1).
- A write of no bytes has no pieces and does not grow its file (POSIX: it changes nothing).
- `strict` gives its one state whenever it differs from live(n) (where the sweep offers it is
  POINTS.md 4 rule 4's reading of the names, not this oracle's).
- `writeback`'s ahead(j) starts from live(b): e1 .. eb all persisted, data included, as the
  barrier says ("every call before it"); the text names only e(b+1) .. ej.
- ahead(j) drops the data of every write among e(b+1) .. e(j-1) at once, never some of them:
  "every write among them without its data". A write after ej is not applied at all.
- "A write among" counts any write, a write of no bytes or one that rewrites the same bytes
  included; ahead(j) exists then even where it leaves the files of prefix(j) or live(n)
  (section 1: states are told apart by how they are made).
- "Its bytes within the old size stay as they were": as they were in ahead(j) itself just
  before that write, so an earlier write since the barrier has left its zeros or old bytes
  there too. The old size is the same as live's: every size change (truncates, growth) is kept.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

Files = dict[str, bytes | None]
"""A work folder as a value: relative path -> file bytes, or None for a folder ("." is no key)."""

SECTOR = 512
"""ALICE's piece size: a write is split at the file offsets that are multiples of this."""

MODELS = ("strict", "ordered", "writeback", "alice")

METADATA = ("create", "truncate", "rename", "exchange", "unlink", "mkdir", "rmdir")
"""The calls `writeback` persists in order (section 2, model 3); a write's data may lag them."""


class _File:
    """A file node: what processes see (`live`) and what the disk holds (`durable`)."""

    __slots__ = ("durable", "live")

    def __init__(self, live: bytes, durable: bytes) -> None:
        self.live, self.durable = live, durable


class _Folder:
    """A folder node: its live entries and its durable ones, each a name -> node map."""

    __slots__ = ("durable", "live")

    def __init__(self, live: dict[str, _Node], durable: dict[str, _Node]) -> None:
        self.live, self.durable = live, durable


_Node = _File | _Folder


class _Disk:
    """The work folder as POINTS.md 4 rule 2 models it: start durable, entries applied live."""

    def __init__(self, start: Files) -> None:
        self.root = _Folder({}, {})
        for path in sorted(start, key=lambda p: p.count("/")):
            content = start[path]
            node: _Node = _Folder({}, {}) if content is None else _File(content, content)
            folder, name = self._parent(path)
            folder.live[name] = node
            folder.durable[name] = node

    def _parent(self, path: str) -> tuple[_Folder, str]:
        """The folder (walked through live entries) that holds `path`'s last name, and that name."""
        *folders, name = path.split("/")
        here = self.root
        for part in folders:
            step = here.live[part]
            assert isinstance(step, _Folder), f"{part} in {path} is no folder"
            here = step
        return here, name

    def _node(self, path: str) -> _Node:
        """The node `path` names live ("." is the work folder)."""
        if path == ".":
            return self.root
        folder, name = self._parent(path)
        return folder.live[name]

    def _file(self, path: str) -> _File:
        node = self._node(path)
        assert isinstance(node, _File), f"{path} is no file"
        return node

    def apply(self, entry: dict[str, Any]) -> None:
        """One journal entry, applied live (an fsync also makes its node durable)."""
        op, path = entry["op"], entry["file"]
        if op == "create":
            folder, name = self._parent(path)
            folder.live[name] = _File(b"", b"")
        elif op == "mkdir":
            folder, name = self._parent(path)
            folder.live[name] = _Folder({}, {})
        elif op in ("unlink", "rmdir"):
            folder, name = self._parent(path)
            del folder.live[name]
        elif op == "write":
            file = self._file(path)
            file.live = written(file.live, entry["offset"], bytes.fromhex(entry["data"]))
        elif op == "truncate":
            file = self._file(path)
            file.live = resized(file.live, entry["length"])
        elif op == "rename":
            old_folder, old_name = self._parent(path)
            new_folder, new_name = self._parent(entry["to"])
            node = old_folder.live.pop(old_name)
            new_folder.live[new_name] = node
        elif op == "exchange":
            a_folder, a_name = self._parent(path)
            b_folder, b_name = self._parent(entry["to"])
            a_folder.live[a_name], b_folder.live[b_name] = b_folder.live[b_name], a_folder.live[a_name]
        elif op == "fsync":
            self._sync(self._node(path))
        else:
            raise ValueError(f"unknown journal op {op!r}")

    @staticmethod
    def _sync(node: _Node) -> None:
        """fsync: a file's live content, or a folder's live entries (names gone live go), made durable."""
        if isinstance(node, _File):
            node.durable = node.live
        else:
            node.durable = dict(node.live)

    def files(self, side: str) -> Files:
        """The work folder as seen from `side` ("live" or "durable"): reachable names, their contents."""
        found: Files = {}

        def walk(folder: _Folder, prefix: str) -> None:
            for name, node in getattr(folder, side).items():
                path = prefix + name
                if isinstance(node, _File):
                    found[path] = getattr(node, side)
                else:
                    found[path] = None
                    walk(node, path + "/")

        walk(self.root, "")
        return found


def written(content: bytes, offset: int, data: bytes) -> bytes:
    """`content` after writing `data` at `offset` (a hole before it reads as zeros)."""
    if not data:
        return content
    padded = content.ljust(offset, b"\0")
    return padded[:offset] + data + padded[offset + len(data) :]


def resized(content: bytes, length: int) -> bytes:
    """`content` truncated or extended with zeros to `length` bytes."""
    return content[:length].ljust(length, b"\0")


def live(start: Files, entries: list[dict[str, Any]]) -> Files:
    """live(k) for k = len(entries): every entry applied in order to the start copy."""
    disk = _Disk(start)
    for entry in entries:
        disk.apply(entry)
    return disk.files("live")


def durable(start: Files, entries: list[dict[str, Any]]) -> Files:
    """POINTS.md 4 rule 2's cut: the durable entries reachable from the work folder, synced contents."""
    disk = _Disk(start)
    for entry in entries:
        disk.apply(entry)
    return disk.files("durable")


def barrier(entries: list[dict[str, Any]]) -> int:
    """b: the place (from 1) of the last fsync among the entries, or 0 when there is none."""
    places = [place for place, entry in enumerate(entries, 1) if entry["op"] == "fsync"]
    return places[-1] if places else 0


def pieces(offset: int, length: int) -> list[int]:
    """The lengths of a write's pieces: [offset, offset + length) split at the multiples of 512."""
    cuts = [offset, *range((offset // SECTOR + 1) * SECTOR, offset + length, SECTOR), offset + length]
    return [end - begin for begin, end in pairwise(cuts)] if length else []


def _lists(model: str, start: Files, entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The modified entry lists whose live states are the `ordered`, `writeback` or `alice` states, in order."""
    b, n = barrier(entries), len(entries)
    found: list[list[dict[str, Any]]] = []
    for k in range(b, n):
        found.append(entries[:k])
        nxt = entries[k]
        if model != "alice" or nxt["op"] != "write":
            continue
        data = bytes.fromhex(nxt["data"])
        kept = 0
        for size in pieces(nxt["offset"], len(data))[:-1]:
            kept += size
            found.append([*entries[:k], {**nxt, "data": data[:kept].hex()}])
        end = nxt["offset"] + len(data)
        if data and end > len(live(start, entries[:k])[nxt["file"]] or b""):
            found.append([*entries[:k], {"op": "truncate", "file": nxt["file"], "length": end}])
    if model == "alice":
        for i in range(b + 1, n):
            if entries[i - 1]["op"] == "write":
                found.append(entries[: i - 1] + entries[i:])
    if model == "writeback":
        for j in range(b + 1, n + 1):
            if entries[j - 1]["op"] in METADATA and any(e["op"] == "write" for e in entries[b : j - 1]):
                found.append(_ahead(start, entries[:b], entries[b:j]))
    return found


def _ahead(start: Files, before: list[dict[str, Any]], since: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ahead(j)'s entry list: e1..eb as they were, then e(b+1)..ej with each write turned into its size change.

    A write keeps only what is metadata: a file it made longer is that long, its new bytes
    zero (a growing truncate); a write that did not grow its file leaves nothing.
    """
    built = list(before)
    for entry in since:
        if entry["op"] != "write":
            built.append(entry)
            continue
        end = entry["offset"] + len(bytes.fromhex(entry["data"]))
        if entry["data"] and end > len(live(start, built)[entry["file"]] or b""):
            built.append({"op": "truncate", "file": entry["file"], "length": end})
    return built


def crash_files(model: str, start: Files, entries: list[dict[str, Any]]) -> list[Files]:
    """The model's crash states of a cut after all `entries`, in the spec's order (strict: [] when it loses nothing)."""
    if model not in MODELS:
        raise ValueError(f"unknown persistence model {model!r}")
    if model == "strict":
        cut = durable(start, entries)
        return [] if cut == live(start, entries) else [cut]
    return [live(start, changed) for changed in _lists(model, start, entries)]
