"""The `replay` and `view` commands: re-run a counterexample's path, or see a design on one page.

replay: re-runs a path code (as printed with every counterexample) with the model's own step
function and prints its trace; exit 1 when the path ends in a violation of an invariant, 0
when it does not, 2 when the code does not fit. `--pytest` prints a test that asserts what the
path ends in (`--pytest FILE` writes it there and says so); making the test is the command's
work, so it exits 0 whatever the path ends in, and the test itself fails only if that changes.
view: explores a design and writes one self-contained HTML page (inline SVG, no network),
then opens it in a browser, or prints its path where none can be opened. Without --out the
page goes to one stable directory per design, job, tracker, depth and faults (`view_dir`),
replaced by the next view of the same, so repeated views leave no pile of temporary directories.

These commands take the shared options of a design and its exploration (crashsweep.cli.options
`model_options`); crashsweep.cli.main registers them (import the CLI through crashsweep.cli.main).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import tempfile
import webbrowser
from pathlib import Path
from typing import Any

import click

from crashsweep.cli import artifacts, formats, outdir, prog, runs
from crashsweep.cli import serve as serving
from crashsweep.cli.options import (
    choices_of,
    chosen_design,
    model_options,
    out_option,
    progress_option,
    upgrade_option,
    with_upgrade,
)
from crashsweep.explorer.model import MOVES, Action, Model
from crashsweep.explorer.path import decode_path
from crashsweep.explorer.path import replay as replay_path
from crashsweep.explorer.search import enabled
from crashsweep.reports.counterexample import Counterexample, from_path
from crashsweep.reports.replay import pytest_snippet
from crashsweep.reports.walk import Setting, Walk


@click.command(name="replay")
@click.option("--path", "code", required=True, help="the path code printed with a counterexample (e.g. 10:7=1)")
@model_options("design the path belongs to")
@formats.format_option(formats.TRACE)
@click.option(
    "--pytest",
    "pytest_file",
    is_flag=False,
    flag_value="-",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True, path_type=Path),
    help="print a pytest test that replays the path and asserts how it ends (--pytest FILE: write it to FILE); exit 0",
)
@upgrade_option()
@click.option(
    "--invariant",
    default=None,
    help="the invariant to judge the path's end by (default: the first it violates, as printed commands assume)",
)
def _replay(
    variant: str | None,
    design_path: Path | None,
    code: str,
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    fmt: str,
    pytest_file: Path | None,
    upgrade_to: str | None,
    invariant: str | None,
) -> int:
    """Re-run a counterexample's path and print its trace (exit 1 if it ends in a violation; --pytest: 0)."""
    chosen = chosen_design(variant, design_path)
    choices = with_upgrade(choices_of(depth, job_path, tracker, max_states), upgrade_to, chosen)
    loop = choices.model(chosen)
    names = [prop.name for prop in loop.properties if prop.kind != "sometimes"]
    if invariant is not None and invariant not in names:
        known = ", ".join(names)
        raise click.BadParameter(
            f"{invariant!r} is no invariant of this design (known: {known})", param_hint="'--invariant'"
        )
    try:
        path = replay_path(loop, depth, code)
    except ValueError as error:
        raise click.BadParameter(explained(loop, depth, code, str(error)), param_hint="'--path'") from None
    cx = from_path(
        loop,
        path,
        variant=loop.design.name,
        job=choices.job.name,
        job_file=artifacts.job_file(job_path),
        depth=depth,
        tracker=choices.tracker.name,
        design_file=artifacts.job_file(design_path),
        upgrade=upgrade_to,
        invariant=invariant,
    )
    if pytest_file is not None:
        return _write_test(cx, pytest_file)
    click.echo(formats.render(fmt, formats.TRACE, formats.Traced(cx, prog.current())), nl=False)
    return 1 if cx.violated else 0


def _write_test(cx: Counterexample, target: Path) -> int:
    """Print the pytest test of `cx` (`target` "-"), or write it to `target` and say where; exit status 0.

    The command's work is the test, and it was made: a violating path is what the test asserts,
    not a failure of the command (the trace, without --pytest, exits 1 for it).
    """
    snippet = pytest_snippet(cx)
    if str(target) == "-":
        click.echo(snippet, nl=False)
        return 0
    try:
        artifacts.write_atomic(target, snippet)
    except OSError as error:
        raise click.FileError(str(target), error.strerror or str(error)) from None
    ends = f"the violation of {cx.invariant}" if cx.violated else "no violation"
    run = f"pytest {shlex.quote(str(target))}"
    click.echo(f"wrote {target}: a pytest test that replays path {cx.code} and asserts {ends}; run: {run}")
    return 0


def explained(loop: Model[Any], depth: int, code: str, message: str) -> str:
    """`message` (why `code` does not fit), or, for a choice past what a step offers, what that step offers.

    Path codes number each step's enabled actions from 0; a user who typed one by hand (or
    copied it to another design or depth) is told the numbers that step has and what they do.
    """
    try:
        length, choices = decode_path(code)
    except ValueError:
        return message
    state, crashes = loop.initial(), 0
    for pos in range(1, length + 1):
        choice = choices.get(pos, 0)
        if loop.is_finished(state):
            return message  # the path is longer than the run: the message says so
        actions = enabled(loop, state, crashes, depth)
        if choice >= len(actions):
            return (
                f"path code {code!r}: step {pos} takes choice {choice}, but offers only {_offered(actions)} "
                f"at depth {depth} (choices count from 0: 0 is the run's own next step, then its crashes and faults)"
            )
        state, _ = loop.step(state, actions[choice])
        crashes += actions[choice].kind in MOVES
    return message


def _offered(actions: list[Action]) -> str:
    """The choices `actions` are, with what each does: "choice 0 (start)", "choices 0 to 2 (0 ..., 1 ...)"."""
    what = ", ".join(f"{i} {action.label}" for i, action in enumerate(actions))
    if len(actions) == 1:
        return f"choice 0 ({actions[0].label})"
    return f"choices 0 to {len(actions) - 1} ({what})"


VIEW_NAME_MAX = 100
"""The longest name of a view's folder: far below a file system's 255 bytes, whatever the names in it."""


def view_dir(
    variant: str,
    tracker: str,
    depth: int,
    *,
    job: str | None = None,
    faults: tuple[str, ...] = (),
    fresh_ids: bool = False,
) -> Path:
    """Where `view` puts a design's page without --out: one directory per design, job, tracker, depth and faults.

    Under the system's temporary directory, in `crashsweep-view-UID` (made private to the user);
    the next view of the same choices replaces it, so views leave nothing behind but one page
    each, and a view with another job (`job`: None for the built-in one) or other faults keeps
    its own. Design and job names may be anything a file allows: all but ASCII letters, digits,
    `.`, `_` and `-` becomes `_`, and a name past VIEW_NAME_MAX characters is cut, with a hash
    of the whole kept so that names alike in their first characters still get folders of their own.
    """
    words = [variant, *([f"job-{job}"] if job is not None else []), tracker, f"depth{depth}"]
    words += [f"faults-{'-'.join(faults)}"] if faults else []
    words += ["fresh-ids"] if fresh_ids else []
    whole = "-".join(words)
    name = re.sub(r"[^\w.-]", "_", whole, flags=re.ASCII)
    if len(name) > VIEW_NAME_MAX:
        name = f"{name[: VIEW_NAME_MAX - 13]}-{hashlib.sha256(whole.encode()).hexdigest()[:12]}"
    base = Path(tempfile.gettempdir()) / f"crashsweep-view-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        mine = base.is_dir() and not base.is_symlink() and base.stat().st_uid == os.geteuid()
    except OSError as error:
        raise click.UsageError(f"cannot make {base} for the page: {error.strerror or error}; give --out") from None
    if not mine:
        raise click.UsageError(f"{base} is not a directory of yours: give --out")
    try:
        return outdir.check(base / name)
    except outdir.OutDirError as error:
        raise click.UsageError(f"{error}; give --out") from None


@click.command(name="view")
@model_options()
@out_option("directory for index.html, written whole (default: one per design under the temporary directory)")
@click.option("--no-open", is_flag=True, help="print the page's path instead of opening a browser")
@progress_option()
@click.option("--serve", is_flag=True, help="serve a page that walks the state graph on demand, until Ctrl-C")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=serving.PORT,
    show_default=True,
    help="--serve's port (0: any free one)",
)
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="--serve's address; beyond loopback, with --public"
)
@click.option(
    "--public", is_flag=True, help="--serve on a --host other machines reach (the page has no authentication)"
)
def _view(
    variant: str | None,
    design_path: Path | None,
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    out_dir: Path | None,
    no_open: bool,
    progress: bool,
    serve: bool,
    port: int,
    host: str,
    public: bool,
) -> int:
    """Explore a design and show its row, verdicts and counterexamples on one HTML page (--serve: walk it)."""
    _check_serving(serve, out_dir, host, public, port)
    chosen = chosen_design(variant, design_path)
    choices = choices_of(depth, job_path, tracker, max_states, progress=progress)
    name = chosen if isinstance(chosen, str) else chosen.name
    if serve:
        setting = Setting(
            name,
            choices.job.name,
            tracker,
            depth,
            job_file=artifacts.job_file(job_path),
            design_file=artifacts.job_file(design_path),
            program=tuple(prog.anywhere(prog.current())),
        )
        walk = Walk(choices.model(chosen), setting, why_not=explained)
        return serving.run(walk, host, port, max_states=max_states, open_browser=not no_open)
    if out_dir is None:
        faults, fresh_ids = choices.faults, choices.fresh_ids
        job = choices.job.name if job_path is not None else None
        out_dir = view_dir(name, tracker, depth, job=job, faults=faults, fresh_ids=fresh_ids)
    target = out_dir
    exploration, summary = runs.run(chosen, choices)
    report = artifacts.build(exploration, summary, job_path, design_path, program=prog.anywhere(prog.current()))
    (page,) = outdir.publish(target, [("index.html", report.files["index.html"])])
    if report.dot_missing and report.counterexamples:
        click.echo(f"crashsweep: {artifacts.INSTALL_GRAPHVIZ}", err=True)
    if not no_open and webbrowser.open(page.resolve().as_uri()):
        click.echo(f"wrote {page} and opened it in your browser")
    else:
        reason = "" if no_open else " (no browser could be opened here)"
        click.echo(f"wrote {page}{reason}: open {page.resolve().as_uri()}")
    return 0 if summary.holds else 1


def _check_serving(serve: bool, out_dir: Path | None, host: str, public: bool, port: int) -> None:
    """Refuse --serve's options without --serve, --out with it, and an address beyond loopback without --public."""
    if not serve:
        context = click.get_current_context()
        for name in ("host", "port", "public"):
            if context.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
                raise click.UsageError(f"--{name} is an option of --serve: add --serve, or leave --{name} out")
        return
    if out_dir is not None:
        raise click.UsageError("--out writes a page and --serve serves one: give one of them")
    serving.check_host(host, public, port)


# Declared, not inferred: crashsweep.cli.main imports this module, and mypy needs the types at once.
replay: click.Command = _replay
view: click.Command = _view
