"""What the real importers' tests share: a depth-1 sweep kept in a folder, and whether a run finished."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from crashsweep.spec.history import FINISHED, Event
from tests.paths import ROOT
from tests.realsweep.helpers import child_env


def swept(tmp_path_factory: pytest.TempPathFactory, *args: str) -> Path:
    """The folder `crashsweep sweep ARGS --depth 1 --keep FOLDER` kept (run from the checkout, exit 0 or 1)."""
    folder = tmp_path_factory.mktemp("sweep") / "kept"
    command = [sys.executable, "-m", "crashsweep", "sweep", *args, "--depth", "1", "--keep", str(folder)]
    done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: the sweep found violations (keys off)
    return folder


def finished(events: Iterable[Event]) -> bool:
    """Whether the events hold a `run_status` ok `finished`."""
    return any(e.f == "run_status" and (e.type, e.status) == ("ok", FINISHED) for e in events)
