"""What a power cut leaves of the work folder: the start copy, the journal, and the persistence model.

spec/POINTS.md section 4 states the model (after ALICE's, the strictest of its file systems:
nothing persists that the program did not force). A file is a node with its content; a
folder maps names to nodes. Each node and each folder entry has a live value (what the
process sees) and a durable one (what the disk holds):

1. the work folder as the process found it is durable (the start copy: older data is on disk);
2. a write, a truncate or a create changes the live content; fsync or fdatasync of the file
   makes its live content durable (a new file's durable content is empty until then);
3. a create, rename, unlink, mkdir or rmdir changes the live entries of its folders; fsync of
   a folder makes its live entries durable (each name of the folder: the node it names, or
   none), and nothing else makes an entry durable;
4. a cut leaves the durable entries, reachable from the work folder, each file with its
   node's durable content: unsynced data is lost whole (an append is undone, a partial write
   leaves nothing of itself), an unsynced rename is undone (the old node is back under its
   name, the new one gone unless its own entry was durable).

`cut` replays the journal (journal.py) on the start copy and lays the result out in the work
folder. Standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crashsweep.realsweep.syscalls.journal import START

ROOT = "."
Files = dict[str, bytes | None]
"""A work folder as a value: relative path -> a file's bytes, or None for a folder."""


@dataclass
class Disk:
    """The live and durable state of a work folder, node by node.

    Live entries are kept by path (what the process names); durable ones by the folder node
    they belong to and their name, as a file system keeps them: a folder's entries are its
    node's, so a folder renamed takes its durable entries with it (its own entry in its old
    parent stays as the disk has it until that parent's fsync).
    """

    live: dict[str, int] = field(default_factory=dict)
    durable: dict[tuple[int, str], int] = field(default_factory=dict)
    content: dict[int, bytes] = field(default_factory=dict)
    synced: dict[int, bytes] = field(default_factory=dict)
    folders: set[int] = field(default_factory=lambda: {0})
    nodes: int = 0

    @classmethod
    def of(cls, files: Files) -> Disk:
        """A disk whose live and durable state are both `files` (rule 1)."""
        disk = cls(live={ROOT: 0})
        for path, data in sorted(files.items(), key=lambda item: (item[0].count("/"), item[0])):
            node = disk.new(data)
            disk.live[path] = node
            disk.durable[(disk.live[parent(path)], os.path.basename(path))] = node
            if data is not None:
                disk.synced[node] = data
        return disk

    def new(self, data: bytes | None) -> int:
        """A new node: a file with `data` (durable content empty), or a folder (None)."""
        self.nodes += 1
        if data is None:
            self.folders.add(self.nodes)
        else:
            self.content[self.nodes], self.synced[self.nodes] = data, b""
        return self.nodes

    def apply(self, entry: dict[str, Any]) -> None:
        """One journal line."""
        op, path = entry["op"], entry["file"]
        node = self.live.get(path)
        if op == "create" or (op == "mkdir" and node is None):
            self.live[path] = self.new(b"" if op == "create" else None)
        elif op in ("write", "truncate") and node in self.content:
            assert node is not None
            self.content[node] = _changed(self.content[node], entry)
        elif op == "fsync" and node in self.folders:
            self._sync_folder(path)
        elif op == "fsync" and node in self.content:
            assert node is not None
            self.synced[node] = self.content[node]
        elif op in ("rename", "exchange") and node is not None:
            self._rename(path, entry["to"], op == "exchange")
        elif op in ("unlink", "rmdir"):
            self.live.pop(path, None)

    def _sync_folder(self, folder: str) -> None:
        """Rule 3: each name in `folder`, live, becomes durable (its node's entries are its live ones)."""
        node = self.live[folder]
        for key in [key for key in self.durable if key[0] == node]:
            del self.durable[key]
        for path, child in self.live.items():
            if path != ROOT and parent(path) == folder:
                self.durable[(node, os.path.basename(path))] = child

    def _rename(self, old: str, new: str, exchange: bool) -> None:
        if exchange:
            if new in self.live:
                self.live[old], self.live[new] = self.live[new], self.live[old]
            return
        moved = {path: node for path, node in self.live.items() if path == old or path.startswith(old + "/")}
        for path in [p for p in self.live if p == new or p.startswith(new + "/")]:
            del self.live[path]
        for path, node in moved.items():
            del self.live[path]
            self.live[new + path[len(old) :]] = node

    def after_cut(self) -> Files:
        """Rule 4: the durable entries reachable from the work folder, with their nodes' durable content."""
        entries: dict[int, list[tuple[str, int]]] = {}
        for (folder, name), node in self.durable.items():
            entries.setdefault(folder, []).append((name, node))
        left: Files = {}
        walk: list[tuple[int, str, frozenset[int]]] = [(0, "", frozenset({0}))]
        while walk:
            folder, prefix, above = walk.pop()
            for name, node in sorted(entries.get(folder, [])):
                path = prefix + name
                if node in self.folders:
                    left[path] = None
                    if node not in above:  # never into a folder's own ancestry
                        walk.append((node, path + "/", above | {node}))
                else:
                    left[path] = self.synced[node]
        return dict(sorted(left.items()))

    def files(self) -> Files:
        """The live state: what a crash (not a cut) leaves."""
        return {p: None if n in self.folders else self.content[n] for p, n in self.live.items() if p != ROOT}


def parent(path: str) -> str:
    """The folder a relative path lies in ("." for the work folder)."""
    return os.path.dirname(path) or ROOT


def _changed(data: bytes, entry: dict[str, Any]) -> bytes:
    """A file's content after a write (bytes at an offset, zeros before them past the end) or a truncate."""
    if entry["op"] == "truncate":
        length = int(entry["length"])
        return data[:length].ljust(length, b"\0")
    offset, written = int(entry["offset"]), bytes.fromhex(entry["data"])
    return data[:offset].ljust(offset, b"\0") + written + data[offset + len(written) :]


def read(folder: Path) -> Files:
    """A folder's files and subfolders as a value (symbolic links read as the files they point at)."""
    found: Files = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        found[name] = None if path.is_dir() else path.read_bytes()
    return found


def lay_out(folder: Path, files: Files) -> None:
    """Make `folder` hold exactly `files`."""
    for path in folder.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    for name, data in sorted(files.items(), key=lambda item: item[0].count("/")):
        if data is None:
            (folder / name).mkdir()
        else:
            (folder / name).write_bytes(data)


def replay(start: Files, entries: list[dict[str, Any]]) -> Disk:
    """The disk after the journal's `entries`, from the work folder `start`."""
    disk = Disk.of(start)
    for entry in entries:
        disk.apply(entry)
    return disk


def traced(journal: Path) -> bool:
    """Is `journal` the tracer's (its start copy beside it), not the probe's marked saves' (probe/fsjournal.py)?"""
    return Path(str(journal) + START).is_dir()


def recorded(journal: Path) -> tuple[Files, list[dict[str, Any]]]:
    """The work folder as the process found it (the start copy beside the journal) and the journal's entries."""
    lines = journal.read_text(encoding="utf-8").splitlines() if journal.exists() else []
    start = Path(str(journal) + START)
    return (read(start) if start.exists() else {}), [json.loads(line) for line in lines]


def cut(workdir: Path, journal: Path) -> bool:
    """Leave in `workdir` what a power cut leaves (the journal and its start copy); whether it changed anything."""
    left = replay(*recorded(journal)).after_cut()
    if read(workdir) == left:
        return False
    lay_out(workdir, left)
    return True
