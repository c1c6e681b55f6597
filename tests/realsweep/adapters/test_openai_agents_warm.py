"""The SDK's warm-up: made once in a sweep's zygote, a user's agent's included (process/warming.py)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from crashsweep.realsweep.process.zygote import Zygote
from tests.realsweep.helpers import child_env, run_python

USERS = textwrap.dedent(
    """
    import threading
    from agents import tracing
    from openai.types.responses import ResponseFunctionToolCall
    import crashsweep.realsweep.adapters.openai_agents  # what a user's agent imports: the warm-up registers

    def run():
        disabled = tracing.get_trace_provider()._disabled
        print(ResponseFunctionToolCall.__pydantic_complete__, threading.active_count(), disabled)
    """
)
"""A user's module: its process says whether it found the SDK's response models built, its threads and tracing."""


def test_a_users_agent_s_zygote_runs_the_sdk_once_before_it_forks(tmp_path: Path) -> None:
    """A child of a user's module's zygote finds the response models built, one thread, tracing left on.

    The module defines no zygote_warm: the adapter it imports registered the warm-up, which
    the zygote called before the fork; its run was not traced, and tracing is left on.
    """
    (tmp_path / "users_agent.py").write_text(USERS)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    zygote = Zygote("users_agent:run", env, tmp_path / "zygote.log")
    try:
        assert zygote.run([], tmp_path, env, tmp_path / "out.txt", 60) == 0, (tmp_path / "out.txt").read_text()
    finally:
        zygote.close()
    assert (tmp_path / "out.txt").read_text().split() == ["True", "1", "False"]


def test_without_a_zygote_nothing_is_warmed(tmp_path: Path) -> None:
    """Importing the adapter only registers the warm-up: a plain process builds the models on first use."""
    code = USERS + "\nrun()\n"
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "1", "False"]
