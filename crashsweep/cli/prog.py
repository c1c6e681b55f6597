"""The command a user types to run crashsweep, so that every command crashsweep prints works as printed.

bin/crashsweep exports `CRASHSWEEP_PROG="$0"`: the checkout's launcher as the user typed it
(`bin/crashsweep`, `./crashsweep`, or the full path a PATH lookup found). `python -m crashsweep`
is printed as the same interpreter with `-m crashsweep`. Otherwise crashsweep was installed and
runs as `crashsweep` from PATH. Files written for later (an --out directory, the view page)
name a relative launcher by its absolute path, so their commands work from any directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import click

ENV = "CRASHSWEEP_PROG"
INSTALLED = ("crashsweep",)


def typed(environ: Mapping[str, str], *, module: str | None = None) -> tuple[str, ...]:
    """The words that run crashsweep: $CRASHSWEEP_PROG, `PYTHON -m crashsweep` (`module`: PYTHON), or `crashsweep`."""
    launcher = environ.get(ENV, "").strip()
    if launcher and "\n" not in launcher:
        return (launcher,)
    if module is not None:
        return (module, "-m", "crashsweep")
    return INSTALLED


def anywhere(program: tuple[str, ...]) -> tuple[str, ...]:
    """`program` with a relative path to the launcher made absolute (a bare name stays a PATH lookup)."""
    first, *rest = program
    if os.sep in first and not os.path.isabs(first):
        first = os.path.abspath(first)
    return (first, *rest)


def current() -> tuple[str, ...]:
    """The program the running command line was started as (crashsweep.cli.main.main puts it in the context)."""
    context = click.get_current_context(silent=True)
    program = context.find_root().obj if context is not None else None
    if isinstance(program, tuple) and program and all(isinstance(word, str) for word in program):
        return program
    return INSTALLED
