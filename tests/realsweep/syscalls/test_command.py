"""The shim's command line, and the refusal of a machine that cannot trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.syscalls import command


def test_wrap_runs_the_shim_and_check_passes_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative program path is found from the folder the sweep was started in (processes run elsewhere)."""
    monkeypatch.chdir(tmp_path)
    wrapped = ("-m", command.MODULE, "--", str(tmp_path / "my_loop"), "--no-keys")
    assert command.wrap(["./my_loop", "--no-keys"])[1:] == wrapped
    assert command.wrap(["cc", "x.c"])[-2:] == ("cc", "x.c")
    command.check()


def test_check_refuses_another_system(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "darwin")
    with pytest.raises(ValueError, match="ptrace on Linux; this is darwin"):
        command.check()
