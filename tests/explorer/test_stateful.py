"""Hypothesis stateful testing over the models' own step functions (crashsweep.explorer.stateful).

A toy sender (defined here) exercises the machine itself; the seed designs show it on the
real loop: the keyed designs hold under long random crash sequences, the two unkeyed ones
are caught with one crash, and every state a random run reaches is a node of the BFS graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import Phase, seed, settings
from hypothesis.stateful import invariant, run_state_machine_as_test

from crashsweep.explorer import explore, replay
from crashsweep.explorer.model import Action, ModelDefinitionError, Property
from crashsweep.explorer.stateful import (
    DEFAULT_CRASHES,
    DEFAULT_STEPS,
    ModelMachine,
    PropertyViolation,
    describe_path,
    fuzz,
    state_machine,
)
from crashsweep.spec.job import TRIAGE, Call, Job
from crashsweep.spec.tracker import KEYED, KEYLESS
from crashsweep.variants import SEED_DESIGNS, model

# Each stateful example runs hundreds of model steps: a quarter of the profile's examples
# (25 under "ci", 250 under "thorough").
EXAMPLES = max(10, settings().max_examples // 4)

Mode = Literal["resend", "dedupe", "flag-first"]
# A sender state: (where, flag saved, copies the receiver holds); where is "init", "down",
# a crash point ("started", "flagged", "sent", "saved") or "done".
Sent = tuple[str, bool, int]

START = Action("step", "start")
NEXT = Action("step", "next")
ALTERNATE = Action("step", "next (alternate)")
CRASH = Action("crash", "crash")
RESTART = Action("restart", "restart")


@dataclass(frozen=True)
class Sender:
    """A toy loop that must deliver one message once; the disk holds one flag, "sent".

    - resend: send, then save the flag; a crash between the two sends twice.
    - dedupe: the same, but the receiver keeps one copy per message ID (like a key): correct.
    - flag-first: save the flag, then send; a crash between the two loses the message.
    A started process offers two equivalent ways on ("next" and an alternate) so that a
    crash is not always the second action.
    """

    mode: Mode

    def initial(self) -> Sent:
        """Nothing run, nothing saved, nothing received."""
        return ("init", False, 0)

    def actions(self, state: Sent) -> Sequence[Action]:
        """Start, restart, next (or its alternate) or crash; nothing once done."""
        where = state[0]
        if where == "init":
            return (START,)
        if where == "down":
            return (RESTART,)
        if where == "done":
            return ()
        if where == "started":
            return (NEXT, ALTERNATE, CRASH)
        return (NEXT, CRASH)

    def step(self, state: Sent, action: Action) -> tuple[Sent, Mapping[str, int]]:
        """One stretch of the sender's program."""
        where, flag, copies = state
        if action.kind == "crash":
            return ("down", flag, copies), {}
        if where in ("init", "down"):
            return ("started", flag, copies), {"starts": 1}
        if where == "started" and flag:
            return ("done", flag, copies), {}
        program = ("started", "flagged", "sent", "done") if self.mode == "flag-first" else ("started", "sent", "saved")
        after = program[program.index(where) + 1] if where in program[:-1] else "done"
        if after == "sent":
            copies = 1 if self.mode == "dedupe" else copies + 1
        if after in ("flagged", "saved"):
            flag = True
        return (after, flag, copies), {}

    def is_finished(self, state: Sent) -> bool:
        """The sender has exited."""
        return state[0] == "done"

    def crash_point(self, state: Sent) -> str | None:
        """Every place a running sender can be is a crash point."""
        return state[0] if state[0] not in ("init", "down", "done") else None

    @property
    def properties(self) -> Sequence[Property[Sent]]:
        """At most one copy always; at least one at the end; their witnesses."""
        return (
            Property.always(
                "at-most-once", lambda s: s[2] <= 1, witness="sent", explain=lambda s: f"{s[2]} copies received"
            ),
            Property.at_end("delivered", lambda s: s[2] >= 1, witness="finished", explain=lambda s: "no copy received"),
            Property.sometimes("sent", lambda s: s[2] >= 1),
            Property.sometimes("finished", lambda s: s[0] == "done"),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[Sent], int]]:
        """Copies received."""
        return {"copies": lambda s: s[2]}


# The public API as a user's test file uses it: pytest collects the machine's TestCase.
TestDedupeSender = state_machine(Sender("dedupe"), crashes=4, steps=50, name="DedupeSenderMachine").TestCase


def _caught(model: Any, seed_value: int = 0, crashes: int = DEFAULT_CRASHES) -> PropertyViolation:
    outcome = fuzz(model, crashes=crashes, examples=EXAMPLES, seed_value=seed_value)
    assert outcome.violation is not None, f"no violation in {outcome.figures}"
    return outcome.violation


def _replays(model: Any, violation: PropertyViolation) -> None:
    """The shrunk failure is an explorer path: its code replays to the same steps."""
    again = replay(model, violation.depth, violation.path.code)
    assert again == violation.path


# The toy sender.


@pytest.mark.parametrize(
    ("mode", "broken", "kind", "point"),
    [("resend", "at-most-once", "always", "sent"), ("flag-first", "delivered", "at_end", "flagged")],
)
def test_a_buggy_sender_is_caught_and_shrunk_to_one_crash(mode: Mode, broken: str, kind: str, point: str) -> None:
    sender = Sender(mode)
    violation = _caught(sender)
    assert (violation.property, violation.kind) == (broken, kind)
    assert violation.path.crashes == 1
    crash = next(i for i, step in enumerate(violation.path.steps) if step.action == CRASH)
    assert sender.crash_point(violation.path.steps[crash - 1].state) == point
    _replays(sender, violation)
    assert violation.depth == DEFAULT_CRASHES
    assert f"path code {violation.path.code}" in str(violation)


def test_the_correct_sender_holds_under_crash_sequences_up_to_its_budget() -> None:
    outcome = fuzz(Sender("dedupe"), crashes=3, examples=EXAMPLES, seed_value=0)
    figures = outcome.figures
    assert outcome.violation is None
    assert outcome.unwitnessed == ()
    assert figures.most_crashes == 3
    # One run per example; hypothesis stops a few examples early, so a few runs do not finish.
    assert figures.runs >= figures.finished >= EXAMPLES * 3 // 4
    assert 0 < figures.crashes < figures.steps


@pytest.mark.parametrize("crashes", [0, 1, 3])
def test_no_run_crashes_more_than_its_budget(crashes: int) -> None:
    figures = fuzz(Sender("dedupe"), crashes=crashes, examples=EXAMPLES, seed_value=0).figures
    assert figures.most_crashes <= crashes
    assert figures.crashes <= crashes * figures.runs
    assert figures.finished > 0


def test_the_same_seed_gives_the_same_runs_and_the_same_counterexample() -> None:
    one, two = (fuzz(Sender("dedupe"), examples=10, seed_value=7) for _ in range(2))
    assert one.figures == two.figures
    found = [_caught(Sender("resend"), seed_value=7) for _ in range(2)]
    assert found[0].path == found[1].path


def test_a_machine_run_as_a_test_raises_the_violation_with_its_path() -> None:
    machine = state_machine(Sender("resend"), crashes=2, steps=50)
    quiet = settings(
        machine.TestCase.settings,
        max_examples=EXAMPLES,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
    )
    with pytest.raises(PropertyViolation) as caught:
        run_state_machine_as_test(seed(0)(machine), settings=quiet)
    violation = caught.value
    assert violation.property == "at-most-once"
    assert violation.depth == 2
    _replays(Sender("resend"), violation)


def test_a_subclass_adds_invariants_and_keeps_the_machine_settings() -> None:
    seen: list[Sent] = []

    class Watched(ModelMachine[Sent]):
        model = Sender("dedupe")
        crash_budget = 2
        steps = 40

        @invariant()
        def copies_never_exceed_one(self) -> None:
            seen.append(self.state)
            assert self.state[2] <= 1

    assert Watched.TestCase.settings.stateful_step_count == 40
    assert Watched.TestCase.settings.deadline is None
    run_state_machine_as_test(Watched, settings=settings(Watched.TestCase.settings, max_examples=5, database=None))
    assert seen
    assert Watched.figures.most_crashes <= 2


def test_the_default_machine_reaches_the_end_of_a_run_with_several_crashes() -> None:
    machine = state_machine(Sender("dedupe"))
    assert (machine.crash_budget, machine.steps) == (DEFAULT_CRASHES, DEFAULT_STEPS)
    assert machine.TestCase.settings.stateful_step_count == DEFAULT_STEPS


def test_describe_path_gives_one_line_per_step() -> None:
    violation = _caught(Sender("resend"))
    lines = describe_path(Sender("resend"), violation.path)
    assert len(lines) == len(violation.path.steps)
    assert lines[0].split() == ["0", "-", "(initial)", "-"]
    assert any(line.split()[1:] == ["crash", "crash", "-"] for line in lines)


# Badly defined models fail loudly, as in the explorer.


@dataclass(frozen=True)
class Stuck(Sender):
    """A sender that, once started, has nothing to do and is not finished."""

    def actions(self, state: Sent) -> Sequence[Action]:
        """Nothing after the start."""
        return (START,) if state[0] == "init" else ()


@dataclass(frozen=True)
class Restless(Sender):
    """A sender whose finished state still offers an action."""

    def actions(self, state: Sent) -> Sequence[Action]:
        """Next even when done."""
        return (NEXT,) if state[0] == "done" else super().actions(state)


@pytest.mark.parametrize("broken", [Stuck("dedupe"), Restless("dedupe")])
def test_a_model_that_cannot_go_on_or_does_not_stop_is_an_error(broken: Sender) -> None:
    with pytest.raises(ModelDefinitionError):
        fuzz(broken, examples=5, seed_value=0)


@dataclass(frozen=True)
class Unwitnessed(Sender):
    """An invariant without a witness."""

    @property
    def properties(self) -> Sequence[Property[Sent]]:
        """One invariant, no witness."""
        return (Property.always("at-most-once", lambda s: s[2] <= 1, witness="nothing"),)


def test_bad_arguments_and_bad_models_fail_when_the_machine_is_built() -> None:
    with pytest.raises(ModelDefinitionError, match="witness"):
        state_machine(Unwitnessed("dedupe"))
    with pytest.raises(ValueError, match="crash_budget"):
        state_machine(Sender("dedupe"), crashes=-1)
    with pytest.raises(ValueError, match="steps"):
        state_machine(Sender("dedupe"), steps=0)
    with pytest.raises(ValueError, match="examples"):
        fuzz(Sender("dedupe"), examples=0)


# The seed designs.

SEEDS = {design.name: model(design.name, TRIAGE, KEYED) for design in SEED_DESIGNS}


@pytest.mark.parametrize("variant", ["idempotency-keys", "attempt-markers", "keys-and-markers"])
def test_the_designs_that_keep_the_invariants_hold_under_long_crash_sequences(variant: str) -> None:
    outcome = fuzz(SEEDS[variant], crashes=8, examples=EXAMPLES, seed_value=0)
    assert outcome.violation is None, str(outcome.violation)
    assert outcome.unwitnessed == ()
    assert outcome.figures.most_crashes == 8
    assert outcome.figures.finished >= EXAMPLES * 3 // 4


@pytest.mark.parametrize("seed_value", [0, 1])
@pytest.mark.parametrize("variant", ["save-once-per-turn", "save-after-reply"])
def test_the_unkeyed_designs_are_caught_with_exactly_one_crash(variant: str, seed_value: int) -> None:
    violation = _caught(SEEDS[variant], seed_value=seed_value)
    assert violation.property == "no-duplicate"
    assert violation.path.crashes == 1
    assert "has 2 records" in violation.detail
    _replays(SEEDS[variant], violation)


@pytest.mark.parametrize("seed_value", [2, 5, 7])
def test_a_crash_is_dropped_even_when_the_budget_is_spent(seed_value: int) -> None:
    # With a small budget, runs often spend it all. Were the draws to depend on the crashes
    # left, dropping one crash would shift every later draw and the shrinker would get stuck
    # (with such draws, these seeds shrink to two or three crashes).
    one_write = Job("one", ((Call("post", "post", True),),))
    loop = model("save-once-per-turn", one_write, KEYLESS)
    violation = fuzz(loop, crashes=3, examples=25, seed_value=seed_value).violation
    assert violation is not None
    assert violation.path.crashes == 1
    _replays(loop, violation)


def _key(loop: Any) -> Callable[[Any], Any]:
    """The model's state key (a node stands for every state with its key), or the state itself."""
    return getattr(loop, "key", None) or (lambda state: state)


def _bfs_nodes(loop: Any, depth: int) -> set[tuple[Any, int]]:
    graph = explore(loop, depth).graph
    key = _key(loop)
    return {(key(data["state"]), data["crashes"]) for _, data in graph.nodes(data=True)}


@pytest.mark.parametrize(
    ("loop", "depth"),
    [
        (Sender("resend"), 3),
        (Sender("dedupe"), 3),
        *((SEEDS[design.name], 2) for design in SEED_DESIGNS),
    ],
    ids=["sender-resend", "sender-dedupe", *(design.name for design in SEED_DESIGNS)],
)
def test_every_state_a_random_run_reaches_is_a_node_of_the_bfs_graph(loop: Any, depth: int) -> None:
    nodes, key = _bfs_nodes(loop, depth), _key(loop)
    visited: set[tuple[Any, int]] = set()

    class CrossChecked(ModelMachine[Any]):
        model = loop
        crash_budget = depth

        checked = 0

        @invariant(check_during_init=True)
        def in_the_bfs_graph(self) -> None:
            # A rule may take several steps (forced moves, then a choice): check each new state.
            steps = self.path.steps
            for step in steps[self.checked :]:
                visited.add((step.state, step.crashes))
                found = (key(step.state), step.crashes) in nodes
                assert found, f"not in the BFS graph at depth {depth}: {self.path.code}"
            self.checked = len(steps)

        @invariant()
        def properties_hold(self) -> None:
            """Counterexamples are welcome here: the BFS graph has them too."""

    quick = settings(CrossChecked.TestCase.settings, max_examples=EXAMPLES, database=None, derandomize=True)
    run_state_machine_as_test(CrossChecked, settings=quick)
    assert len(visited) > 1
    assert max(crashes for _, crashes in visited) == depth
