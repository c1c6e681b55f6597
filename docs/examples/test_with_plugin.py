"""crashsweep's pytest plugin in your own test suite: designs checked like any other test.

The plugin comes with crashsweep (it is registered with pytest when crashsweep is installed).
Run it as any test module:

    pytest docs/examples/test_with_plugin.py

A marked test explores its design before its body runs; the `crashsweep` fixture does the same
on call. Either fails the test with the shortest counterexample, its trace and the command that
replays it (`crashsweep replay ... --path CODE`), so the failure says what to run next.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.pytest_plugin import Crashsweep

MY_DESIGN = Path(__file__).resolve().parent.parent / "my-design.toml"


@pytest.mark.crashsweep("agent-loop", depth=2)
def test_agent_loop_survives_two_crashes() -> None:
    """The marker explores agent-loop with up to two crashes; any violation fails this test."""


def test_my_design_keeps_every_invariant(crashsweep: Crashsweep) -> None:
    """A design file, explored on the built-in job with the keyed tracker at depth 1."""
    crashsweep.check(design=MY_DESIGN, depth=1)


def test_save_after_reply_duplicates_a_write(crashsweep: Crashsweep) -> None:
    """`explore` returns the row and the counterexamples, to assert on what is expected to fail."""
    explored = crashsweep.explore("save-after-reply", depth=1)
    assert not explored.holds
    assert explored.shortest is not None
    assert explored.shortest.invariant == "no-duplicate"
    assert "replay: crashsweep replay --variant save-after-reply" in explored.failure()
