"""The built-in DBOS agent's system database, migrated once in the zygote and laid down in each fresh world."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from crashsweep.realsweep.adapters import dbos as dbos_adapter
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.adapters.test_dbos import expected_points
from tests.realsweep.helpers import child_env, run_python

WARMED = (
    "import sys\n"
    "from crashsweep.realsweep.adapters import dbos_agent\n"
    "dbos_agent.zygote_warm([])\n"
    "raise SystemExit(dbos_agent.main([]))\n"
)
"""One process as the sweep's zygote makes it: zygote_warm (the migration, once), then the agent's main."""


def schema(database: Path) -> tuple[list[tuple[str, ...]], int]:
    """A SQLite database's schema (every object's type, name, table and SQL) and its DBOS migration version."""
    with sqlite3.connect(database) as connection:
        objects = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
        (version,) = connection.execute("SELECT version FROM dbos_migrations").fetchone()
    connection.close()
    return objects, version


def env(workdir: Path, url: str) -> dict[str, str]:
    return {
        "CRASHSWEEP_TRACKER_URL": url,
        "CRASHSWEEP_WORKDIR": str(workdir),
        "CRASHSWEEP_POINTS_LOG": str(workdir / "points.log"),
    }


def test_the_template_is_the_system_database_a_launch_migrates(tmp_path: Path, keyed_service: ServiceProcess) -> None:
    """Without a template the agent's launch migrates its own database; the template has the same schema and version."""
    plain = tmp_path / "plain"
    plain.mkdir()
    agent = [sys.executable, "-m", "crashsweep.realsweep.adapters.dbos_agent"]
    run = subprocess.run(
        agent,
        cwd=plain,
        env=child_env(**env(plain, keyed_service.space_url("plain"))),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    template = tmp_path / "template.sqlite"
    template.write_bytes(dbos_adapter.migrated())
    assert schema(template) == schema(plain / dbos_adapter.SYSTEM_DATABASE)
    with sqlite3.connect(template) as connection:
        assert connection.execute("SELECT count(*) FROM workflow_status").fetchone() == (0,)
    connection.close()


def test_a_warmed_process_lays_the_template_and_runs_the_workflow(
    tmp_path: Path, keyed_service: ServiceProcess
) -> None:
    """After zygote_warm a process in an empty work directory copies the template, launches and passes all 20 points.

    A process run the plain way (its launch migrating, here finding the schema current) then
    finds the workflow done: the laid-down copy is a system database DBOS reads as its own.
    """
    url = keyed_service.space_url("warmed")
    done = run_python(WARMED, tmp_path, **env(tmp_path, url))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "points.log").read_text().splitlines() == expected_points()
    assert (tmp_path / dbos_adapter.SYSTEM_DATABASE).exists()
    (tmp_path / "points.log").unlink()
    agent = [sys.executable, "-m", "crashsweep.realsweep.adapters.dbos_agent"]
    again = subprocess.run(
        agent, cwd=tmp_path, env=child_env(**env(tmp_path, url)), capture_output=True, text=True, check=False
    )
    assert again.returncode == 0, again.stderr
    assert not (tmp_path / "points.log").exists()
    assert [r["call"] for r in TrackerClient(url).records()] == ["create_a", "create_b", "comment_a"]
