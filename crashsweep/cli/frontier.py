"""`crashsweep frontier`: every design of the policy space, which are safe, and what each costs.

Every valid combination of spec/policy.py's fields is composed into a loop (variants/composed.py)
and explored with its costs tallied, on a pool of processes (one per core by default); the
rows come back in enumeration order whatever order the workers finish in, so the output is the
same on any machine. reports/frontier.py finds the safe set, the Pareto frontier and the
cheapest safe design; this module only schedules, prints and writes.
"""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import click

from crashsweep.cli import formats, limits, outdir, prog, runs
from crashsweep.cli.options import choices_of, job_options, out_option
from crashsweep.explorer.search import StateLimitExceeded, explore
from crashsweep.realsweep import api
from crashsweep.reports.frontier import (
    Entry,
    Frontier,
    cheapest_design_file,
    frontier,
    frontier_json,
)
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.design import Env
from crashsweep.spec.job import TRIAGE, Job
from crashsweep.spec.policy import CRASH_LOCKS, PAUSE_LOCKS, Policy, all_policies, conversation_fields
from crashsweep.spec.retries import FRONTIER_STACKS
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import PRESETS
from crashsweep.variants.composed import compose
from crashsweep.variants.loop_model import LoopModel

CHUNK = 4
"""Designs a worker takes at a time."""


@dataclass(frozen=True)
class Task:
    """One design to explore, as plain values a worker process can unpickle."""

    number: int
    policy: Policy
    job: Job
    tracker: str
    depth: int
    max_states: int
    faults: tuple[str, ...] = ()
    fresh_ids: bool = False
    projection: bool = True
    worst: bool = False


def explore_design(task: Task) -> Summary | str:
    """Explore one composed design with its costs; a one-line error instead when it is too large."""
    design = compose(task.policy.label, "composed from a policy", task.policy)
    loop = runs.costed(LoopModel(design, Env(task.job, TRACKERS[task.tracker], task.faults, task.fresh_ids)), task.job)
    try:
        exploration = explore(loop, task.depth, max_states=task.max_states, projection=task.projection)
    except StateLimitExceeded as error:  # its own arguments do not survive pickling: send the words
        return f"design #{task.number} ({task.policy.label}): {error}"
    return summarize(
        exploration,
        variant=task.policy.label,
        job=task.job.name,
        tracker=task.tracker,
        faults=task.faults,
        fresh_ids=task.fresh_ids,
        worst=task.worst,
    )


def explore_all(tasks: Sequence[Task], workers: int) -> list[Summary]:
    """Every task's row in task order (one worker: in this process; more: a process pool), with progress."""
    status = runs.StatusLine("frontier")
    executor = (
        ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, initargs=(os.getpid(),))
        if workers > 1
        else None
    )
    rows: list[Summary] = []
    try:
        if executor is None:
            results: Iterator[Summary | str] = map(explore_design, tasks)
        else:
            # Small chunks: little pickling overhead, and Ctrl-C waits only for a few designs per worker.
            with _ctrl_c_held():  # the pool forks its workers at the first submit
                results = executor.map(explore_design, tasks, chunksize=CHUNK)
        for result in results:
            if isinstance(result, str):
                raise click.ClickException(result)
            rows.append(result)
            status.show(f"{len(rows)} of {len(tasks)} designs explored")
    except KeyboardInterrupt:
        raise runs.Interrupted(f"frontier: interrupted after {len(rows)} of {len(tasks)} designs") from None
    finally:
        status.done()
        if executor is not None:
            # One call that cancels and waits: after a shutdown(wait=False) the executor forgets
            # its manager thread, so a second call waits for nothing; and once the executor is
            # freed, the manager thread can no longer cancel, and its workers would go on
            # through every design queued before the process could exit.
            executor.shutdown(wait=True, cancel_futures=True)
    return rows


@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold SIGINT back in this thread for the block, and take it (KeyboardInterrupt) at the end.

    A fork runs the handlers registered with os.register_at_fork in the parent (logging's
    releases its lock): a KeyboardInterrupt raised in one of them is reported as ignored and
    lost, and the frontier would run to its end after a Ctrl-C. Held back, the signal is
    delivered once the workers exist, where the caller catches it.
    """
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _worker_start(parent: int) -> None:
    """A pool worker's start: it dies with the frontier, and Ctrl-C is the parent's to handle.

    Killed by SIGKILL, the frontier cannot stop its pool: its workers would explore on for
    minutes; the kernel kills each with its parent (api.die_with_parent). A worker is forked
    with SIGINT held back (_ctrl_c_held); it ignores the signal, so a terminal's Ctrl-C, sent
    to every process of the group, leaves it to finish the designs it holds while the parent
    cancels the rest.
    """
    api.die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@click.command()
@job_options
@formats.format_option(formats.FRONTIER)
@out_option("write index.html (a chart of cost against safety), frontier.svg, frontier.json and cheapest.toml here")
@click.option("--every", is_flag=True, help="list every design's row, not the frontier alone (text and Markdown)")
@click.option(
    "--retry-stacks",
    is_flag=True,
    help="cross every design with the retry stacks none, call x3, turn x2, run x2, call x3 > turn x2, "
    "call x3 > run x2 (all on error), and show each one's worst scenario",
)
@click.option(
    "--conversation",
    is_flag=True,
    help="cross every design with the values of the conversation fields that matter on the job "
    "(transcript_on_restart; approval_binding, approval_storage and approval_consume with a gated call; "
    "resume_granularity with a node shared; persist_granularity with a write or a batch; transcript_repair "
    "under --faults trim-context: spec/CONVERSATIONS.md), and name each one's safe settings",
)
@click.option(
    "--workers",
    type=limits.workers(),
    default=None,
    help="processes exploring designs at once  [default: the number of cores]",
)
def frontier_command(
    depth: int,
    job_path: Path | None,
    tracker: str,
    max_states: int,
    fmt: str,
    out_dir: Path | None,
    every: bool,
    retry_stacks: bool,
    conversation: bool,
    workers: int | None,
) -> int:
    """Every valid design: which hold every invariant, what each costs, the frontier, the cheapest."""
    choices = choices_of(depth, job_path, tracker, max_states)
    # The locks a second live process tells apart are enumerated only when one can occur, and
    # the fsync and unreadable-checkpoint choices only under power loss (POLICIES.md 1.6 and 1.5).
    locks = PAUSE_LOCKS if "pause" in choices.faults else CRASH_LOCKS
    stacks = FRONTIER_STACKS if retry_stacks else ((),)
    fields = conversation_fields(choices.job, choices.faults) if conversation else ()
    policies = all_policies(locks, power_loss="power-loss" in choices.faults, stacks=stacks, conversation=fields)
    tasks = [
        Task(
            number,
            policy,
            choices.job,
            choices.tracker.name,
            depth,
            max_states,
            choices.faults,
            choices.fresh_ids,
            choices.projection,
            retry_stacks,
        )
        for number, policy in enumerate(policies, start=1)
    ]
    rows = explore_all(tasks, workers or os.cpu_count() or 1)
    named: dict[Policy, list[str]] = {}
    for name, preset in PRESETS.items():
        named.setdefault(preset.policy, []).append(name)
    entries = [
        Entry(task.number, task.policy.label, task.policy.as_mapping(), row, tuple(named.get(task.policy, ())))
        for task, row in zip(tasks, rows, strict=True)
    ]
    result = frontier(
        entries,
        job=choices.job.name,
        tracker=choices.tracker.name,
        depth=depth,
        faults=choices.faults,
        fresh_ids=choices.fresh_ids,
    )
    click.echo(formats.render(fmt, formats.FRONTIER, replace(result, every=every)), nl=False)
    if out_dir is not None:
        _write(out_dir, result, choices, text=formats.for_people(fmt))
    return 0 if result.cheapest is not None else 1


def _write(out_dir: Path, result: Frontier, choices: runs.Choices, *, text: bool) -> None:
    """The page, its chart, the JSON and the cheapest design's file, each written atomically.

    The page's module is imported here: it draws the chart with matplotlib, slow to import, and
    only --out needs it.
    """
    from crashsweep.reports import frontier_page

    chart = frontier_page.chart_svg(result)
    files = {
        "frontier.json": frontier_json(result),
        "frontier.svg": chart,
        "index.html": frontier_page.page(result, chart),
    }
    design = cheapest_design_file(result)
    if design is not None:
        files["cheapest.toml"] = design
    outdir.publish(out_dir, files.items(), wrote=lambda path: click.echo(f"wrote {path}", err=not text))
    if design is not None:
        words = [*prog.current(), "explore", "--design", str((out_dir / "cheapest.toml").resolve())]
        words += ["--depth", str(result.depth), "--tracker", result.tracker]
        if choices.job is not TRIAGE:
            words += ["--job", choices.job_source]
        click.echo(f"explore the cheapest safe design: {shlex.join(words)}", err=not text)
