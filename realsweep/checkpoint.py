"""Real atomic file saves: write a temp file, fsync it, rename it into place, fsync the directory.

A save is two steps so that a crash at any moment leaves either the old file or the new one,
never half of one: `write_tmp` writes the whole content to `<file>.tmp` and fsyncs it;
`rename_into_place` renames it over `<file>` (atomic on POSIX) and fsyncs the directory, so
that the rename itself is durable. A crash between the two leaves a temp file behind: `load`
never reads it, and the next `write_tmp` truncates and overwrites it. The content is JSON.
The caller puts its crash points between the steps (see reference_loop.py); `save` is the
two steps back to back, for code that does not mark points there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

TMP_SUFFIX = ".tmp"


class CheckpointError(RuntimeError):
    """A committed file that cannot be read back (the message names the file)."""


def tmp_path(path: Path) -> Path:
    """The temp file beside `path` that a save writes first."""
    return path.with_name(path.name + TMP_SUFFIX)


def write_tmp(path: Path, data: Any) -> None:
    """Write `data` as JSON to the temp file beside `path`, and fsync it."""
    encoded = json.dumps(data, separators=(",", ":")).encode("utf-8")
    fd = os.open(tmp_path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(encoded)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def rename_into_place(path: Path) -> None:
    """Rename the temp file over `path`, then fsync the directory so the rename is durable."""
    os.replace(tmp_path(path), path)
    fsync_dir(path.parent)


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
