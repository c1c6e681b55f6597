"""Fixtures of the syscall tests: docs/examples/my_loop.c compiled once per session, a run of the shim, a docs check."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from crashsweep.realsweep.syscalls import command
from crashsweep.realsweep.values import Check
from tests.conftest import require_tool

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


def example_check(module: str) -> Check:
    """The `check` of the docs example `module` (a .py file in EXAMPLES), loaded from its file (no package)."""
    spec = importlib.util.spec_from_file_location(module, EXAMPLES / f"{module}.py")
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    found: Check = loaded.check
    return found


@pytest.fixture(scope="session")
def my_loop_c(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/examples/my_loop.c, compiled with cc (the test is skipped without cc, failed under CI=true)."""
    cc = require_tool("cc")
    binary = tmp_path_factory.mktemp("my_loop_c") / "my_loop"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", str(binary), str(EXAMPLES / "my_loop.c")], check=True)
    return binary


def shim(argv: list[str], workdir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `argv` under the shim in `workdir` (its points log beside it) with `env` added; its status and output."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("CRASHSWEEP_")}
    clean |= {"CRASHSWEEP_WORKDIR": str(workdir), "CRASHSWEEP_POINTS_LOG": str(workdir) + ".points", **env}
    return subprocess.run(
        command.wrap(argv), cwd=workdir, env=clean, capture_output=True, text=True, check=False, timeout=60
    )


def points(workdir: Path) -> list[str]:
    """The points the shim logged for the run in `workdir`."""
    log = Path(str(workdir) + ".points")
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []
