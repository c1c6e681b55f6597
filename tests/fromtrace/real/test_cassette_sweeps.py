"""Recorded, derived, swept offline: two stacks' built-in agents and a user's own agent (slow: real processes).

For each agent, one run is recorded as a user records it, with $CRASHSWEEP_OTLP set (the built-in
pydantic-ai and DBOS agents trace themselves under it) or, for the user's own pydantic-ai agent
(docs/examples/my_pydantic_agent.py), with the two lines of docs/guide/from-trace.md around its
`run` (crashsweep.otel.otlp_file and pydantic-ai's `Agent.instrument_all`); `crashsweep
from-trace` derives the four files. What is checked, against the runs themselves:

- the derived points.txt is `sweep --list-points --format json` of the agent as swept (the user's
  agent without the recording lines), every name and pass, in order;
- `sweep --depth 1 --cassette cassette.jsonl` prints the row the scripted sweep prints (every
  line but the processes' time and the re-run command, which names the cassette; the user's
  agent's, keys off, re-runs its counterexample offline as printed, as the plain one does), with every
  swept process unable to reach the network: a sitecustomize on their path adds an audit hook
  that refuses, and logs, any connection or name lookup beyond loopback (the tracker is on
  127.0.0.1). The log must stay empty; a control process shows the hook refuses and logs.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.realsweep.helpers import child_env

EXAMPLES = ROOT / "docs" / "examples"
AGENTS = {
    "pydantic-ai": ["--framework", "pydantic-ai"],
    "dbos": ["--framework", "dbos"],
    "my_pydantic_agent": [
        "--target",
        "my_pydantic_agent:run",
        "--check",
        "my_pydantic_agent:check",
        "--arg",
        "keys=off",
    ],
}
"""Each agent as swept; the user's agent without keys, so that its row has a counterexample to re-run."""
BLOCK = """
import ipaddress, os, socket, sys

def _blocked(what):
    with open(os.environ["BLOCKED_LOG"], "a", encoding="utf-8") as log:
        log.write(what + "\\n")
    raise OSError(f"network blocked by the test: {what}")

def _loopback(host):
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False

def _hook(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple) and not _loopback(args[1][0]):
        _blocked(f"connect {args[1]!r}")
    elif event == "socket.getaddrinfo" and not _loopback(args[0] if isinstance(args[0], str) else None):
        _blocked(f"getaddrinfo {args[0]!r}")

sys.addaudithook(_hook)
"""
RECORDING = '''
"""The user's agent with the two recording lines of docs/guide/from-trace.md."""
import os

from pydantic_ai import Agent, InstrumentationSettings

import my_pydantic_agent
from crashsweep.otel import otlp_file

CRASHSWEEP_ARGS = my_pydantic_agent.CRASHSWEEP_ARGS
check = my_pydantic_agent.check


def run() -> None:
    provider = otlp_file(os.environ["RECORD_TO"])
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    try:
        my_pydantic_agent.run()
    finally:
        provider.shutdown()
'''


def crashsweep(cwd: Path, *args: str, **env: str) -> str:
    """`python -m crashsweep ARGS` in `cwd` with `env` added; its stdout (exit 0 or 1: a finding)."""
    done = subprocess.run([sys.executable, "-m", "crashsweep", *args], cwd=cwd, env=child_env(**env),
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


def _with_path(env: dict[str, str], folder: Path) -> dict[str, str]:
    return {**env, "PYTHONPATH": f"{folder}:{child_env()['PYTHONPATH']}"}


@pytest.fixture(scope="module", params=sorted(AGENTS))
def derived(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """(the agent, the folder from-trace wrote) of one recorded run."""
    agent: str = request.param
    folder = tmp_path_factory.mktemp(agent)
    trace = folder / "run.jsonl"
    if agent == "my_pydantic_agent":
        (folder / "recorded_agent.py").write_text(textwrap.dedent(RECORDING), encoding="utf-8")
        env = _with_path({"RECORD_TO": str(trace)}, folder)
        record = ["--target", "recorded_agent:run", "--check", "recorded_agent:check"]
        crashsweep(EXAMPLES, "sweep", *record, "--list-points", **env)
    else:
        crashsweep(ROOT, "sweep", *AGENTS[agent], "--list-points", CRASHSWEEP_OTLP=str(trace))
    crashsweep(ROOT, "from-trace", str(trace), "--out", str(folder / "out"))
    return agent, folder


def _cwd(agent: str) -> Path:
    return EXAMPLES if agent == "my_pydantic_agent" else ROOT


def test_the_derived_points_are_the_sweeps(derived: tuple[str, Path]) -> None:
    agent, folder = derived
    listed = json.loads(crashsweep(_cwd(agent), "sweep", *AGENTS[agent], "--list-points", "--format", "json"))
    expected = [f"{p['name']}#{p['occurrence']}" for p in listed["points"]]
    lines = (folder / "out" / "points.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == expected


def _row(text: str) -> list[str]:
    """A sweep's row, less the processes' time and the re-run command."""
    return [line for line in text.splitlines() if not line.lstrip().startswith(("processes", "re-run"))]


def test_the_cassette_sweeps_offline_to_the_scripted_row(derived: tuple[str, Path]) -> None:
    agent, folder = derived
    (folder / "offline").mkdir(exist_ok=True)
    (folder / "offline" / "sitecustomize.py").write_text(textwrap.dedent(BLOCK), encoding="utf-8")
    log = folder / "blocked.log"
    log.write_text("", encoding="utf-8")
    env = _with_path({"BLOCKED_LOG": str(log)}, folder / "offline")
    control = subprocess.run([sys.executable, "-c", "import socket; socket.socket().connect(('192.0.2.1', 80))"],
                             env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert "network blocked by the test" in control.stderr
    assert log.read_text(encoding="utf-8") == "connect ('192.0.2.1', 80)\n"
    log.write_text("", encoding="utf-8")
    sweep = ["sweep", *AGENTS[agent], "--depth", "1", "--color", "never", "--no-determinism"]  # not what this tests
    cassette = str(folder / "out" / "cassette.jsonl")
    offline = crashsweep(_cwd(agent), *sweep, "--cassette", cassette, **env)
    assert log.read_text(encoding="utf-8") == ""  # no swept process, nor the sweep, tried the network
    plain = crashsweep(_cwd(agent), *sweep)
    assert _row(offline) == _row(plain)
    if agent == "my_pydantic_agent":  # its re-run line names the cassette, and re-runs offline as printed
        again, before = _rerun(offline), _rerun(plain)
        assert again[again.index("--cassette") + 1] == cassette
        again, before = again[again.index("sweep") :], before[before.index("sweep") :]  # after `python -m crashsweep`
        assert _row(crashsweep(_cwd(agent), *again, **env)) == _row(crashsweep(_cwd(agent), *before))
        assert log.read_text(encoding="utf-8") == ""


def _rerun(text: str) -> list[str]:
    """The words of a row's first re-run command."""
    line = next(line for line in text.splitlines() if "re-run (" in line)
    return shlex.split(line.partition("):  ")[2])
