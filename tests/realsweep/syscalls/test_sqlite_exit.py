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

import importlib.util
import subprocess
import sys
from pathlib import Path

from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.sweep import ScenarioResult, SweepOptions, SweepResult, Target, sweep

ROOT = Path(__file__).resolve().parents[3]
JOB = """
import os
import sqlite3
import sys

from crashsweep import TrackerClient

db = sqlite3.connect("job.db", isolation_level=None)
db.execute(f"PRAGMA journal_mode={sys.argv[2] if len(sys.argv) > 2 else 'WAL'}")
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


def _swept(tmp_path: Path, model: str, synchronous: str, mode: str) -> SweepResult:
    """The job swept under `model`, its cuts tried at the tracker's connects and at exit (the commits between)."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "job.py").write_text(JOB, encoding="utf-8")
    spec = importlib.util.spec_from_loader("job_check", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(CHECK, module.__dict__)  # the same check the CLI tests load from its file
    points = Points.parse("syscalls", include="connect")
    options = SweepOptions(depth=1, points=points, workers=2, dedup=False, tracker="keyless")
    target = Target.command([sys.executable, str(tmp_path / "job.py"), synchronous, mode])
    return sweep(target, module.check, options, nemesis=Nemesis(("power-loss",), persistence=model))


def _cuts(result: SweepResult) -> list[ScenarioResult]:
    return [s for s in result.scenarios if s.faults]


def test_wal_normal_loses_commits_under_ordered_but_never_corrupts(tmp_path: Path) -> None:
    """WAL, synchronous=NORMAL: some cut loses a commit, none corrupts the database (SQLite's documentation).

    A power loss may roll back the last commits, and the database is never corrupt. Under
    `ordered` every prefix of the WAL's unsynced writes is a state: some lose a commit (the
    restart files again), none leaves a restart that fails.
    """
    cuts = _cuts(_swept(tmp_path, "ordered", "NORMAL", "WAL"))
    assert cuts
    assert any(s.outcome.dups for s in cuts)
    assert not any(s.outcome.exit_status or s.outcome.stuck for s in cuts)


def test_wal_full_leaves_no_cut_under_alice(tmp_path: Path) -> None:
    """WAL, synchronous=FULL: no cut has a state under alice.

    FULL syncs the WAL at each commit: at the connects and at exit the last call is that fsync
    (b = n), so `alice` has no state anywhere, and nothing is lost.
    """
    result = _swept(tmp_path, "alice", "FULL", "WAL")
    assert _cuts(result) == []
    assert all(s.outcome.dups == 0 for s in result.scenarios)


def test_rollback_full_may_undo_the_last_commit_and_extra_does_not(tmp_path: Path) -> None:
    """Rollback journal (DELETE): FULL may undo the last commit on a cut, EXTRA not; neither corrupts.

    A commit ends by deleting the journal, and under FULL SQLite does not sync the folder after
    it (its documentation: EXTRA adds that sync "to commit a transaction in DELETE mode"). So a
    cut may bring the journal back: the restart rolls the last commit back and files it again,
    but the database is never corrupt. Under EXTRA the delete is the last call and it is
    synced: no state, nothing lost.
    """
    full = _cuts(_swept(tmp_path / "full", "alice", "FULL", "DELETE"))
    assert any(s.outcome.dups for s in full)
    assert not any(s.outcome.exit_status or s.outcome.stuck for s in full)
    extra = _swept(tmp_path / "extra", "alice", "EXTRA", "DELETE")
    assert _cuts(extra) == []
    assert all(s.outcome.dups == 0 for s in extra.scenarios)
