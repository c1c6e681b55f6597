"""Which process each step of a counterexample belongs to, when two may be alive (spec/FAULTS.md section 6).

A world holds at most two processes but names neither, so the reports tell them apart from
the actions: a start or restart begins a new process; a pause suspends the running one and
begins a restart beside it; a wake-up runs the paused one again and holds the other; "held
goes on" runs the held one again. Each process is numbered in the order it started, and sits
in one of two lanes: the first lane when it is free at the process's start, else the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.reports.counterexample import Step

PAUSE, WAKE, HELD_GOES_ON = "pause", "wake", "held goes on"
TIMEOUT = " on timeout"
"""The end of a retry move's label that suspends the attempt and starts another beside it (RETRIES.md 1.2)."""


def _suspends(step: Step) -> bool:
    """A pause, or a retry on a timeout: the running process is suspended and a new one starts."""
    return (step.kind == "fault" and step.action == PAUSE) or (step.kind == "retry" and step.action.endswith(TIMEOUT))


@dataclass(frozen=True)
class Actor:
    """The process a step belongs to: its number (from 1, in start order) and its lane (0 or 1).

    For a pause, `number` and `lane` are the restart's, and `paused` the paused process's
    number; for a wake-up, `held` is the number of the process held meanwhile (0: none).
    """

    number: int
    lane: int
    paused: int = 0
    held: int = 0


def actors(steps: Sequence[Step]) -> list[Actor]:
    """For each step, the process that acts in it (see Actor)."""
    lane_of: dict[int, int] = {}
    running = paused = held = 0
    started = 0
    result: list[Actor] = []

    def begin() -> int:
        nonlocal started
        started += 1
        alive = {lane_of[n] for n in (running, paused, held) if n}
        lane_of[started] = 0 if 0 not in alive else 1
        return started

    for step in steps:
        if _suspends(step):
            paused = running
            running = begin()
            result.append(Actor(running, lane_of[running], paused=paused))
        elif step.kind == "step" and step.action == WAKE:
            held, running, paused = running, paused, 0
            result.append(Actor(running, lane_of[running], held=held))
        elif step.kind == "step" and step.action == HELD_GOES_ON:
            running, held = held, 0
            result.append(Actor(running, lane_of[running]))
        elif step.kind == "restart" or (step.kind == "step" and step.action == "start"):
            running = begin()
            result.append(Actor(running, lane_of[running]))
        else:
            result.append(Actor(running, lane_of.get(running, 0)))
        if step.state.process is None:
            running = 0  # it crashed, exited or stopped (a restart refused at its start too)
    return result


def two_lanes(steps: Sequence[Step]) -> bool:
    """Whether a second process ever lived (the path holds a pause, or a retry on a timeout)."""
    return any(_suspends(step) for step in steps)
