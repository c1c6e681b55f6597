"""SQLite's last commit under a cut at exit (spec/POINTS.md 4 rule 6): WAL, synchronous NORMAL loses it, FULL not.

The program files each issue at the tracker, then records it in a SQLite table in WAL mode
(autocommit: one transaction per issue), and exits without closing the database (no
checkpoint of the WAL at exit). A restart files what the table does not hold.

By the rules: with `synchronous=NORMAL` a commit appends to the WAL without syncing it (SQLite
syncs the WAL at a checkpoint only), so once the program has exited both commits are still
unsynced, and a cut loses them: the restart finds an empty table and files both issues again,
2 duplicates. With `synchronous=FULL` each commit syncs the WAL before it returns, so after the
last call nothing a commit wrote is at risk: the restart finds both rows and files nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
JOB = """
import os
import sqlite3
import sys

from crashsweep import TrackerClient

db = sqlite3.connect("job.db", isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute(f"PRAGMA synchronous={sys.argv[1]}")
db.execute("CREATE TABLE IF NOT EXISTS filed (title TEXT PRIMARY KEY)")
tracker = TrackerClient(os.environ["CRASHSWEEP_TRACKER_URL"])
for title in ("create_a", "create_b"):
    if not db.execute("SELECT 1 FROM filed WHERE title = ?", (title,)).fetchone():
        tracker.create_issue(title, run="run-1", call=title)
        db.execute("INSERT INTO filed VALUES (?)", (title,))
os._exit(0)  # no close, so no checkpoint of the WAL at exit
"""
CHECK = """
from crashsweep import Outcome, Scenario


def check(scenario: Scenario) -> Outcome:
    assert scenario.tracker is not None
    return Outcome.of((record["call"] for record in scenario.tracker.records()), ("create_a", "create_b"))
"""


def _cut_at_exit(tmp_path: Path, synchronous: str) -> str:
    """`crashsweep sweep ... --faults power-loss --crash exit`: the one cut at exit, run for real; its report."""
    (tmp_path / "job.py").write_text(JOB, encoding="utf-8")
    (tmp_path / "job_check.py").write_text(CHECK, encoding="utf-8")
    target = f"{sys.executable} {tmp_path / 'job.py'} {synchronous}"
    command = [str(ROOT / "bin" / "crashsweep"), "sweep", "--points", "syscalls", "--target", target]
    command += ["--check", "job_check:check", "--faults", "power-loss", "--crash", "exit"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


def test_wal_with_synchronous_normal_loses_its_last_commits_at_exit(tmp_path: Path) -> None:
    out = _cut_at_exit(tmp_path, "NORMAL")
    assert "power-loss at exit: the process exits, then the power goes: what was not fsynced is lost" in out
    assert "  dups 2   missing 0   applied 4" in out


def test_wal_with_synchronous_full_keeps_its_last_commits_at_exit(tmp_path: Path) -> None:
    out = _cut_at_exit(tmp_path, "FULL")
    assert "power-loss at exit: the process exits, then the power goes: what was not fsynced is lost" in out
    assert "  dups 0   missing 0   applied 2" in out
