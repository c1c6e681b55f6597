"""The DBOS adapter (dbos 3.4.0): crash points on step and workflow records, tracker steps, launch or recover."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.helpers import child_env

AGENT = [sys.executable, "-m", "crashsweep.realsweep.adapters.dbos_agent"]


def expected_points() -> list[str]:
    """One uninterrupted run of the triage workflow, derived from the workflow's code.

    The workflow's start is recorded (one point after it); its seven steps (ask, create_a,
    create_b, ask, search, comment_a, the final ask) each pass a point before and after their
    result is recorded; the three writes pass a point after the tracker answered, before that;
    the final status is recorded between two points: 1 + 14 + 3 + 2 = 20.
    """
    points = ["after recording the workflow's start"]
    tool_points = {
        2: "tracker filed issue create_a",
        3: "tracker filed issue create_b",
        6: "tracker commented comment comment_a",
    }
    for step in range(1, 8):
        if step in tool_points:
            points.append(tool_points[step])
        points += [f"before recording step {step}", f"after recording step {step}"]
    return [*points, "before recording workflow triage SUCCESS", "after recording workflow triage SUCCESS"]


def run_agent(workdir: Path, url: str, *args: str, crash_at: str = "") -> tuple[int, list[str]]:
    """One process of the DBOS example agent; its status and the points it passed."""
    log = workdir / "points.log"
    log.unlink(missing_ok=True)
    env = child_env(
        CRASHSWEEP_TRACKER_URL=url,
        CRASHSWEEP_WORKDIR=str(workdir),
        CRASHSWEEP_POINTS_LOG=str(log),
        CRASHSWEEP_CRASH_AT=crash_at,
    )
    done = subprocess.run([*AGENT, *args], cwd=workdir, env=env, capture_output=True, text=True, check=False)
    assert done.returncode in (0, *(-9, crashpoint.KILLED_STATUS)), done.stderr
    return done.returncode, log.read_text().splitlines() if log.exists() else []


def test_a_run_passes_the_points_of_every_record_in_order(tmp_path: Path, keyed_service: ServiceProcess) -> None:
    """The 20 points, in order; a second process finds the workflow done and does nothing."""
    url = keyed_service.space_url("dbos")
    status, points = run_agent(tmp_path, url)
    assert status == 0
    assert points == expected_points()
    assert run_agent(tmp_path, url) == (0, [])
    assert [r["call"] for r in TrackerClient(url).records()] == ["create_a", "create_b", "comment_a"]


def test_the_internal_queue_s_poll_is_set_where_dbos_keeps_it() -> None:
    """internal_queue_poll: DBOS's internal queue, where recovery puts a workflow, looks every N seconds.

    A sweep leaves it at DBOS's second (its worker looks at once when recovery re-enqueues:
    test_dbos_waits sets it to an hour and recovers all the same).
    """
    from dbos._dbos import _get_or_create_dbos_registry

    from crashsweep.realsweep.adapters.dbos import POLL, internal_queue_poll

    internal_queue_poll(POLL)
    assert _get_or_create_dbos_registry().get_internal_queue()._polling_interval_sec == POLL
    internal_queue_poll(1.0)


def test_a_swept_process_s_config_migrates_only_a_database_not_laid_down_migrated(tmp_path: Path) -> None:
    """sweep_config: SQLite at the path given, the short poll, and migrations off for a migrated template."""
    from crashsweep.realsweep.adapters.dbos import POLL, sweep_config

    fresh = sweep_config("agent", tmp_path / "dbos.sqlite", migrated_already=False)
    laid = sweep_config("agent", tmp_path / "dbos.sqlite", migrated_already=True)
    assert fresh["system_database_url"] == f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    assert fresh["notification_listener_polling_interval_sec"] == POLL
    assert (fresh["run_migrations"], laid["run_migrations"]) == (True, False)
