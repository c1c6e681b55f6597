"""A loop design against a job and a tracker, as a model the explorer can search.

The world has three kinds of moment: no process (before the first start, or after a crash),
a process at a crash point, and the run finished. The enabled actions follow: start or
restart; continue or crash; nothing. The invariants and measures come from spec/.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from explorer.model import Action, Property
from spec import invariants, metrics
from spec.design import Design, Env
from spec.process import advance, boot
from spec.world import World

START = Action("step", "start")
RESTART = Action("restart", "restart")
CONTINUE = Action("step", "continue")
CRASH = Action("crash", "crash")


@dataclass(frozen=True)
class LoopModel:
    """The explorer's view of one design run against one job and one tracker."""

    design: Design
    env: Env

    def initial(self) -> World:
        """No checkpoint, an empty tracker, no process yet."""
        return World()

    def actions(self, state: World) -> Sequence[Action]:
        """Start or restart a stopped world; continue or crash a running process."""
        if state.finished:
            return ()
        if state.process is None:
            return (START,) if state.runs == 0 else (RESTART,)
        return (CONTINUE, CRASH)

    def step(self, state: World, action: Action) -> tuple[World, Mapping[str, int]]:
        """Apply one action: the process's next stretch, a crash, or a (re)start."""
        if action.kind == "crash":
            return state.crashed(), {}
        if state.process is None:
            return boot(state, self.env, self.design)
        return advance(state, self.env, self.design)

    def is_finished(self, state: World) -> bool:
        """The run is done and its last process has exited."""
        return state.finished

    def crash_point(self, state: World) -> str | None:
        """The crash point the process is at, if one is running."""
        return state.process.point if state.process is not None else None

    @property
    def properties(self) -> Sequence[Property[World]]:
        """no-duplicate in every state, no-loss at the end, and their witnesses."""
        job = self.env.job
        return (
            Property.always(
                invariants.NO_DUPLICATE,
                partial(invariants.no_duplicate, job=job),
                witness=invariants.SOME_WRITE_APPLIED,
                explain=partial(invariants.violation, invariants.NO_DUPLICATE, job=job),
            ),
            Property.at_end(
                invariants.NO_LOSS,
                partial(invariants.no_loss, job=job),
                witness=invariants.SOME_RUN_FINISHED,
                explain=partial(invariants.violation, invariants.NO_LOSS, job=job),
            ),
            Property.sometimes(invariants.SOME_WRITE_APPLIED, partial(invariants.some_write_applied, job=job)),
            Property.sometimes(invariants.SOME_RUN_FINISHED, partial(invariants.some_run_finished, job=job)),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[World], int]]:
        """dups, with_dups and missing of a scenario's final world."""
        job = self.env.job
        return {
            "dups": partial(metrics.dups, job=job),
            "with_dups": partial(metrics.with_dups, job=job),
            "missing": partial(metrics.missing, job=job),
        }
