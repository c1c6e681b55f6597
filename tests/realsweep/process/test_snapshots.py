"""Snapshots: a process paused (and stopped) at each crash point while its world is read, then let go on."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.process.snapshots import Snapshots, read_counters
from crashsweep.realsweep.world import capture
from tests.realsweep.helpers import run_python

CODE = textwrap.dedent(
    """
    from pathlib import Path
    from crashsweep.realsweep.probe.crashpoint import count, crashpoint
    for step in (1, 2, 3):
        Path("state.txt").write_text(str(step))
        count("steps")
        crashpoint(f"saved {step}")
    Path("state.txt").write_text("done")
    """
)


def _env(tmp_path: Path, snapshots: Snapshots) -> dict[str, str]:
    return {
        crashpoint.POINTS_LOG: str(tmp_path / "points.log"),
        crashpoint.COUNTERS_LOG: str(tmp_path / "counters.log"),
        crashpoint.SNAPSHOT: str(snapshots.folder),
    }


def test_each_point_shows_the_world_and_counters_it_had_there(tmp_path: Path) -> None:
    """The file says k at point k, 3 points are taken, and the process then goes on to the end."""
    work = tmp_path / "work"
    work.mkdir()
    seen: list[tuple[int, bytes | None, dict[str, int]]] = []

    def take(index: int) -> None:
        seen.append((index, capture(work, None).file("state.txt"), read_counters(tmp_path / "counters.log")))

    snapshots = Snapshots(tmp_path / "snap", take)
    done = run_python(CODE, work, **_env(tmp_path, snapshots))
    assert snapshots.close() == 3
    assert done.returncode == 0, done.stderr
    assert (work / "state.txt").read_text() == "done"
    assert seen == [(k, str(k).encode(), {"steps": k}) for k in (1, 2, 3)]


def test_a_snapshot_that_fails_fails_the_process_and_is_raised(tmp_path: Path) -> None:
    """`take` raises: the process is answered "x" and fails; close raises the same error."""
    work = tmp_path / "work"
    work.mkdir()

    def take(index: int) -> None:
        raise FileNotFoundError("no world here")

    snapshots = Snapshots(tmp_path / "snap", take)
    done = run_python(CODE, work, **_env(tmp_path, snapshots))
    assert done.returncode != 0
    assert "stopped answering" in done.stderr
    with pytest.raises(FileNotFoundError, match="no world here"):
        snapshots.close()
