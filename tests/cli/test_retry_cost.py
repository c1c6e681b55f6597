"""Tests of crashsweep.cli.retry_cost: the one line that names the retry layer multiplying an exploration's work."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep.cli import retry_cost
from crashsweep.cli.main import main
from crashsweep.spec.retries import Layer
from crashsweep.variants.design_file import load_design

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT = EXAMPLES / "keys-turn-timeout-file.toml"


def test_explore_names_the_timeout_layer_on_stderr_before_its_row(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/keys-turn-timeout-file.toml (turn x2 on timeout): one line on stderr, the row on stdout."""
    status = main(["explore", "--design", str(TIMEOUT), "--job", str(EXAMPLES / "one-write.toml"), "--depth", "1"])
    out, err = capsys.readouterr()
    assert status == 1
    assert "crash points" in out
    assert err.splitlines() == [
        "crashsweep: keys-turn-timeout-file: retry layer 'turn x2 on timeout' multiplies the work: at each crash"
        " point of a turn in flight a new attempt starts beside the one given up on, which may wake at each of its"
        " points: up to x(P+2) the scenarios for P crash points a process (x17 for 15 per move), over 1 move(s)"
        " of depth 1"
    ]


def test_a_run_scope_layer_multiplies_every_point_and_compounds_with_its_attempts() -> None:
    """Scope run: every crash point a site, x(P+2) per move, compounding over min(depth, N - 1) moves."""
    design = load_design(TIMEOUT).design
    run3 = replace(design, name="run3", retries=(Layer("call", "timeout", 2), Layer("run", "timeout", 3)))
    found = retry_cost.line(run3, 4)
    assert found is not None
    assert found.startswith("crashsweep: run3: retry layer 'run x3 on timeout' multiplies the work: at every crash")
    assert found.endswith(
        ": x(P+2)^2 the scenarios for P crash points a process (x17 for 15 per move), over 2 move(s) of depth 4"
    )
    assert retry_cost.moves(Layer("run", "timeout", None), 4) == 4


def test_no_line_without_a_timeout_layer(capsys: pytest.CaptureFixture[str]) -> None:
    """Layers on errors add a retry move per write, not a factor: nothing is said."""
    design = load_design(EXAMPLES / "keys-run-retry.toml").design
    assert retry_cost.line(design, 3) is None
    retry_cost.warn(design, 3)
    assert capsys.readouterr().err == ""
