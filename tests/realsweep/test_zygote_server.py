"""The zygote's own side: it imports no threading, so a forked child runs no fork handler of it."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from crashsweep.realsweep.zygote import Zygote
from crashsweep.realsweep.zygote_server import _become
from tests.realsweep.helpers import child_env

MODULE = textwrap.dedent(
    """
    import sys
    import crashsweep.realsweep.reference_loop  # everything a swept process of the reference loop imports

    def main():
        print("threading" in sys.modules, "subprocess" in sys.modules)
    """
)


def test_neither_the_zygote_nor_the_reference_loop_imports_threading(tmp_path: Path) -> None:
    """A child of the zygote of the reference loop's modules finds no threading (nor subprocess) imported."""
    (tmp_path / "probe.py").write_text(MODULE)
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")
    zygote = Zygote("probe:main", env, tmp_path / "zygote.log", flags=("-S",))
    try:
        assert zygote.run([], tmp_path, env, tmp_path / "out.txt", 30) == 0
    finally:
        zygote.close()
    assert (tmp_path / "out.txt").read_text().split() == ["False", "False"]


def test_become_sets_only_the_variables_that_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment ends up exactly the request's: one variable changed, one added, one removed."""
    monkeypatch.setenv("ZS_SAME", "1")
    monkeypatch.setenv("ZS_CHANGED", "old")
    monkeypatch.setenv("ZS_GONE", "x")
    wanted = {**os.environ, "ZS_CHANGED": "new", "ZS_ADDED": "2"}
    del wanted["ZS_GONE"]
    _become(wanted)
    assert dict(os.environ) == wanted
    monkeypatch.delenv("ZS_ADDED")
