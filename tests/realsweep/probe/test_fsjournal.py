"""The journal of the checkpoint's file operations, and the disk a power cut leaves (spec/FAULTS.md 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.probe import checkpoint
from crashsweep.realsweep.probe.fsjournal import JOURNAL, at_risk, cut


def _save(path: Path, data: object, fsync: str) -> None:
    """A checkpoint save under `fsync`, as the reference loop makes it."""
    checkpoint.write_tmp(path, data, sync=False)
    if fsync != "none":
        checkpoint.sync_tmp(path)
    checkpoint.rename_into_place(path, sync_dir=False)
    if fsync == "full":
        checkpoint.sync_directory(path)


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "journal.jsonl"
    monkeypatch.setenv(JOURNAL, str(path))
    return path


def test_no_journal_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JOURNAL, raising=False)
    _save(tmp_path / "c.json", {"a": 1}, "none")
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_full_save_loses_nothing(tmp_path: Path, journal: Path) -> None:
    """Temp file and directory fsynced: a cut after the save is a crash."""
    path = tmp_path / "c.json"
    _save(path, {"v": 1}, "full")
    assert not cut(tmp_path, journal)
    assert checkpoint.load(path) == {"v": 1}


def test_no_dir_fsync_undoes_the_last_rename_only(tmp_path: Path, journal: Path) -> None:
    """Rule 6.2.3: the checkpoint before the rename comes back, with the synced temp file beside it."""
    path = tmp_path / "c.json"
    _save(path, {"v": 1}, "no-dir-fsync")
    _save(path, {"v": 2}, "no-dir-fsync")
    assert cut(tmp_path, journal)
    assert checkpoint.load(path) == {"v": 1}  # the first save's rename was durable once the second began
    assert checkpoint.tmp_path(path).read_text() == '{"v":2}'


def test_an_unsynced_file_renamed_into_place_is_left_unreadable(tmp_path: Path, journal: Path) -> None:
    """Rule 6.2.4: none: an empty checkpoint, which the loop cannot read."""
    path = tmp_path / "c.json"
    _save(path, {"v": 1}, "none")
    assert cut(tmp_path, journal)
    assert path.read_bytes() == b""
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint.load(path)


def test_an_unsynced_temp_file_is_lost(tmp_path: Path, journal: Path) -> None:
    """Rule 6.2.2: cut before the rename: the old checkpoint stays, the temp file is gone."""
    path = tmp_path / "c.json"
    _save(path, {"v": 1}, "full")
    checkpoint.write_tmp(path, {"v": 2}, sync=False)
    assert cut(tmp_path, journal)
    assert checkpoint.load(path) == {"v": 1}
    assert not checkpoint.tmp_path(path).exists()


def test_the_points_at_risk_per_policy() -> None:
    """The window of each policy, read off the points' names; the lock file's saves never put anything at risk."""
    full = ["lock: tmp written", "lock: renamed", "a: tmp written", "a: tmp synced", "a: renamed", "a: dir synced", "x"]
    assert at_risk(full) == [False, False, True, False, True, False, False]
    no_dir = ["a: tmp written", "a: tmp synced", "a: renamed", "x", "b: tmp written", "b: tmp synced"]
    assert at_risk(no_dir) == [True, False, True, True, True, False]
    none = ["a: tmp written", "a: renamed", "x"]
    assert at_risk(none) == [True, True, True]
