"""Tests of benchmarks/process_rate.py and its lean forker (fork_limit.py): the machine's limit as measured."""

from __future__ import annotations

import ast
import importlib
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep.tracker.service import ServiceProcess

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
process_rate: Any = importlib.import_module("process_rate")


def test_the_forker_imports_only_what_a_lean_fork_needs() -> None:
    """fork_limit.py imports os, resource, socket, sys and time, and nothing of crashsweep: its forks stay cheap."""
    tree = ast.parse((BENCHMARKS / "fork_limit.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not any(isinstance(node, ast.ImportFrom) for node in ast.walk(tree))
    assert imported == {"os", "resource", "socket", "sys", "time"}


def test_the_limit_forks_every_child_with_and_without_a_request(tmp_path: Path) -> None:
    """Bare forks and forks that ask the real tracker service: a rate and a CPU time per process each."""
    rate, cpu = process_rate.limit(7, 2, None)
    assert rate > 0
    assert cpu > 0
    with ServiceProcess(tmp_path, "keyed") as service:
        rate, cpu = process_rate.limit(6, 2, service)
    assert rate > 0
    assert cpu > 0


def test_a_request_that_fails_fails_the_limit() -> None:
    """A child whose request is not answered 200 (nothing listens there) stops the measurement."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: a connection is refused
        forker = subprocess.run(
            [sys.executable, "-S", str(BENCHMARKS / "fork_limit.py"), "3", "127.0.0.1", str(port)],
            input="go\n",
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    assert forker.returncode == 1
    assert forker.stdout.splitlines() == ["ready"]
    assert forker.stderr.strip().splitlines()[-1] == "a child failed"


@pytest.mark.parametrize("args", [("--count", "1", "--workers", "2"), ("--depth", "0"), ("--count", "ten")])
def test_bad_options_exit_2_with_one_line(args: tuple[str, ...]) -> None:
    """Fewer children than workers, depth 0, a count that is no number: one line on stderr, exit 2, nothing run."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "process_rate.py"), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
