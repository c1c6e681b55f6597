"""Running one design's exploration from command-line choices, with progress on a terminal.

Shared by every command that explores (explore, compare, and later view and others).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from crashsweep.cli import retry_cost, shipped
from crashsweep.explorer.model import Model
from crashsweep.explorer.search import Exploration, ExplorationInterrupted, explore
from crashsweep.explorer.tally import Tallied
from crashsweep.reports.layers import without_each
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.cost import point_counters
from crashsweep.spec.design import Design
from crashsweep.spec.job import TRIAGE, Job, load_job
from crashsweep.spec.tracker import TRACKERS, TrackerKind
from crashsweep.spec.world import World
from crashsweep.variants import design, model
from crashsweep.variants.loop_model import LoopModel

DEFAULT_MAX_STATES = 2_000_000


@dataclass(frozen=True)
class Choices:
    """What the user chose: job, tracker, depth, the state limit, faults and call IDs (spec/FAULTS.md)."""

    job: Job
    job_source: str
    tracker: TrackerKind
    depth: int
    max_states: int
    faults: tuple[str, ...] = ()
    """The fault kinds the environment may inject (--faults; spec/FAULTS.md)."""
    fresh_ids: bool = False
    """Whether the model hands out new call IDs on every request (--call-ids fresh)."""
    progress: bool = False
    """Progress lines even where stderr is not a terminal (--progress)."""
    projection: bool = True
    """Merge states by the model's state key (spec/SEMANTICS.md section 11); False: --no-projection."""
    upgrade: str | Design | None = None
    """The design every restart runs (--upgrade-to; spec/RETRIES.md section 2), or None."""

    def model(self, chosen: str | Design) -> LoopModel:
        """The explorer model of `chosen` under these choices."""
        faults, fresh = self.faults, self.fresh_ids
        return model(chosen, self.job, self.tracker, faults=faults, fresh_ids=fresh, upgrade=self.upgrade)


def read_job(path: Path | None) -> tuple[Job, str]:
    """The job from `path`, or the built-in triage job, and how a command names it again; JobError on a bad file.

    The name: a shipped job's as typed, else the file's absolute path (crashsweep.cli.shipped.typed).
    """
    if path is None:
        return TRIAGE, "triage (built in)"
    return load_job(path), shipped.typed(path, absolute=True)


def tracker_kind(name: str) -> TrackerKind:
    """The tracker kind called `name` (the CLI has checked it is one of TRACKERS)."""
    return TRACKERS[name]


PROGRESS_EVERY = 5.0
"""Seconds between progress lines where stderr is not a terminal (with --progress)."""
PROGRESS_AFTER = 5.0
"""Seconds after which a long exploration shows its progress lines unasked where stderr is not a terminal."""


def costed(loop: Model[World], job: Job) -> Tallied[World]:
    """`loop` with its saves and tracker requests tallied, so that its row carries its cost."""
    return Tallied(loop, partial(point_counters, job=job))


class StatusLine:
    """Progress on stderr: one line rewritten in place on a terminal, else (when `lines`) a line every few seconds.

    The lines mode is for logs (CI): the first line comes with the first report, so a reader of
    the log knows the work started, then one every PROGRESS_EVERY seconds. `after` (seconds):
    the lines come unasked too once the work has run that long (a long exploration says it is alive).
    `clock` is injected so that tests never read the real one.
    """

    def __init__(
        self, label: str, *, lines: bool = False, after: float | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self.label = label
        self.live = sys.stderr.isatty()
        self.lines = lines and not self.live
        self.after = None if self.live else after
        self.clock = time.monotonic if clock is None else clock
        self.started = self.clock()
        self.last: float | None = None

    def show(self, text: str) -> None:
        """Replace the line with `label: text` (or print it, when a line is due)."""
        if self.live:
            sys.stderr.write(f"\r{self.label}: {text} ")
            sys.stderr.flush()
        elif self.lines or (self.after is not None and self.clock() - self.started >= self.after):
            now = self.clock()
            if self.last is None or now - self.last >= PROGRESS_EVERY:
                self.last = now
                sys.stderr.write(f"crashsweep: {self.label}: {text}\n")
                sys.stderr.flush()

    def done(self) -> None:
        """Clear the line."""
        if self.live:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()


class _Progress(StatusLine):
    """The explorer's progress: states found and found per second, states still to visit, crashes so far.

    "to visit", not "frontier": the search's queue is no relation of the `frontier` command.
    """

    def __call__(self, states: int, queued: int, crashes: int) -> None:
        seconds = self.clock() - self.started
        rate = f", {states / seconds:.0f} states/s" if seconds > 0 else ""
        self.show(f"{states} states, {queued} to visit, up to {crashes} crashes{rate}")


class Interrupted(Exception):
    """Ctrl-C during an exploration (with how far it got) or while writing; the message says what is on disk.

    Not a KeyboardInterrupt: click would turn that into a bare "Aborted!" and lose the figures.
    """


def run(chosen: str | Design, choices: Choices, *, layers: bool = False) -> tuple[Exploration[Any], Summary]:
    """Explore the variant named `chosen` (or the design itself) under `choices` and compute its row.

    `layers`: for a design with retry layers, each layer's worst scenario without it too (one
    exploration more per layer, reports/layers.py).
    """
    variant = chosen if isinstance(chosen, str) else chosen.name
    if not isinstance(chosen, str):
        retry_cost.warn(chosen, choices.depth)
    progress = _Progress(variant, lines=choices.progress, after=PROGRESS_AFTER)
    try:
        exploration = explore(
            costed(choices.model(chosen), choices.job),
            choices.depth,
            max_states=choices.max_states,
            progress=progress,
            projection=choices.projection,
        )
    except ExplorationInterrupted as error:
        raise Interrupted(f"{variant}: {error}; nothing was written") from None
    finally:
        progress.done()
    summary = summarize(
        exploration,
        variant=variant,
        job=choices.job.name,
        tracker=choices.tracker.name,
        faults=choices.faults,
        fresh_ids=choices.fresh_ids,
    )
    if choices.upgrade is not None:
        then = choices.upgrade if isinstance(choices.upgrade, str) else choices.upgrade.name
        summary = replace(summary, upgrade=then)
    if layers and not isinstance(chosen, str) and chosen.retries:
        summary = replace(summary, per_layer=without_each(chosen, partial(_worst_row, choices=choices)))
    return exploration, summary


def _worst_row(design: Design, choices: Choices) -> Summary:
    """`design`'s row under `choices`, its worst scenario found even without retry layers."""
    exploration = explore(choices.model(design), choices.depth, max_states=choices.max_states)
    job, tracker = choices.job.name, choices.tracker.name
    return summarize(exploration, variant=design.name, job=job, tracker=tracker, faults=choices.faults, worst=True)


def run_durable(chosen: str | Design, choices: Choices, fsync: str | None, unreadable: str | None) -> Summary:
    """The row of `chosen` given the fsync policy and unreadable-checkpoint choice (None: the design's own)."""
    if fsync is None and unreadable is None:
        return run(chosen, choices)[1]
    picked = design(chosen) if isinstance(chosen, str) else chosen
    changes = {"fsync": fsync, "unreadable": unreadable}
    given = {name: value for name, value in changes.items() if value is not None}
    summary = run(replace(picked, **given), choices)[1]  # type: ignore[arg-type]  # two str fields
    return replace(summary, **given)  # type: ignore[arg-type]
