"""Entry points: "module:function" is parsed strictly and run with exit statuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.realsweep.probe.crashpoint import REFUSED_STATUS
from crashsweep.realsweep.probe.entry import load, parse_entry_point
from tests.realsweep.helpers import child_env


@pytest.mark.parametrize("spec", ["module", "mod:", ":func", "a b:c", "mod:func:x"])
def test_a_malformed_entry_point_is_refused(spec: str) -> None:
    """Only module:function (dotted names) is accepted."""
    with pytest.raises(ValueError, match="expected module:function"):
        parse_entry_point(spec)


def test_load_names_what_is_missing() -> None:
    """A missing module or attribute is named in the message."""
    with pytest.raises(ValueError, match="cannot import"):
        load("no_such_module_here:run")
    with pytest.raises(ValueError, match="has no 'nothing'"):
        load("crashsweep.realsweep.probe.entry:nothing")
    assert load("crashsweep.realsweep.probe.entry:parse_entry_point") is parse_entry_point


def test_a_module_that_fails_as_it_loads_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A syntax error or an exception at the module's top level: ValueError naming it (one line, exit 2)."""
    (tmp_path / "broken_syntax_mod.py").write_text("def run(:\n")
    (tmp_path / "raising_mod.py").write_text("raise RuntimeError('no config')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"^broken_syntax_mod:run: cannot import 'broken_syntax_mod': SyntaxError: "):
        load("broken_syntax_mod:run")
    with pytest.raises(ValueError, match=r"^raising_mod:run: cannot import 'raising_mod': RuntimeError: no config$"):
        load("raising_mod:run")


def test_the_runner_exits_0_after_the_function_returns(tmp_path: Path) -> None:
    """`python -m crashsweep.realsweep.probe.entry mod:func` calls the function; a raise exits 1 with the traceback."""
    (tmp_path / "mod.py").write_text("def ok():\n    print('ran')\n\ndef bad():\n    raise KeyError('x')\n")
    env = child_env(PYTHONPATH=f"{tmp_path}:{child_env()['PYTHONPATH']}")
    ok = subprocess.run(
        [sys.executable, "-m", "crashsweep.realsweep.probe.entry", "mod:ok"], env=env, capture_output=True, text=True
    )
    assert (ok.returncode, ok.stdout) == (0, "ran\n")
    bad = subprocess.run(
        [sys.executable, "-m", "crashsweep.realsweep.probe.entry", "mod:bad"], env=env, capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert "KeyError" in bad.stderr


def test_a_program_that_refuses_the_sweep_exits_with_the_refused_status_and_its_words(tmp_path: Path) -> None:
    """SweepRefused: no traceback, its message on stderr, crashpoint.REFUSED_STATUS (the sweep stops with it)."""
    (tmp_path / "mod.py").write_text(
        "from crashsweep.realsweep.probe.crashpoint import SweepRefused\n\n"
        "def refuse():\n    raise SweepRefused('sweep every scenario from scratch (--no-dedup)')\n"
    )
    env = child_env(PYTHONPATH=f"{tmp_path}:{child_env()['PYTHONPATH']}")
    done = subprocess.run(
        [sys.executable, "-m", "crashsweep.realsweep.probe.entry", "mod:refuse"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (REFUSED_STATUS, "sweep every scenario from scratch (--no-dedup)\n")
