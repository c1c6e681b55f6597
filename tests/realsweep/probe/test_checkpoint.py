"""Atomic saves: the committed file is whole, and a temp file left by a crash is never read."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from crashsweep.realsweep.probe import checkpoint
from tests.realsweep.helpers import run_python


def test_a_save_round_trips_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """save then load gives the data back; the temp file was renamed away."""
    path = tmp_path / "state.json"
    assert checkpoint.load(path) is None
    checkpoint.save(path, {"run": "r1", "turns": [1, 2]})
    assert checkpoint.load(path) == {"run": "r1", "turns": [1, 2]}
    assert not checkpoint.tmp_path(path).exists()


def test_a_temp_file_left_by_a_crash_is_ignored_on_restart(tmp_path: Path) -> None:
    """A process killed between write_tmp and the rename leaves a temp file; the restart reads the old state."""
    code = textwrap.dedent(
        """
        from pathlib import Path
        from crashsweep.realsweep.probe import checkpoint
        from crashsweep.realsweep.probe.crashpoint import crashpoint
        path = Path("state.json")
        checkpoint.save(path, {"version": 1})
        checkpoint.write_tmp(path, {"version": 2})
        crashpoint("tmp written")
        checkpoint.rename_into_place(path)
        """
    )
    crashed = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(tmp_path / "p.log"), CRASHSWEEP_CRASH_AT="1")
    assert crashed.returncode in (-9, 137)
    path = tmp_path / "state.json"
    assert checkpoint.tmp_path(path).read_text() == '{"version":2}'
    restart = run_python(
        "from pathlib import Path\n"
        "from crashsweep.realsweep.probe import checkpoint\n"
        "print(checkpoint.load(Path('state.json')))",
        tmp_path,
    )
    assert restart.stdout.strip() == "{'version': 1}"
    checkpoint.save(path, {"version": 3})  # the next save overwrites the stale temp file
    assert checkpoint.load(path) == {"version": 3}
    assert not checkpoint.tmp_path(path).exists()


def test_a_longer_stale_temp_file_is_truncated_by_the_next_save(tmp_path: Path) -> None:
    """write_tmp truncates: no tail of an older, longer temp file survives."""
    path = tmp_path / "state.json"
    checkpoint.tmp_path(path).write_text('{"a very long": "stale content that is longer than the new one"}')
    checkpoint.save(path, {"n": 1})
    assert checkpoint.load(path) == {"n": 1}


def test_a_file_that_is_not_json_is_reported(tmp_path: Path) -> None:
    """A committed file that is not JSON fails with a message naming the file."""
    path = tmp_path / "state.json"
    path.write_text("not json")
    with pytest.raises(checkpoint.CheckpointError, match=r"state\.json"):
        checkpoint.load(path)
