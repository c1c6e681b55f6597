"""The runner's choice of interpreter flags for a target's zygote (its scenarios are run by test_engine/test_graph)."""

from __future__ import annotations

import sys

import pytest

from crashsweep.realsweep.runner import _flags
from crashsweep.realsweep.scenarios import Target


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        ((sys.executable, "-S", "-m", "pkg.loop", "--variant", "x"), ("-S",)),
        ((sys.executable, "-S", "-B", "-m", "pkg.loop", "-S"), ("-S", "-B")),  # only the interpreter's, before -m
        ((sys.executable, "-X", "importtime", "-m", "pkg.loop"), ()),  # an option with an argument is not taken
        ((sys.executable, "-m", "pkg.loop"), ()),
        (("/usr/bin/other-python", "-S", "-m", "pkg.loop"), ()),  # another interpreter: its flags are its own
        ((sys.executable, "script.py", "-S"), ()),  # no -m: a script, not an entry point
        ((), ()),
    ],
)
def test_the_zygote_takes_the_interpreter_flags_of_the_targets_command(
    argv: tuple[str, ...], flags: tuple[str, ...]
) -> None:
    assert _flags(Target(argv, fork="pkg.loop:main")) == flags
