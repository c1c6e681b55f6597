"""`explore --export FORMAT FILE`: the state graph (graphml) or the counterexamples (itf) for other tools.

graphml: the whole explored graph with its attributes (crashsweep.reports.graphml), for
networkx, Gephi or yEd. itf: each shortest counterexample as an ITF trace, the format of
Apalache and Quint (crashsweep.reports.itf), for model-based testing tools. The first
counterexample goes to FILE, each further one beside it with its invariant's name before the
suffixes (cx.itf.json, cx.no-loss.itf.json); with none, nothing is written and stderr says so.

FILE is checked before the exploration starts (its folder exists and is writable, and it is
new or a regular file: never a device, a FIFO or a folder), and neither explore's --out DIR nor
a file inside it (DIR is renamed into place whole, which would drop the file or be blocked by it);
each file is written whole through a temporary file and a rename
(crashsweep.cli.artifacts.write_atomic).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from click.decorators import FC

from crashsweep.cli import artifacts, prog
from crashsweep.explorer.search import Exploration
from crashsweep.reports import itf
from crashsweep.reports.counterexample import Counterexample
from crashsweep.reports.summary import Summary

KINDS = ("graphml", "itf")
HELP = (
    "write the state graph (graphml: networkx, Gephi, yEd) or each counterexample as an ITF trace "
    "(itf: Apalache/Quint's trace format) to FILE; repeatable"
)


def check_file(path: Path) -> None:
    """Refuse, before any work, a FILE that cannot be written whole: click.BadParameter says why."""
    folder = path.parent
    if not path.name or path.name in (".", ".."):
        raise click.BadParameter(f"{str(path)!r} names no file", param_hint="'--export'")
    if not folder.is_dir():
        raise click.BadParameter(f"{folder}: no such folder", param_hint="'--export'")
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise click.BadParameter(f"{path}: {error.strerror or error}", param_hint="'--export'") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise click.BadParameter(f"{path} is not a regular file: give a new name", param_hint="'--export'")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise click.BadParameter(f"{folder}: cannot write there", param_hint="'--export'")


def _checked(ctx: click.Context, param: click.Parameter, value: Sequence[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """The --export pairs, each FILE checked and named once."""
    seen: list[Path] = []
    for _, path in value:
        check_file(path)
        if path.resolve() in seen:
            raise click.BadParameter(f"{path} is named twice", param_hint="'--export'")
        seen.append(path.resolve())
    return list(value)


def check_apart(exports: Sequence[tuple[str, Path]], out_dir: Path | None) -> None:
    """Refuse, before any work, an --export FILE that is --out DIR or inside it: click.BadParameter says which."""
    if out_dir is None:
        return
    folder = out_dir.resolve()
    for _, path in exports:
        where = path.resolve()
        if where == folder:
            raise click.BadParameter(f"{path} is --out's directory: name a file outside it", param_hint="'--export'")
        if folder in where.parents:
            why = "the directory is written whole, so name a file outside it"
            raise click.BadParameter(f"{path} is inside --out {out_dir}: {why}", param_hint="'--export'")


def export_option() -> Callable[[FC], FC]:
    """explore's --export FORMAT FILE (repeatable)."""
    return click.option(
        "--export",
        "exports",
        type=(click.Choice(KINDS), click.Path(path_type=Path, dir_okay=False)),
        multiple=True,
        metavar="[graphml|itf] FILE",
        callback=_checked,
        help=HELP,
    )


def itf_files(path: Path, counterexamples: Sequence[Counterexample]) -> list[tuple[Path, Counterexample]]:
    """Where each counterexample's trace goes: the first to `path`, the others beside it, named by invariant."""
    name, dot, suffixes = path.name.partition(".")
    placed = []
    for i, cx in enumerate(counterexamples):
        invariant = cx.invariant or "path"
        placed.append((path if i == 0 else path.with_name(f"{name}.{invariant}{dot}{suffixes}"), cx))
    return placed


def write(
    exports: Sequence[tuple[str, Path]],
    exploration: Exploration[Any],
    summary: Summary,
    counterexamples: Sequence[Counterexample],
    *,
    text: bool,
) -> None:
    """Write every --export file; say each one written (on stdout for text output, else stderr)."""
    program = prog.anywhere(prog.current())
    for kind, path in exports:
        if kind == "graphml":
            from crashsweep.reports import graphml  # networkx: imported only for this export

            files = [(path, graphml.to_graphml(exploration, summary, counterexamples))]
        else:
            files = [(where, itf.to_json(cx, program=program)) for where, cx in itf_files(path, counterexamples)]
            if not files:
                click.echo(f"crashsweep: no counterexample, so no ITF trace was written to {path}", err=True)
        for where, content in files:
            if where != path:
                check_file(where)
            artifacts.write_atomic(where, content)
            click.echo(f"wrote {where}", err=not text)
