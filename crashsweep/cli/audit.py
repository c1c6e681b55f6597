"""`crashsweep audit PATH...`: judge histories that were recorded by the invariants every sweep is judged by.

A PATH is a History JSONL file (spec/HISTORY.md section 2: what a user or another tool wrote,
or what `sweep --keep DIR` left in each scenario's folder), or a folder, whose `history.jsonl`
files are all read, in name order. Every file is read before anything is judged: a line that
is not a history's names its file and line, exit 2, and nothing is claimed about the rest.
Then each registered invariant (spec/invariants/) gives its verdict on each history: the same
rule that decides a swept scenario decides an audited run. Exit status: 1 when an invariant
is violated in some history, 0 otherwise, 2 for input that cannot be used.
"""

from __future__ import annotations

from pathlib import Path

import click

from crashsweep.cli import formats
from crashsweep.reports.audit import Audited
from crashsweep.spec import invariants
from crashsweep.spec.history import KEPT, History, HistoryError, read


class AuditError(ValueError):
    """Input audit cannot use: one line naming the path (and line) and what is wrong."""


def files(paths: tuple[Path, ...]) -> list[Path]:
    """The history files the paths name: each file as given, each folder's kept histories in name order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            kept = sorted(path.rglob(KEPT))
            if not kept:
                raise AuditError(f"{path}: no {KEPT} in this folder (a sweep's --keep folder holds one a scenario)")
            found.extend(kept)
        elif path.exists():
            found.append(path)
        else:
            raise AuditError(f"{path}: no such file or folder")
    return found


def histories(paths: tuple[Path, ...]) -> list[tuple[str, History]]:
    """Every history the paths name, read whole first (HistoryError: its file and line), with its path's words."""
    read_in: list[tuple[str, History]] = []
    for file in files(paths):
        try:
            read_in.append((str(file), read(file)))
        except HistoryError as error:
            raise AuditError(str(error)) from None
    return read_in


def judged(read_in: list[tuple[str, History]]) -> list[Audited]:
    """Each history with every registered invariant's verdict on it."""
    return [Audited(path, tuple(i.judge(history) for i in invariants.registered())) for path, history in read_in]


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@formats.format_option(formats.AUDIT)
def audit(paths: tuple[Path, ...], fmt: str) -> int:
    """Judge recorded histories (History JSONL files, or folders of a kept sweep) by every invariant."""
    try:
        audits = judged(histories(paths))
    except AuditError as error:
        click.echo(f"crashsweep: error: {error}", err=True)
        return 2
    click.echo(formats.render(fmt, formats.AUDIT, audits), nl=False)
    return 1 if any(a.violated for a in audits) else 0
