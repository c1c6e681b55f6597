"""The zygote's own side: no threading imported (no fork handler runs in a child), environments sent as changes."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from crashsweep.realsweep.process.zygote import Zygote
from crashsweep.realsweep.process.zygote_server import _become
from tests.realsweep.helpers import child_env

MODULE = textwrap.dedent(
    """
    import sys
    import crashsweep.realsweep.reference.loop  # everything a swept process of the reference loop imports

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


def test_become_applies_the_changes_a_request_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value sets its variable, None removes it (absent or not), the rest stays as the zygote's."""
    monkeypatch.setenv("ZS_SAME", "1")
    monkeypatch.setenv("ZS_CHANGED", "old")
    monkeypatch.setenv("ZS_GONE", "x")
    monkeypatch.delenv("ZS_ADDED", raising=False)
    wanted = {**os.environ, "ZS_CHANGED": "new", "ZS_ADDED": "2"}
    del wanted["ZS_GONE"]
    _become({"ZS_CHANGED": "new", "ZS_ADDED": "2", "ZS_GONE": None, "ZS_NEVER_SET": None})
    assert dict(os.environ) == wanted
    monkeypatch.delenv("ZS_ADDED")


def test_a_request_names_only_how_its_environment_differs_and_a_child_gets_exactly_it(tmp_path: Path) -> None:
    """The parent sends the differences from the zygote's environment; the child's is the whole requested one."""
    (tmp_path / "envmod.py").write_text("import json, os\ndef main():\n    print(json.dumps(dict(os.environ)))\n")
    env = child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}", ZS_A="1", ZS_B="2")
    zygote = Zygote("envmod:main", env, tmp_path / "zygote.log")
    try:
        wanted = {**env, "ZS_B": "changed", "ZS_C": "new"}
        del wanted["ZS_A"]
        assert zygote._changes(wanted) == {"ZS_A": None, "ZS_B": "changed", "ZS_C": "new"}
        assert zygote.run([], tmp_path, wanted, tmp_path / "out.txt", 30) == 0
        assert zygote.run([], tmp_path, {}, tmp_path / "empty.txt", 30) == 0
    finally:
        zygote.close()
    assert json.loads((tmp_path / "out.txt").read_text()) == wanted
    assert json.loads((tmp_path / "empty.txt").read_text()) == {}
