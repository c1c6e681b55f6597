"""Auto points: a Python program's effects become crash points, named by effect and call site, with no marks.

Each expected list is read off the small program the test writes (one line per effect, in the
order the program makes them, with the rules of spec/POINTS.md section 2), not off a run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from crashsweep.realsweep.probe import crashpoint
from tests.realsweep.helpers import child_env

KILLED = (-9, crashpoint.KILLED_STATUS)

PROGRAM = textwrap.dedent(
    """\
    import os
    import socket
    from crashsweep.realsweep.probe.crashpoint import crashpoint


    def save(text):
        with open("state.tmp", "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace("state.tmp", "state.json")


    def run():
        crashpoint("marked start")
        save("one")
        left, right = socket.socketpair()
        left.sendall(b"ask")
        right.sendall(right.recv(3))
        left.recv(3)
        os.mkdir("done")
        os.remove("state.json")
        import helper_mod
        crashpoint("marked end")
    """
)
"""Lines 7 (open for writing), 10 (fsync), 11 (rename), 18-20 (send, answer, reply), 21 (mkdir), 22 (remove)."""

EFFECTS = [
    "before write state.tmp @ prog.py:7",
    "before fsync state.tmp @ prog.py:10",
    "after fsync state.tmp @ prog.py:10",
    "before rename state.tmp -> state.json @ prog.py:11",
    "after rename state.tmp -> state.json @ prog.py:11",
    "before send unix @ prog.py:18",
    "before send unix @ prog.py:19",  # the other end answers: its own send; its recv had sent nothing
    "after reply unix @ prog.py:20",  # the first data back on the socket that sent: the peer answered
    "before mkdir done @ prog.py:21",
    "before remove state.json @ prog.py:22",
]


def _run(tmp_path: Path, points: str, crash_at: str = "0", **extra: str) -> tuple[int, list[str], Path]:
    """Run prog:run as a sweep's process would, with CRASHSWEEP_POINTS=points; its status, points, work folder.

    Each run has a folder of its own under `tmp_path` (run-1, run-2, ...).
    """
    tmp_path = tmp_path / f"run-{len(list(tmp_path.glob('run-*'))) + 1}"
    tmp_path.mkdir()
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "prog.py").write_text(PROGRAM)
    (source / "helper_mod.py").write_text("VALUE = 1\n")  # imported late: its bytecode cache is no point
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    log = tmp_path / "points.log"
    env = child_env(**extra)
    env["PYTHONPATH"] = os.pathsep.join([str(source), env["PYTHONPATH"]])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        CRASHSWEEP_POINTS=points,
        CRASHSWEEP_POINTS_LOG=str(log),
        CRASHSWEEP_CRASH_AT=crash_at,
        CRASHSWEEP_WORKDIR=str(work),
    )
    done = subprocess.run(
        [sys.executable, "-m", "crashsweep.realsweep.probe.entry", "prog:run"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, *KILLED), done.stderr
    return done.returncode, log.read_text().splitlines() if log.exists() else [], work


def test_auto_alone_finds_each_effect_and_passes_the_marks_silently(tmp_path: Path) -> None:
    status, points, work = _run(tmp_path, "auto")
    assert status == 0
    assert points == EFFECTS
    assert (work / "done").is_dir()
    assert (work.parent / "src" / "__pycache__").is_dir()  # the late import did write its cache: not a point


def test_marked_and_auto_keeps_both_in_the_order_passed(tmp_path: Path) -> None:
    _, points, _ = _run(tmp_path, "marked,auto")
    assert points == ["marked start", *EFFECTS, "marked end"]


def test_a_kill_at_an_after_point_leaves_the_effect_done(tmp_path: Path) -> None:
    """Killed just after the rename: the state is in place, nothing later happened."""
    status, points, work = _run(tmp_path, "auto", "1:after rename state.tmp -> state.json @ prog.py:11")
    assert status in KILLED
    assert points == EFFECTS[:5]
    assert (work / "state.json").read_text() == "one"
    assert not (work / "state.tmp").exists()


def test_a_kill_at_a_before_point_comes_before_the_effect(tmp_path: Path) -> None:
    status, points, work = _run(tmp_path, "auto", "1:before rename state.tmp -> state.json @ prog.py:11")
    assert status in KILLED
    assert points == EFFECTS[:4]
    assert (work / "state.tmp").exists()
    assert not (work / "state.json").exists()


def test_filters_keep_and_drop_by_kind_and_glob(tmp_path: Path) -> None:
    _, kept, _ = _run(tmp_path, "auto", CRASHSWEEP_POINTS_INCLUDE="rename,*done*")
    assert kept == [EFFECTS[3], EFFECTS[4], EFFECTS[8]]
    _, dropped, _ = _run(tmp_path, "auto", CRASHSWEEP_POINTS_EXCLUDE="fsync,send,reply")
    assert dropped == [EFFECTS[0], EFFECTS[3], EFFECTS[4], EFFECTS[8], EFFECTS[9]]


def test_sqlite_commits_are_points_before_and_after(tmp_path: Path) -> None:
    """A connection opened after the start (sqlite3 imported late) still has its commits found."""
    code = textwrap.dedent(
        """\
        def run():
            import sqlite3
            db = sqlite3.connect("db.sqlite3")
            db.execute("create table t (x)")
            db.execute("insert into t values (1)")
            db.commit()
            with db:
                db.execute("insert into t values (2)")
        """
    )
    global PROGRAM
    saved, PROGRAM = PROGRAM, code
    try:
        _, points, _ = _run(tmp_path, "auto")
    finally:
        PROGRAM = saved
    # SQLite opens its file in C, with no audit event: its commits are its points
    assert points == [
        "before commit db.sqlite3 @ prog.py:6",
        "after commit db.sqlite3 @ prog.py:6",
        "before commit db.sqlite3 @ prog.py:7",  # `with db:` commits in C, at the end of its block
        "after commit db.sqlite3 @ prog.py:7",
    ]


def test_names_are_the_same_over_two_runs(tmp_path: Path) -> None:
    first, second = _run(tmp_path, "auto"), _run(tmp_path, "auto")
    assert first[1] == second[1] == EFFECTS
