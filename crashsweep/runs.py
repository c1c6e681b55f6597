"""Running one design's exploration from command-line choices, with progress on a terminal.

Shared by every command that explores (explore, compare, and later view and others).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from explorer.model import Model
from explorer.search import Exploration, ExplorationInterrupted, explore
from explorer.tally import Tallied
from reports.summary import Summary, summarize
from spec.cost import point_counters
from spec.design import Design
from spec.job import TRIAGE, Job, load_job
from spec.tracker import TRACKERS, TrackerKind
from spec.world import World
from variants import model

DEFAULT_MAX_STATES = 2_000_000


@dataclass(frozen=True)
class Choices:
    """What the user chose: job, tracker, depth and the state limit."""

    job: Job
    job_source: str
    tracker: TrackerKind
    depth: int
    max_states: int


def read_job(path: Path | None) -> tuple[Job, str]:
    """The job from `path`, or the built-in triage job; JobError on a bad file."""
    if path is None:
        return TRIAGE, "triage (built in)"
    return load_job(path), str(path)


def tracker_kind(name: str) -> TrackerKind:
    """The tracker kind called `name` (the CLI has checked it is one of TRACKERS)."""
    return TRACKERS[name]


def costed(loop: Model[World], job: Job) -> Tallied[World]:
    """`loop` with its saves and tracker requests tallied, so that its row carries its cost."""
    return Tallied(loop, partial(point_counters, job=job))


class StatusLine:
    """One line of progress on stderr, rewritten in place; silent unless stderr is a terminal."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.live = sys.stderr.isatty()

    def show(self, text: str) -> None:
        """Replace the line with `label: text`."""
        if self.live:
            sys.stderr.write(f"\r{self.label}: {text} ")
            sys.stderr.flush()

    def done(self) -> None:
        """Clear the line."""
        if self.live:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()


class _Progress(StatusLine):
    """The explorer's progress: states, frontier, crashes so far."""

    def __call__(self, states: int, frontier: int, crashes: int) -> None:
        self.show(f"{states} states, frontier {frontier}, up to {crashes} crashes")


class Interrupted(Exception):
    """Ctrl-C during an exploration, with how far it got.

    Not a KeyboardInterrupt: click would turn that into a bare "Aborted!" and lose the figures.
    """


def run(chosen: str | Design, choices: Choices) -> tuple[Exploration[Any], Summary]:
    """Explore the variant named `chosen` (or the design itself) under `choices` and compute its row."""
    variant = chosen if isinstance(chosen, str) else chosen.name
    progress = _Progress(variant)
    try:
        exploration = explore(
            costed(model(chosen, choices.job, choices.tracker), choices.job),
            choices.depth,
            max_states=choices.max_states,
            progress=progress,
        )
    except ExplorationInterrupted as error:
        raise Interrupted(f"{variant}: {error}") from None
    finally:
        progress.done()
    summary = summarize(exploration, variant=variant, job=choices.job.name, tracker=choices.tracker.name)
    return exploration, summary
