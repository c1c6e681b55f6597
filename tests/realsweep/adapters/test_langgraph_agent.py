"""The built-in LangGraph agent as real processes: SQLite checkpoints, a crash, a restart that resumes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.realsweep.adapters.langgraph_agent import defined, parse, zygote_warm
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.helpers import child_env

AGENT = [sys.executable, "-m", "crashsweep.realsweep.adapters.langgraph_agent"]
KILLED = (-9, crashpoint.KILLED_STATUS)


def run_agent(workdir: Path, url: str, *args: str, crash_at: str = "") -> int:
    """One process of the agent in `workdir`; its exit status."""
    env = child_env(
        CRASHSWEEP_TRACKER_URL=url,
        CRASHSWEEP_WORKDIR=str(workdir),
        CRASHSWEEP_POINTS_LOG=str(workdir / "points.log"),
        CRASHSWEEP_CRASH_AT=crash_at,
    )
    done = subprocess.run([*AGENT, *args], cwd=workdir, env=env, capture_output=True, text=True, check=False)
    assert done.returncode in (0, *KILLED), done.stderr
    return done.returncode


@pytest.mark.parametrize(("keys", "filed"), [("off", 2), ("on", 1)])
def test_a_crash_after_a_tool_call_reruns_the_tools_on_restart(
    tmp_path: Path, keyed_service: ServiceProcess, keys: str, filed: int
) -> None:
    """Killed right after the tracker filed create_b, before the tools' writes were saved.

    The restart resumes from the checkpoint of step 1 and runs both tool calls again: keys off,
    create_b is filed twice; keys on (from thread and tool call IDs, stable), once.
    """
    url = keyed_service.space_url(f"lg-{keys}")
    args = ("--keys", keys, "--durability", "sync")
    assert run_agent(tmp_path, url, *args, crash_at="1:tracker filed issue create_b") in KILLED
    assert run_agent(tmp_path, url, *args) == 0
    calls = [r["call"] for r in TrackerClient(url).records()]
    assert calls.count("create_b") == filed
    assert calls.count("comment_a") == 1


def test_the_agents_defaults_are_langgraphs() -> None:
    """Keys on, the job's call IDs, durability async (LangGraph's default)."""
    args = parse([])
    assert (args.keys, args.call_ids, args.durability, args.job) == ("on", "stable", "async", None)


def test_the_zygote_defines_the_graph_once_per_command_line() -> None:
    """zygote_warm makes the job and the graph's definition once; a process of the same options finds them made.

    Another durability shares the definition (it is an option of the run, not of the graph);
    other keys make another one.
    """
    argv = ["--keys", "off", "--durability", "sync"]
    zygote_warm(argv)
    job, made = defined(parse(argv))
    zygote_warm(argv)
    assert defined(parse(argv))[1] is made
    assert defined(parse(["--keys", "off", "--durability", "exit"]))[1] is made
    assert defined(parse(["--keys", "on"]))[1] is not made
    assert job.name == "triage"
    assert set(made.nodes) == {"agent", "tools"}
