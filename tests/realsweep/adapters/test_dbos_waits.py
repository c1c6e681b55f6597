"""DBOS's waits ended at their events (dbos_waits): a restart recovers with every poll set to an hour."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from crashsweep.realsweep.adapters.dbos_waits import Wake
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.adapters.test_dbos import expected_points
from tests.realsweep.helpers import child_env

HOURLY = (
    "import sys\n"
    "from crashsweep.realsweep.adapters import dbos, dbos_agent\n"
    "dbos.POLL = 3600.0  # the notification listener's sleep, which destroy joins\n"
    "dbos.internal_queue_poll(3600.0)  # the internal queue's worker, which runs a recovered workflow\n"
    "raise SystemExit(dbos_agent.main([]))\n"
)
"""One process of the built-in DBOS agent whose DBOS polls once an hour: only the events end its waits."""


def finished(thread: threading.Thread) -> bool:
    """Whether `thread` ended (a generous join: a wait that is never ended hangs, and fails here)."""
    thread.join(timeout=60)
    return not thread.is_alive()


def test_a_nudge_before_the_queue_s_look_is_not_lost_and_a_wake_ends_a_sleep() -> None:
    """A nudge given while nobody waits ends the next look at once; wake ends every sleep under way."""
    wake = Wake()
    wake.nudge()
    looked = threading.Thread(target=wake.look, args=(None,))
    looked.start()
    assert finished(looked)
    sleepers = [threading.Thread(target=wake.sleep, args=(3600.0,)) for _ in range(2)]
    for sleeper in sleepers:
        sleeper.start()
    while any(sleeper.is_alive() for sleeper in sleepers):
        wake.wake()  # a wake before a sleeper began ends nothing: woken again until both are
        sleepers[0].join(timeout=0.01)
    assert all(finished(sleeper) for sleeper in sleepers)


def run(workdir: Path, url: str, crash_at: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """One hourly-polling process of the agent; it and the points it passed."""
    log = workdir / "points.log"
    log.unlink(missing_ok=True)
    env = child_env(
        CRASHSWEEP_TRACKER_URL=url,
        CRASHSWEEP_WORKDIR=str(workdir),
        CRASHSWEEP_POINTS_LOG=str(log),
        CRASHSWEEP_CRASH_AT=crash_at,
    )
    done = subprocess.run(
        [sys.executable, "-c", HOURLY], cwd=workdir, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    return done, log.read_text().splitlines() if log.exists() else []


def test_a_restart_is_recovered_and_ends_without_waiting_out_an_hourly_poll(
    tmp_path: Path, keyed_service: ServiceProcess
) -> None:
    """Crash at the second write's record; the restart's recovery is dequeued, awaited and shut down by events.

    Polled once an hour, the recovered workflow would wait an hour to be dequeued (the timeout
    above fails it) and destroy would give up joining the listener after 10 s with a warning.
    The restart passes the rest of the points, in order, and the tracker holds each write once.
    """
    url = keyed_service.space_url("hourly")
    points = expected_points()
    crash = points.index("after recording step 3")
    first, passed = run(tmp_path, url, str(crash + 1))
    assert first.returncode == -9, first.stderr
    assert passed == points[: crash + 1]
    restart, passed = run(tmp_path, url, "")
    assert restart.returncode == 0, restart.stderr
    assert passed == points[crash + 1 :]
    assert "did not exit within timeout" not in restart.stderr
    assert [r["call"] for r in TrackerClient(url).records()] == ["create_a", "create_b", "comment_a"]


def test_the_dbos_and_pydantic_ai_adapters_register_their_warm_ups_with_the_zygote() -> None:
    """Imported by a user's agent, each adapter has the zygote call its warm-up (process/warming.py), once in effect."""
    from crashsweep.realsweep.adapters import dbos, pydantic_ai
    from crashsweep.realsweep.process import warming

    assert dbos.warm_up in warming.WARMERS
    assert pydantic_ai.warm_up in warming.WARMERS
    for warm in (dbos.warm_up, pydantic_ai.warm_up):
        warm([])
        warm([])  # the zygote calls it before every fork: after the first, it returns at once
