"""`crashsweep sweep --cassette FILE`: the scripted model plays a recording of a model's replies.

A cassette (spec/CASSETTE.md; `from-trace` writes one) holds the replies of one recorded run.
With --target or --framework, every swept process finds its absolute path in
$CRASHSWEEP_CASSETTE, and the scripted model (realsweep/adapters/script.py) plays its replies
instead of the job's. The file is read and checked when the command is planned, before any
work: a bad one is one line and exit 2. Every command the sweep prints to run again (the row's
re-run lines, --list-points' crash line, --determinism's) names it again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import click
from click.decorators import FC

from crashsweep.cli.sweep_sources import Source
from crashsweep.spec import cassette

HELP = (
    "with --target or --framework: the scripted model plays this cassette's replies (JSON Lines, as from-trace"
    " writes them: spec/CASSETTE.md) instead of its job's; read and checked before any work"
)
WITH_REFERENCE_LOOP = (
    "--cassette goes with --target or --framework: the reference loop plays its --job (from-trace writes one)"
)


def option() -> Callable[[FC], FC]:
    """--cassette FILE, given as typed (read by `read` when the command is planned)."""
    return click.option("--cassette", type=click.Path(path_type=Path), metavar="FILE", help=HELP)


def read(path: Path | None) -> Path | None:
    """The cassette's absolute path once read and checked; a bad one is a usage error (one line, exit 2)."""
    if path is None:
        return None
    try:
        cassette.read(path)
    except cassette.CassetteError as error:
        raise click.BadParameter(str(error), param_hint="'--cassette'") from None
    return Path(os.path.abspath(path))


def played(source: Source, path: Path | None, typed: Path | None) -> Source:
    """`source` whose every process (and every restart's version) plays the cassette at `path`.

    Its command names the cassette again as it was typed (`--cassette typed`), as it names --job.
    """
    if path is None or typed is None:
        return source
    variable = {cassette.VARIABLE: str(path)}
    target = source.target
    upgrade = None if target.upgrade is None else replace(target.upgrade, env={**target.upgrade.env, **variable})
    target = replace(target, env={**target.env, **variable}, upgrade=upgrade)
    return replace(source, target=target, command=[*source.command, "--cassette", str(typed)])
