"""Real atomic file saves: write a temp file, fsync it, rename it into place, fsync the directory.

A save is two steps so that a crash at any moment leaves either the old file or the new one,
never half of one: `write_tmp` writes the whole content to `<file>.tmp` and fsyncs it;
`rename_into_place` renames it over `<file>` (atomic on POSIX) and fsyncs the directory, so
that the rename itself is durable. A crash between the two leaves a temp file behind: `load`
never reads it, and the next `write_tmp` truncates and overwrites it. The content is JSON.
The caller puts its crash points between the steps (see reference/loop.py); `save` is the
two steps back to back, for code that does not mark points there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from crashsweep.realsweep.probe import fsjournal

TMP_SUFFIX = ".tmp"


class CheckpointError(RuntimeError):
    """A committed file that cannot be read back (the message names the file)."""


def tmp_path(path: Path) -> Path:
    """The temp file beside `path` that a save writes first."""
    return path.with_name(path.name + TMP_SUFFIX)


def write_tmp(path: Path, data: Any, *, sync: bool = True) -> None:
    """Write `data` as JSON to the temp file beside `path`, and fsync it (unless `sync` is False).

    Each file operation is recorded when a sweep asks for it (fsjournal.py, for power loss).
    """
    encoded = json.dumps(data, separators=(",", ":")).encode("utf-8")
    fsjournal.record("write", path, encoded)
    fd = os.open(tmp_path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(encoded)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
            fsjournal.record("fsync", path)
    finally:
        os.close(fd)


def sync_tmp(path: Path) -> None:
    """fsync the temp file beside `path` (a save whose write did not)."""
    fd = os.open(tmp_path(path), os.O_RDONLY)
    try:
        os.fsync(fd)
        fsjournal.record("fsync", path)
    finally:
        os.close(fd)


def rename_into_place(path: Path, *, sync_dir: bool = True) -> None:
    """Rename the temp file over `path`, then fsync the directory so the rename is durable (unless told not to)."""
    os.replace(tmp_path(path), path)
    fsjournal.record("rename", path)
    if sync_dir:
        sync_directory(path)


def sync_directory(path: Path) -> None:
    """fsync the folder of `path`: the rename made there is durable."""
    fsync_dir(path.parent)
    fsjournal.record("fsync-dir", path)


def save(path: Path, data: Any) -> None:
    """Write the temp file, then rename it into place."""
    write_tmp(path, data)
    rename_into_place(path)


def load(path: Path) -> Any | None:
    """The committed content of `path`, or None when there is none; the temp file is never read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return json.loads(raw)
    except ValueError as error:
        raise CheckpointError(f"{path}: not a checkpoint this loop wrote ({error})") from None


def fsync_dir(directory: Path) -> None:
    """fsync a directory, making the renames and creations inside it durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
