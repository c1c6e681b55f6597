"""Snapshots: a process paused at each crash point while its world is copied, then let go on."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from realsweep import crashpoint
from realsweep.digest import read_world
from realsweep.snapshot import Snapshots, read_counters
from tests.realsweep.helpers import run_python

CODE = textwrap.dedent(
    """
    from pathlib import Path
    from realsweep.crashpoint import count, crashpoint
    for step in (1, 2, 3):
        Path("state.txt").write_text(str(step))
        count("steps")
        crashpoint(f"saved {step}")
    Path("state.txt").write_text("done")
    """
)


def _run(tmp_path: Path, snapshots: Snapshots) -> int:
    done = run_python(
        CODE,
        snapshots.workdir,
        **{
            crashpoint.POINTS_LOG: str(tmp_path / "points.log"),
            crashpoint.COUNTERS_LOG: str(snapshots.counters_log),
            crashpoint.SNAPSHOT: str(snapshots.folder),
        },
    )
    return done.returncode


def test_each_point_leaves_the_world_and_counters_it_had_there(tmp_path: Path) -> None:
    """The file says k at point k; the process then goes on to the end."""
    work = tmp_path / "work"
    work.mkdir()
    snapshots = Snapshots(tmp_path / "snap", work, None, tmp_path / "counters.log")
    status = _run(tmp_path, snapshots)
    taken = snapshots.close()
    assert status == 0
    assert (work / "state.txt").read_text() == "done"
    assert taken == {1: {"steps": 1}, 2: {"steps": 2}, 3: {"steps": 3}}
    for k in (1, 2, 3):
        assert read_world(tmp_path / "snap" / f"w{k}").file("state.txt") == str(k).encode()
    assert read_counters(tmp_path / "counters.log") == {"steps": 3}


def test_a_copy_that_fails_fails_the_process_and_is_raised(tmp_path: Path) -> None:
    """The folder to copy is not there: the process is answered "x" and fails; close raises the copy's error."""
    work = tmp_path / "work"
    work.mkdir()
    snapshots = Snapshots(tmp_path / "snap", tmp_path / "not-there", None, tmp_path / "counters.log")
    env = {crashpoint.POINTS_LOG: str(tmp_path / "points.log"), crashpoint.SNAPSHOT: str(snapshots.folder)}
    done = run_python(CODE, work, **env)
    assert done.returncode != 0
    assert "stopped answering" in done.stderr
    with pytest.raises(FileNotFoundError):
        snapshots.close()
