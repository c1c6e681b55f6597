"""A process started from a command line: its exit status, and its descendants gone once it has ended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.realsweep.process import grouped
from tests.realsweep.process.kin import alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")

LEAVES = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("daemon", "w").write(str(os.getpid())); time.sleep(60)
    os._exit(0)
if os.fork() == 0:
    open("child", "w").write(str(os.getpid())); time.sleep(60)
time.sleep(0.3)
sys.exit(int(sys.argv[1]))
"""


def test_its_status_is_returned_and_its_child_and_setsid_daemon_are_gone(tmp_path: Path) -> None:
    env = {"MARK": str(tmp_path)}
    status = grouped.run(
        [sys.executable, "-c", LEAVES, "3"],
        tmp_path,
        env,
        tmp_path / "out",
        30,
        grouped.Groups(),
        ("MARK", str(tmp_path)),
    )
    assert status == 3
    pids = [int((tmp_path / name).read_text()) for name in ("child", "daemon")]
    wait_until(lambda: not any(alive(pid) for pid in pids), 5.0, "its descendants end")


def test_a_process_past_its_timeout_is_killed_with_its_group(tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        grouped.run(
            [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, {}, tmp_path / "out", 0.5,
            grouped.Groups(), ("MARK", str(tmp_path)),
        )  # fmt: skip
