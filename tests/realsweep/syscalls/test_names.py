"""Point names of system calls, the noise that is no point, and the power cut's risk read off names."""

from __future__ import annotations

from pathlib import Path

from crashsweep.realsweep.syscalls import names
from crashsweep.realsweep.syscalls.calls import Effect

TRACKER = {"CRASHSWEEP_TRACKER_URL": "http://127.0.0.1:8765/spaces/s-1"}


def namer(tmp_path: Path, **env: str) -> names.Namer:
    return names.Namer(str(tmp_path), {**TRACKER, **env})


def test_files_are_named_relative_to_the_work_folder_and_peers_in_brackets(tmp_path: Path) -> None:
    """The tracker is "<tracker>" whatever its port; other peers by address; files outside by full path."""
    name = namer(tmp_path).name
    work = str(tmp_path.resolve())
    assert name(Effect("write", "write", (f"{work}/a/s.tmp",), "file")) == "write a/s.tmp"
    assert name(Effect("renameat2", "rename", (f"{work}/s.tmp", f"{work}/s"))) == "renameat2 s.tmp -> s"
    assert name(Effect("fsync", "fsync", (work,), "dir")) == "fsync ."
    assert name(Effect("unlink", "unlink", ("/var/tmp/x",))) == "unlink /var/tmp/x"
    assert name(Effect("connect", "connect", sort="socket", peer="127.0.0.1:8765")) == "connect <tracker>"
    assert name(Effect("sendto", "send", sort="socket", peer="10.0.0.1:53")) == "sendto <10.0.0.1:53>"


def test_noise_is_no_point(tmp_path: Path) -> None:
    """Pipes and ttys, /dev, bytecode caches, the sweep's own logs: no point; the work folder may lie under /dev."""
    log = tmp_path / "points.log"
    name = namer(tmp_path, CRASHSWEEP_POINTS_LOG=str(log)).name
    assert name(Effect("write", "write", ("pipe:[12]",), "other")) is None
    assert name(Effect("write", "write", ("/dev/null",), "other")) is None
    assert name(Effect("mkdir", "mkdir", ("/dev/shm/x",))) is None
    assert name(Effect("mkdir", "mkdir", ("/usr/lib/python3/__pycache__",))) is None
    assert name(Effect("write", "write", (str(log.resolve()),), "file")) is None
    assert name(Effect("openat", "open", (str(tmp_path / "f"),), flags=0o100)) is None  # read for power loss only
    assert names.Namer("/dev/shm/w", {}).name(Effect("write", "write", ("/dev/shm/w/s",), "file")) == "write s"


def test_parse_reads_a_name_back_and_refuses_marked_names() -> None:
    assert names.parse("rename s.tmp -> s") == ("rename", ("s.tmp", "s"))
    assert names.parse("write <tracker>") == ("write", ("<tracker>",))
    assert names.parse("reply 1: tmp written") is None
    assert names.parse("lock: renamed") is None


NO_FSYNC = ["write s.tmp", "rename s.tmp -> s", "connect <tracker>", "write <tracker>", "write s.tmp"]
FULL = ["write s.tmp", "fsync s.tmp", "rename s.tmp -> s", "fsync .", "connect <tracker>", "write <tracker>"]


def test_at_risk_before_each_call() -> None:
    """A kill strikes before its call: the risk at point i is what calls 1..i-1 left unsynced.

    No fsync: nothing before the first write; from then on the temp file (data and entry) and
    the rename stay unsynced. Full save: the write leaves data and entry unsynced; the file's
    fsync makes the data durable but the entry is pending until "fsync ."; after it, nothing is
    at risk until the next write (the sends are the tracker's, remote).
    """
    assert names.at_risk(NO_FSYNC) == [False, True, True, True, True]
    assert names.at_risk(FULL) == [False, True, True, True, False, False]
    assert names.at_risk(["write /tmp/outside", "connect <tracker>"]) == [False, False]


def test_calls_the_filters_dropped_still_put_their_files_at_risk() -> None:
    """--points-exclude chooses where a cut is tried, never what it loses (issue 41, item 5).

    The append to `wal` is dropped (the shim logs it as the pause "excluded write wal" after 0
    points): the full save of `s` that follows leaves `wal`'s data unsynced, so the point after
    the save is at risk; pauses of other kinds change nothing.
    """
    kept = [*FULL[:4], "mkdir done"]
    assert names.at_risk(kept) == [False, True, True, True, False]
    dropped = ((0, "excluded write wal"), (4, "timeout chance 1 run x"))
    assert names.at_risk(kept, dropped) == [True, True, True, True, True]
    assert names.at_risk(kept, ((0, "excluded fsync wal"),)) == [False, True, True, True, False]
    assert names.excluded_pause("excluded write wal") == "write wal"
    assert names.excluded_pause("person answers 1") is None
