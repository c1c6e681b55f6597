"""Tests of crashsweep.artifacts: files are written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crashsweep import artifacts


def test_write_atomic_replaces_whole_files_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write replaces the file; a failed rename leaves the old file and no temp file behind."""
    target = tmp_path / "index.html"
    artifacts.write_atomic(target, "old")
    artifacts.write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new"

    def fail(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        artifacts.write_atomic(target, "newer")
    assert target.read_text(encoding="utf-8") == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]
