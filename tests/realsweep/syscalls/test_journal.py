"""The journal of a traced program's calls on its work folder, and the start copy beside it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from crashsweep.realsweep.syscalls import durable
from tests.realsweep.syscalls.conftest import points, shim


def test_each_call_on_the_work_folder_is_on_record_with_its_data(tmp_path: Path) -> None:
    """create, truncate and write (the bytes, at their offset), an append, fsync, rename, unlink, mkdir."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "old").write_text("x", encoding="utf-8")
    journal = tmp_path / "journal.jsonl"
    script = "printf ab > f; printf c >> f; sync f; mv f g; rm old; mkdir d; echo out"
    run = shim(["/bin/sh", "-c", script], work, CRASHSWEEP_FS_JOURNAL=str(journal))
    assert run.returncode == 0
    entries = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    ops = [(e["op"], e["file"], e.get("to", bytes.fromhex(e.get("data", "")).decode())) for e in entries]
    assert ops == [
        ("create", "f", ""),
        ("truncate", "f", ""),
        ("write", "f", "ab"),
        ("write", "f", "c"),
        ("fsync", "f", ""),
        ("rename", "f", "g"),
        ("unlink", "old", ""),
        ("mkdir", "d", ""),
    ]
    assert [e["offset"] for e in entries if e["op"] == "write"] == [0, 2]  # the append lands at the end
    assert (Path(str(journal) + ".start") / "old").read_text(encoding="utf-8") == "x"
    assert points(work)[:2] == ["write f", "write f"]


def test_a_killed_call_is_not_on_record(tmp_path: Path) -> None:
    """Killed at the rename: the rename never ran, and the journal ends before it."""
    work, journal = tmp_path / "work", tmp_path / "journal.jsonl"
    work.mkdir()
    crash = {"CRASHSWEEP_CRASH_AT": "2", "CRASHSWEEP_FS_JOURNAL": str(journal)}
    run = shim(["/bin/sh", "-c", "printf ab > f; mv f g"], work, **crash)
    assert run.returncode == -9
    assert [json.loads(line)["op"] for line in journal.read_text(encoding="utf-8").splitlines()] == [
        "create",
        "truncate",
        "write",
    ]
    assert (work / "f").exists()


def test_a_write_through_a_synchronous_descriptor_is_on_record_with_its_fsync(tmp_path: Path) -> None:
    """O_DSYNC (and O_SYNC, which includes it): the write returns once its data is durable.

    So it is on record as the write and an fsync of its file (spec/POINTS.md 4 rule 1), and a
    cut keeps its data. A write through a plain descriptor of the same file is not synced.
    """
    work, journal = tmp_path / "work", tmp_path / "journal.jsonl"
    work.mkdir()
    (work / "m").write_bytes(b"")
    program = (
        "import os\n"
        "fd = os.open('m', os.O_WRONLY | os.O_CREAT | os.O_DSYNC, 0o644); os.pwrite(fd, b'meta', 0)\n"
        "plain = os.open('m', os.O_WRONLY); os.pwrite(plain, b'data', 4)\n"
        "s = os.open('s', os.O_WRONLY | os.O_CREAT | os.O_SYNC, 0o644); os.write(s, b'x')\n"
    )
    run = shim([sys.executable, "-c", program], work, CRASHSWEEP_FS_JOURNAL=str(journal))
    assert run.returncode == 0
    entries = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert [(e["op"], e["file"]) for e in entries] == [
        ("write", "m"),
        ("fsync", "m"),
        ("write", "m"),
        ("create", "s"),
        ("write", "s"),
        ("fsync", "s"),
    ]
    left = durable.replay({"m": b""}, entries).after_cut()  # m was there; s's entry never synced on "."
    assert left == {"m": b"meta"}
