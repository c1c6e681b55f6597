"""Tests of crashsweep.cli.artifacts: files are written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crashsweep.cli import artifacts, runs
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED


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


def test_render_makes_the_files_one_by_one_with_the_page_last(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without dot: traces, DOT sources and the pytest file of each counterexample, then index.html, in that order.

    The replay commands in them start with the program given.
    """
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    exploration, summary = runs.run("save-after-reply", runs.Choices(TRIAGE, "triage", KEYED, 1, 10_000))
    report = artifacts.start(exploration, summary, None)
    assert report.dot_missing
    files = artifacts.render(exploration, summary, None, report, ("/abs/bin/crashsweep",))
    first = next(files)
    assert first[0] == "no-duplicate.trace.txt"
    assert report.files == dict([first])  # lazy: nothing else made yet
    names = [first[0]] + [name for name, _ in files]
    assert names == [
        "no-duplicate.trace.txt",
        "no-duplicate.trace.json",
        "no-duplicate.graph.dot",
        "no-duplicate.sequence.dot",
        "test_save_after_reply_violates_no_duplicate.py",
        "index.html",
    ]
    assert "replay: /abs/bin/crashsweep replay --variant save-after-reply" in report.files["no-duplicate.trace.txt"]
    assert "/abs/bin/crashsweep replay --variant save-after-reply" in report.files["index.html"]
