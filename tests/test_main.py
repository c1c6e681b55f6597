"""Tests of crashsweep.__main__: the entry point of `python -m crashsweep` and the `crashsweep` script."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import pytest

from crashsweep.__main__ import run


class _CtrlCOnImport(importlib.abc.MetaPathFinder):
    """Ctrl-C while crashsweep.cli.main loads: its import raises KeyboardInterrupt, as the signal would."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "crashsweep.cli.main":
            raise KeyboardInterrupt
        return None


def test_ctrl_c_while_the_cli_loads_is_one_line_and_exit_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No traceback from an interrupted import: the same line as an interrupted command."""
    monkeypatch.delitem(sys.modules, "crashsweep.cli.main", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_CtrlCOnImport(), *sys.meta_path])
    assert run() == 130
    assert capsys.readouterr() == ("", "crashsweep: interrupted; nothing was written\n")


def test_run_runs_the_command_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Otherwise it is crashsweep.cli.main.main on the process's arguments: `variants` lists the designs, exit 0."""
    monkeypatch.setattr(sys, "argv", ["crashsweep", "variants"])
    assert run() == 0
    assert "save-after-reply" in capsys.readouterr().out


def test_python_m_crashsweep_version_names_the_program() -> None:
    """`python -m crashsweep --version`: the program's name and version, not the interpreter's path."""
    import subprocess

    import crashsweep

    done = subprocess.run(
        [sys.executable, "-m", "crashsweep", "--version"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"crashsweep, version {crashsweep.__version__}\n", "")
