"""Counterexample files: render DOT to SVG with graphviz's `dot`, and write files atomically.

This is the I/O half of the reports: the renderers in reports/ return strings, and this
module runs `dot` and puts the strings on disk. Every file is written to a temporary file in
its own directory and renamed over its name, so a reader never sees half a file. Without
`dot`, the DOT sources are still written and the page shows them instead of pictures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from explorer.search import Exploration
from reports import dot, html, replay, sequence, trace
from reports.counterexample import Counterexample, shortest
from reports.summary import Summary

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
    """A job or design file as replay commands name it: an absolute path, or None for a built-in one."""
    return str(job_path.resolve()) if job_path is not None else None


def counterexamples(
    exploration: Exploration[Any], summary: Summary, job_path: Path | None, design_path: Path | None = None
) -> list[Counterexample]:
    """The shortest counterexample of every violated invariant (`design_path`: the design file, if any)."""
    return shortest(
        exploration,
        variant=summary.variant,
        job=summary.job,
        job_file=job_file(job_path),
        tracker=summary.tracker,
        design_file=job_file(design_path),
    )


def build(
    exploration: Exploration[Any], summary: Summary, job_path: Path | None, design_path: Path | None = None
) -> Report:
    """Traces, DOT sources, SVGs (when `dot` is there), pytest files and index.html."""
    dot_binary = find_dot()
    report = Report(counterexamples(exploration, summary, job_path, design_path), dot_missing=dot_binary is None)
    sections = []
    for cx in report.counterexamples:
        name = cx.invariant or "path"
        graph_dot = dot.state_graph(exploration, cx)
        sequence_dot = sequence.sequence_diagram(cx)
        graph_svg = render_svg(graph_dot, dot_binary) if dot_binary else None
        sequence_svg = render_svg(sequence_dot, dot_binary) if dot_binary else None
        report.files[f"{name}.trace.txt"] = trace.text(cx)
        report.files[f"{name}.trace.json"] = trace.to_json(cx)
        report.files[f"{name}.graph.dot"] = graph_dot
        report.files[f"{name}.sequence.dot"] = sequence_dot
        if graph_svg is not None and sequence_svg is not None:
            report.files[f"{name}.graph.svg"] = graph_svg
            report.files[f"{name}.sequence.svg"] = sequence_svg
        snippet = replay.pytest_snippet(cx)
        report.files[f"{replay.function_name(cx)}.py"] = snippet
        sections.append(
            html.Section(
                invariant=name,
                violation=cx.violation,
                title=trace.title(cx),
                trace=trace.text(cx),
                replay=replay.replay_command(cx),
                pytest_command=replay.replay_command(cx, pytest=True),
                pytest=snippet,
                graph_dot=graph_dot,
                sequence_dot=sequence_dot,
                graph_svg=graph_svg,
                sequence_svg=sequence_svg,
            )
        )
    note = INSTALL_GRAPHVIZ if report.dot_missing and sections else None
    report.files["index.html"] = html.page(summary, sections, note=note)
    return report


def write(out_dir: Path, files: dict[str, str]) -> list[Path]:
    """Write `files` into `out_dir` (created if need be), each atomically; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in files.items():
        path = out_dir / name
        write_atomic(path, content)
        written.append(path)
    return written


def after_explore(
    exploration: Exploration[Any],
    summary: Summary,
    job_path: Path | None,
    out_dir: Path | None,
    *,
    text: bool,
    design_path: Path | None = None,
) -> None:
    """What `explore` adds: replay lines (text output), and with --out the files it wrote."""
    if text:
        for cx in counterexamples(exploration, summary, job_path, design_path):
            click.echo(f"  {cx.invariant:<13} replay: {replay.replay_command(cx)}")
            click.echo(f"  {'':<13} pytest: {replay.replay_command(cx, pytest=True)}")
    if out_dir is None:
        return
    report = build(exploration, summary, job_path, design_path)
    for path in write(out_dir, report.files):
        click.echo(f"wrote {path}", err=not text)
    if report.dot_missing and report.counterexamples:
        click.echo(f"crashsweep: {INSTALL_GRAPHVIZ}", err=True)
