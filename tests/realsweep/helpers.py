"""Helpers of the realsweep tests: child environments and a one-shot Python process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from crashsweep.realsweep.tracker.service import package_pythonpath


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child Python that imports this package, without the sweep's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRASHSWEEP_")}
    env.pop("PYTHONUNBUFFERED", None)  # a test checks that buffered output is lost in a crash
    env["PYTHONPATH"] = package_pythonpath()
    env.update(extra)
    return env


def run_python(code: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh Python process in `cwd`; its status and output."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=child_env(**extra), capture_output=True, text=True, check=False
    )
