"""Random deep crash sequences in your own pytest suite, with crashsweep.explorer.stateful.

`state_machine(model, crashes=8)` turns any model (a built-in design, or your own) into a
hypothesis state machine: each example is one run from the initial state in which any step
may be a crash (up to `crashes` of them) followed by a restart. Every state is checked
against the model's "always" properties, every finished state against its "at_end" ones.
A failure is shrunk, and raised as a PropertyViolation whose message is the path step by
step with its replay code. Run this file with `pytest docs/examples/test_my_design.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from hypothesis.stateful import invariant

from crashsweep import variants
from crashsweep.explorer.model import Action, Property
from crashsweep.explorer.stateful import ModelMachine, fuzz, state_machine
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.spec.world import World

# 1. A built-in design against the built-in triage job: pytest runs the machine's TestCase.
#    (The number of examples comes from your hypothesis profile.)

TestKeysAndMarkers = state_machine(variants.model("keys-and-markers", TRIAGE, KEYED), crashes=8).TestCase


# 2. The same design with an invariant of your own: subclass ModelMachine and set `model`.
#    `self.state` is the current World, `self.crashes` the crashes so far, `self.path` the run.


class OneRunId(ModelMachine[World]):
    """Every write the tracker holds carries the same run ID, however often the loop crashes."""

    model = variants.model("keys-and-markers", TRIAGE, KEYED)
    crash_budget = 8

    @invariant()
    def one_run_id(self) -> None:
        """Keys are made of the run ID: a second run ID would mean a second set of keys."""
        assert len({record.run for record in self.state.tracker.records}) <= 1, self.path.code


TestOneRunId = OneRunId.TestCase


# 3. A design of your own: a mailer that must send one welcome email. It is any object with
#    initial/actions/step/is_finished/crash_point/properties/measures (crashsweep.explorer.model.Model).


@dataclass(frozen=True)
class Mail:
    """The world of the mailer: where its process is, its one durable flag, the inbox."""

    at: str = "never started"  # "down" after a crash, a crash point while running, or "done"
    flag_saved: bool = False  # on disk: the email went out
    inbox: int = 0  # emails the recipient got
    key_seen: bool = False  # the mail server already accepted this job's idempotency key


START, RESTART = Action("step", "start"), Action("restart", "restart")
NEXT, CRASH = Action("step", "next"), Action("crash", "crash")


@dataclass(frozen=True)
class Mailer:
    """Load the flag; unless it is set, send the email, then save the flag; exit."""

    keyed: bool  # whether the email carries an idempotency key the server honours

    def initial(self) -> Mail:
        return Mail()

    def actions(self, state: Mail) -> Sequence[Action]:
        if state.at == "never started":
            return (START,)
        if state.at == "down":
            return (RESTART,)
        return () if state.at == "done" else (NEXT, CRASH)

    def step(self, state: Mail, action: Action) -> tuple[Mail, Mapping[str, int]]:
        if action.kind == "crash":
            return replace(state, at="down"), {}
        if action in (START, RESTART):
            return replace(state, at="loaded"), {}
        if state.at == "loaded" and state.flag_saved:
            return replace(state, at="done"), {}
        if state.at == "loaded":  # send
            if self.keyed and state.key_seen:
                return replace(state, at="sent"), {}
            return replace(state, at="sent", inbox=state.inbox + 1, key_seen=True), {"sends": 1}
        if state.at == "sent":
            return replace(state, at="saved", flag_saved=True), {}
        return replace(state, at="done"), {}

    def is_finished(self, state: Mail) -> bool:
        return state.at == "done"

    def crash_point(self, state: Mail) -> str | None:
        return state.at if state.at in ("loaded", "sent", "saved") else None

    @property
    def properties(self) -> Sequence[Property[Mail]]:
        return (
            Property.always("one email", lambda s: s.inbox <= 1, witness="emailed"),
            Property.at_end("email arrived", lambda s: s.inbox >= 1, witness="finished"),
            Property.sometimes("emailed", lambda s: s.inbox >= 1),
            Property.sometimes("finished", lambda s: s.at == "done"),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[Mail], int]]:
        return {"emails": lambda s: s.inbox}


# A run of the mailer is short: 60 rules per example (the default is 150) leave room for 8 crashes.
TestKeyedMailer = state_machine(Mailer(keyed=True), crashes=8, steps=60).TestCase


def test_the_mailer_without_a_key_can_send_twice() -> None:
    """`fuzz` runs a machine outside the test runner and returns the shrunk violation, if any."""
    outcome = fuzz(Mailer(keyed=False), crashes=8, examples=100, seed_value=0)
    assert outcome.violation is not None
    assert outcome.violation.property == "one email"
    assert outcome.violation.path.crashes == 1  # a crash after "sent", before "saved"
    assert outcome.violation.path.code == "5:3=1"  # replays with crashsweep.explorer.replay(model, 8, code)
