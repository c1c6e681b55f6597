"""Counterexample files: render DOT to SVG with graphviz's `dot`, and put them on disk whole.

This is the I/O half of the reports: the renderers in reports/ return strings, and this
module runs `dot` and hands the strings to crashsweep.cli.outdir, which builds an --out directory
beside its name and renames it into place, so it appears whole or not at all. `write_atomic`
does the same for one file. Without `dot`, the DOT sources are still written and the page
shows them instead of pictures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from crashsweep.cli import outdir, prog, shipped
from crashsweep.explorer.search import Exploration
from crashsweep.reports import replay, trace
from crashsweep.reports.counterexample import Counterexample, shortest
from crashsweep.reports.replay import PROGRAM
from crashsweep.reports.summary import Summary

INSTALL_GRAPHVIZ = (
    "graphviz's `dot` was not found, so no SVGs were made (DOT sources written instead): install graphviz "
    "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz) and run again"
)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, content: str) -> None:
    """Write `content` to `path` via a temporary file in the same directory and a rename."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def find_dot() -> str | None:
    """The path of graphviz's `dot`, or None."""
    return shutil.which("dot")


def render_svg(source: str, dot_binary: str) -> str:
    """Run `dot -Tsvg` on a DOT source; RuntimeError with dot's message if it fails."""
    done = subprocess.run(
        [dot_binary, "-Tsvg"], input=source.encode("utf-8"), capture_output=True, check=False, timeout=300
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"dot failed: {message[0] if message else f'exit status {done.returncode}'}")
    return done.stdout.decode("utf-8")


@dataclass
class Report:
    """The files of one exploration's counterexamples, by name, in writing order (index.html last)."""

    counterexamples: list[Counterexample]
    files: dict[str, str] = field(default_factory=dict)
    dot_missing: bool = False


def job_file(job_path: Path | None) -> str | None:
    """A job or design file as replay commands name it: a shipped one's name as typed, else an absolute path.

    None for a built-in one.
    """
    return shipped.typed(job_path, absolute=True) if job_path is not None else None


def counterexamples(
    exploration: Exploration[Any],
    summary: Summary,
    job_path: Path | None,
    design_path: Path | None = None,
    upgrade: str | None = None,
) -> list[Counterexample]:
    """The shortest counterexample of every violated invariant.

    `design_path`: the design file, if any; `upgrade`: --upgrade-to as the user gave it.
    """
    return shortest(
        exploration,
        variant=summary.variant,
        job=summary.job,
        job_file=job_file(job_path),
        tracker=summary.tracker,
        design_file=job_file(design_path),
        upgrade=upgrade,
    )


def render(
    exploration: Exploration[Any], summary: Summary, job_path: Path | None, report: Report, program: Sequence[str]
) -> Iterator[tuple[str, str]]:
    """Traces, DOT sources, SVGs (when `dot` is there), pytest files and index.html, each as it is made.

    Lazy, so that an --out directory fills as `dot` renders; `report.files` collects them.
    The replay commands are run by `program` (crashsweep.cli.prog). The page's and the
    diagrams' modules are imported here, where files are written: a command that prints its
    row alone does not import them to start.
    """
    from crashsweep.reports import dot, html, sequence

    dot_binary = None if report.dot_missing else find_dot()
    sections = []
    for cx in report.counterexamples:
        name = cx.invariant or "path"
        graph_dot = dot.state_graph(exploration, cx)
        sequence_dot = sequence.sequence_diagram(cx)
        snippet = replay.pytest_snippet(cx)
        made = {
            f"{name}.trace.txt": trace.text(cx, program=program),
            f"{name}.trace.json": trace.to_json(cx, program=program),
            f"{name}.graph.dot": graph_dot,
            f"{name}.sequence.dot": sequence_dot,
        }
        yield from _keep(report, made)
        svgs: list[str | None] = [None, None]
        if dot_binary is not None:
            for i, (kind, source) in enumerate((("graph", graph_dot), ("sequence", sequence_dot))):
                svgs[i] = render_svg(source, dot_binary)
                yield from _keep(report, {f"{name}.{kind}.svg": svgs[i] or ""})
        yield from _keep(report, {f"{replay.function_name(cx)}.py": snippet})
        sections.append(
            html.Section(
                invariant=name,
                violation=cx.violation,
                title=trace.title(cx),
                trace=trace.text(cx, program=program),
                replay=replay.replay_command(cx, program=program),
                pytest_command=replay.replay_command(cx, pytest=True, program=program),
                pytest=snippet,
                graph_dot=graph_dot,
                sequence_dot=sequence_dot,
                graph_svg=svgs[0],
                sequence_svg=svgs[1],
            )
        )
    note = INSTALL_GRAPHVIZ if report.dot_missing and sections else None
    yield from _keep(report, {"index.html": html.page(summary, sections, note=note)})


def _keep(report: Report, files: dict[str, str]) -> Iterator[tuple[str, str]]:
    """Yield each of `files` and record it in `report.files` as it goes."""
    for name, content in files.items():
        report.files[name] = content
        yield name, content


def build(
    exploration: Exploration[Any],
    summary: Summary,
    job_path: Path | None,
    design_path: Path | None = None,
    *,
    program: Sequence[str] = PROGRAM,
    upgrade: str | None = None,
) -> Report:
    """Every file of `render`, made at once (`design_path`: the design file, if any)."""
    report = start(exploration, summary, job_path, design_path, upgrade)
    for _ in render(exploration, summary, job_path, report, program):
        pass
    return report


def start(
    exploration: Exploration[Any],
    summary: Summary,
    job_path: Path | None,
    design_path: Path | None = None,
    upgrade: str | None = None,
) -> Report:
    """An empty report of the exploration's counterexamples, and whether `dot` is missing."""
    found = counterexamples(exploration, summary, job_path, design_path, upgrade)
    return Report(found, dot_missing=find_dot() is None)


def after_explore(
    exploration: Exploration[Any],
    summary: Summary,
    job_path: Path | None,
    out_dir: Path | None,
    *,
    text: bool,
    design_path: Path | None = None,
    upgrade: str | None = None,
) -> None:
    """What `explore` adds: replay lines (text output), and with --out the directory it wrote, whole."""
    program = prog.current()
    if text:
        for cx in counterexamples(exploration, summary, job_path, design_path, upgrade):
            click.echo(f"  {cx.invariant:<13} replay: {replay.replay_command(cx, program=program)}")
            click.echo(f"  {'':<13} pytest: {replay.replay_command(cx, pytest=True, program=program)}")
    if out_dir is None:
        return
    report = start(exploration, summary, job_path, design_path, upgrade)
    files = render(exploration, summary, job_path, report, prog.anywhere(program))
    outdir.publish(out_dir, files, wrote=lambda path: click.echo(f"wrote {path}", err=not text))
    if report.dot_missing and report.counterexamples:
        click.echo(f"crashsweep: {INSTALL_GRAPHVIZ}", err=True)
