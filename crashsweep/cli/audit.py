"""`crashsweep audit PATH...`: recorded runs judged by the invariants every sweep is judged by, and their anomalies.

A PATH is a record of some kind audit reads (spec/HISTORY.md 7: a History JSONL, OTLP spans,
crashsweep.otel's log, an OpenAI Agents SDK session database, a LangGraph checkpoint database, a
Temporal workflow history, a DBOS system database, a receiver's ledger), or a folder of them
(a kept sweep: each scenario's `history.jsonl`). The files named together are one unit: the
records of the same runs (crashsweep/importers/units.py). Every file is read before anything is
judged: input that cannot be used is one line naming its file and place, exit 2, and nothing is
claimed about the rest. Then each run is joined and judged (spec/auditing.py). Exit status: 1
when an invariant is violated or a definite anomaly found in some run, 0 otherwise, 2 for input
that cannot be used.
"""

from __future__ import annotations

from pathlib import Path

import click

from crashsweep.cli import formats, options
from crashsweep.importers.base import Unusable
from crashsweep.importers.registry import names
from crashsweep.importers.units import Unit, units
from crashsweep.spec import auditing
from crashsweep.spec.auditing import RunAudit
from crashsweep.spec.job import JobError, load_job


def judged(found: list[Unit], expected: tuple[str, ...] = (), gated: tuple[str, ...] = ()) -> list[RunAudit]:
    """Each unit's runs, joined and judged."""
    runs: list[RunAudit] = []
    for unit in found:
        histories = [history for source in unit.sources for history in source.histories]
        runs.extend(auditing.audit(unit.name, histories, (*unit.expected, *expected), (*unit.gated, *gated)))
    return runs


def job_calls(path: Path | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The job's writes and gated calls (none without --job); Unusable for a job file that cannot be used."""
    if path is None:
        return (), ()
    try:
        job = load_job(path)
    except (JobError, OSError) as error:
        raise Unusable(f"--job {path}: {error}") from None
    return job.writes, job.gated


EPILOG = (
    f"A PATH is a record of one of these kinds: {', '.join(names())}; or a folder of them, or a folder"
    " `sweep --keep` wrote. Files named together are the records of the same runs. Exit status: 1"
    " when an invariant is violated or a definite anomaly found, 0 otherwise, 2 for input that cannot"
    " be used."
)


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@options.job_option(help="the job the runs did (a TOML file or a shipped job's name): its writes and gated calls")
@formats.format_option(formats.AUDIT)
def audit(paths: tuple[Path, ...], job_path: Path | None, fmt: str) -> int:
    """Judge recorded runs: spans, sessions, checkpoint and workflow databases, ledgers, History JSONL, kept sweeps."""
    try:
        expected, gated = job_calls(job_path)
        runs = judged(units(paths), expected, gated)
    except Unusable as error:
        click.echo(f"crashsweep: error: {error}", err=True)
        return 2
    click.echo(formats.render(fmt, formats.AUDIT, runs), nl=False)
    return 1 if any(run.failed for run in runs) else 0
