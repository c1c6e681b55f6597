"""Hypothesis stateful testing over any model: random deep crash sequences, shrunk to a path.

`state_machine(model, crashes=8)` turns a model into a hypothesis `RuleBasedStateMachine`
(a subclass of `ModelMachine`; subclass that directly to add invariants of your own):

- one hypothesis example is one run of the model from its initial state. Its one rule, `act`,
  takes one of the actions `crashsweep.explorer.search.enabled` allows there, with the crash budget as
  the depth: a step, a restart, or a crash at the current crash point while the run has
  crashed fewer than `crashes` times. Every action is recorded with its index among the
  enabled ones, so a run *is* an explorer `Path`: a failure's `.path.code` replays with
  `crashsweep.explorer.replay(model, crashes, code)` or `crashsweep replay --depth <crashes>`.
- one invariant, `properties_hold`, checks the model's "always" properties in every state
  and its "at_end" properties in every finished state; a violation raises `PropertyViolation`
  with the path from the initial state to the violating state. "sometimes" properties
  (witnesses) cannot fail in one random run: the machine records which ones it has seen
  (`Figures.witnessed`), and `fuzz` reports those that no run reached.
- once the run finishes, the rest of the example's rules do nothing; a run that has not
  finished when the example's `steps` rules are spent is cut off there. (Starting over
  instead would pack more runs into an example, but a failure late in an example then
  shrinks very slowly: the shrinker must first delete the runs before it.)

How choices are drawn, so that failures shrink to the fewest crashes: a state that offers
one action takes it without a draw; otherwise the draw depends only on what the model offers
there, never on the crashes left, so that dropping one crash does not shift the meaning of
every later draw (once the budget is spent, a drawn crash takes the first action instead).
Each example first draws a *pace* p; at a state offering n actions, a drawn value v takes
action v mod (n + p), and values of n or more take the first action (the model's main
line). Pace 0 chooses uniformly (crash storms right after each restart); pace 31 leaves the
main line about once in 33 choices, so crashes also land late in long runs. A model gets
the paces of `PACES` up to half its main line's length (the steps of a run that always
takes the first action). Shrinking moves toward pace 0 and value 0: toward the fewest
departures from the main line.

This module is generic: it knows models, not agent loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from crashsweep.explorer.model import MOVES, Action, Model, ModelDefinitionError, Property, PropertyKind, validate_model
from crashsweep.explorer.path import Path, PathStep
from crashsweep.explorer.search import enabled

S = TypeVar("S")

DEFAULT_CRASHES = 8
"""Crashes per run: well beyond the depth exhaustive search can afford (2 or 3)."""
DEFAULT_STEPS = 150
"""Rules (steps) per example: a triage run, about 45 steps without a crash, ends within it with 8."""
PACES = (0, 1, 3, 7, 15, 31)
"""Extra weight on the first action, one per example (see the module docstring)."""


@dataclass
class Figures:
    """What the runs of one machine class exercised, summed over every example it ran."""

    examples: int = 0
    """Hypothesis examples run, including those hypothesis discards (so it may pass max_examples)."""
    runs: int = 0
    """Runs of the model that took at least one step (one per example, less those that ended before one)."""
    finished: int = 0
    """Runs that reached a finished state (the others stopped early or broke a property)."""
    steps: int = 0
    """Actions taken, crashes and restarts included."""
    crashes: int = 0
    """Crash actions taken."""
    most_crashes: int = 0
    """The most crashes one run took."""
    witnessed: set[str] = field(default_factory=set)
    """The "sometimes" properties some visited state satisfied."""


class PropertyViolation(AssertionError):
    """A property failed in the last state of `path`, a replayable explorer path."""

    def __init__(self, model: Model[Any], prop: Property[Any], path: Path[Any], depth: int) -> None:
        self.property = prop.name
        self.kind: PropertyKind = prop.kind
        self.path: Path[Any] = path
        self.depth = depth
        """The crash budget: the depth at which `path.code` replays."""
        self.detail = prop.explain(path.end) if prop.explain is not None else ""
        crashes = path.crashes
        headline = (
            f"{prop.kind} property {prop.name!r} violated after {len(path.steps) - 1} steps and "
            f"{crashes} crash{'' if crashes == 1 else 'es'}"
        )
        lines = [
            headline + (f": {self.detail}" if self.detail else ""),
            f"path code {path.code} (replays at depth {depth})",
            *describe_path(model, path),
        ]
        super().__init__("\n".join(lines))


def describe_path(model: Model[Any], path: Path[Any]) -> list[str]:
    """One line per step: position, kind, action, and the crash point reached ("-": none)."""
    lines = []
    for pos, step in enumerate(path.steps):
        kind, label = ("-", "(initial)") if step.action is None else (step.action.kind, step.action.label)
        where = "finished" if model.is_finished(step.state) else (model.crash_point(step.state) or "-")
        lines.append(f"{pos:>4}  {kind:<7}  {label:<10}  {where}")
    return lines


def machine_settings(steps: int = DEFAULT_STEPS) -> settings:
    """Settings for a model machine: `steps` rules per example, no deadline, no health checks.

    The rest (max_examples, derandomize, database...) comes from the profile active when the
    machine class is created. To change some and keep these, pass them as the parent:
    `M.TestCase.settings = settings(M.TestCase.settings, max_examples=500)`.
    """
    return settings(deadline=None, suppress_health_check=list(HealthCheck), stateful_step_count=steps)


class ModelMachine(RuleBasedStateMachine, Generic[S]):
    """The hypothesis machine of a model; `state_machine` builds one, or subclass and set `model`.

    Class attributes: `model` (required), `crash_budget` (most crashes per run) and `steps`
    (rules per example). `state`, `crashes` and `path` describe the run so far; a subclass
    may read them in `@invariant()` methods of its own.
    """

    model: ClassVar[Model[Any]]
    crash_budget: ClassVar[int] = DEFAULT_CRASHES
    steps: ClassVar[int] = DEFAULT_STEPS
    properties: ClassVar[tuple[Property[Any], ...]] = ()
    paces: ClassVar[tuple[int, ...]] = PACES
    figures: ClassVar[Figures] = Figures()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check the class attributes; give the class its own figures and its test settings."""
        super().__init_subclass__(**kwargs)
        if cls.crash_budget < 0:
            raise ValueError(f"crash_budget must be at least 0, got {cls.crash_budget}")
        if cls.steps < 1:
            raise ValueError(f"steps must be at least 1, got {cls.steps}")
        if hasattr(cls, "model"):
            validate_model(cls.model)
            cls.properties = tuple(cls.model.properties)
            main_line = _main_line(cls.model)
            cls.paces = tuple(pace for pace in PACES if pace <= max(1, main_line // 2))
        cls.figures = Figures()
        cls.TestCase.settings = machine_settings(cls.steps)

    def __init__(self) -> None:
        super().__init__()
        type(self).figures.examples += 1
        self.pace = 0
        start: PathStep[S] = PathStep(None, 0, self.model.initial(), 0)
        self._steps = [start]
        self._checked = 0

    @property
    def state(self) -> S:
        """The current state of the model."""
        return self._steps[-1].state

    @property
    def crashes(self) -> int:
        """Crashes taken so far in the run."""
        return self._steps[-1].crashes

    @property
    def path(self) -> Path[S]:
        """The run so far as an explorer path from the initial state."""
        return Path(tuple(self._steps))

    @initialize(data=st.data())
    def set_pace(self, data: st.DataObject) -> None:
        """Choose how often this example leaves the main line (see the module docstring)."""
        self.pace = data.draw(st.sampled_from(self.paces), label="pace")

    @rule(data=st.data())
    def act(self, data: st.DataObject) -> None:
        """Take one action: a step, a crash (under the crash budget) or a restart; none once finished."""
        if self.model.is_finished(self.state):
            return
        offered = self.model.actions(self.state)
        actions = enabled(self.model, self.state, self.crashes, self.crash_budget)
        if not actions:
            raise ModelDefinitionError(f"state {self.state!r} is neither finished nor has an enabled action")
        choice = 0
        if len(offered) > 1:
            # The draw depends on what the model offers, not on the crashes left, so that the
            # shrinker can drop a crash without shifting the meaning of every later draw.
            drawn = data.draw(st.integers(0, len(offered) - 1 + self.paces[-1]), label="choice")
            choice = _position(offered, actions, drawn % (len(offered) + self.pace))
        self._take(actions, choice)

    def _take(self, actions: Sequence[Action], choice: int) -> None:
        action = actions[choice]
        crashes = self.crashes + (action.kind in MOVES)
        after, _ = self.model.step(self.state, action)
        self._steps.append(PathStep(action, choice, after, crashes))
        figures = type(self).figures
        figures.runs += len(self._steps) == 2
        figures.steps += 1
        figures.crashes += action.kind in MOVES
        figures.most_crashes = max(figures.most_crashes, crashes)
        if self.model.is_finished(after):
            figures.finished += 1
            left = enabled(self.model, after, crashes, self.crash_budget)
            if left:
                raise ModelDefinitionError(
                    f"finished state {after!r} enables {left[0]!r}: a finished state ends its scenario"
                )

    @invariant(check_during_init=True)
    def properties_hold(self) -> None:
        """Always-properties in every state, at_end ones in finished states; note witnesses."""
        while self._checked < len(self._steps):
            self._check(self._checked)
            self._checked += 1

    def _check(self, position: int) -> None:
        state = self._steps[position].state
        finished: bool | None = None
        witnessed = type(self).figures.witnessed
        for prop in self.properties:
            if prop.kind == "sometimes":
                if prop.name not in witnessed and prop.check(state):
                    witnessed.add(prop.name)
                continue
            if prop.kind == "at_end":
                if finished is None:
                    finished = self.model.is_finished(state)
                if not finished:
                    continue
            if not prop.check(state):
                path = Path(tuple(self._steps[: position + 1]))
                raise PropertyViolation(self.model, prop, path, self.crash_budget)


def _main_line(model: Model[Any], limit: int = 10_000) -> int:
    """How many steps a run takes when it always takes the first action (at most `limit`)."""
    state = model.initial()
    for taken in range(limit):
        actions = model.actions(state)
        if model.is_finished(state) or not actions:
            return taken
        state, _ = model.step(state, actions[0])
    return limit


def _position(offered: Sequence[Action], actions: Sequence[Action], drawn: int) -> int:
    """The index among the enabled `actions` of offered action `drawn`; 0 if it is not enabled (or out of range)."""
    if drawn >= len(offered):
        return 0
    position = 0  # `enabled` keeps the offered actions' order: match the two lists in step
    for index, action in enumerate(offered):
        if position < len(actions) and actions[position] == action:
            if index == drawn:
                return position
            position += 1
        elif index == drawn:
            return 0
    return 0


def state_machine(
    model: Model[S], *, crashes: int = DEFAULT_CRASHES, steps: int = DEFAULT_STEPS, name: str | None = None
) -> type[ModelMachine[S]]:
    """A hypothesis RuleBasedStateMachine that runs `model` with up to `crashes` crashes per run.

    In a test file: `TestMine = state_machine(model).TestCase`. Or run it with
    `hypothesis.stateful.run_state_machine_as_test`. A failure raises `PropertyViolation`,
    whose `.path` is the shrunk run (`.path.code` replays at depth `crashes`). `steps` is the
    number of rules per example; `name` names the class (and its hypothesis database entry).
    """
    namespace: dict[str, Any] = {"model": model, "crash_budget": crashes, "steps": steps, "__module__": __name__}
    machine: type[ModelMachine[S]] = type(name or f"{type(model).__name__}Machine", (ModelMachine,), namespace)
    return machine


@dataclass(frozen=True)
class FuzzOutcome:
    """What `fuzz` found: the figures of its runs, and the shrunk violation if there was one."""

    seed: int
    figures: Figures
    violation: PropertyViolation | None
    witnesses: tuple[str, ...]
    """Every "sometimes" property of the model, in its order."""

    @property
    def unwitnessed(self) -> tuple[str, ...]:
        """The witnesses no run reached: the checks they stand for were never exercised."""
        return tuple(name for name in self.witnesses if name not in self.figures.witnessed)


def fuzz(
    model: Model[S],
    *,
    crashes: int = DEFAULT_CRASHES,
    examples: int = 100,
    seed_value: int = 0,
    steps: int = DEFAULT_STEPS,
) -> FuzzOutcome:
    """Run `model`'s machine for `examples` hypothesis examples, outside any test runner.

    Deterministic for a given seed: no example database, no time limits, no output. On a
    violation hypothesis shrinks it first; the outcome carries the shrunk `PropertyViolation`
    (and figures that include the shrinking runs).
    """
    if examples < 1:
        raise ValueError(f"examples must be at least 1, got {examples}")
    machine = state_machine(model, crashes=crashes, steps=steps)
    config = settings(
        machine_settings(steps),
        max_examples=examples,
        database=None,
        derandomize=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )
    witnesses = tuple(prop.name for prop in machine.properties if prop.kind == "sometimes")
    try:
        run_state_machine_as_test(seed(seed_value)(machine), settings=config)
    except PropertyViolation as violation:
        return FuzzOutcome(seed_value, machine.figures, violation, witnesses)
    return FuzzOutcome(seed_value, machine.figures, None, witnesses)
