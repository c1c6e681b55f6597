"""Retry layers (spec/RETRIES.md section 1): what each re-runs, on what, and how often.

A design lists its layers from the innermost out. A failure (an error after the tracker
applied a write, or a timeout) is caught by the innermost layer whose trigger it is and that
has an attempt left for the instance of its scope; the layer then re-runs its scope. The
attempts a layer has spent are the environment's, not the process's: the world keeps one
entry per retry in `World.struck` (as it keeps a spent `fails_after_accept`), so they survive
crashes and are part of the state. Everything here is a pure function of values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, TypeAlias, get_args

Scope: TypeAlias = Literal["call", "turn", "run"]
Trigger: TypeAlias = Literal["error", "unknown-outcome", "timeout"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
TRIGGERS: tuple[Trigger, ...] = get_args(Trigger)
FAILURES: frozenset[str] = frozenset({"error", "unknown-outcome"})
"""The triggers an error after the tracker applied a write fires (RETRIES.md 1.1)."""
TIMEOUTS: frozenset[str] = frozenset({"timeout"})
"""The trigger of a layer that gives up on an attempt that still runs (RETRIES.md 1.1)."""
MOST_LAYERS = 4
UNBOUNDED = "unbounded"
UNSET = "unset"
"""`retry_policy = "unset"`: the stack's default retry policy, unbounded attempts (RETRIES.md 1.8)."""
ONE_ATTEMPT = "one-attempt"
"""`schedule_to_close = "one-attempt"`: the layer's whole budget is one attempt's (RETRIES.md 1.8)."""
TIMED_OUT = "attempt timed out "
"""The `World.struck` entry `attempt timed out RUN CALL`: a process died inside an attempt of CALL under a
one-attempt budget, so the run fails at its next start (RETRIES.md 1.8, rules 2 and 3)."""
MOVE = "retry"
"""The kind of the explorer's action for a failure a layer catches (RETRIES.md 1.4)."""
ACCEPTED, RETURNED = "tracker accepted ", "tool returned "
"""The prefixes of a call's points: where a `call` layer's instance is under way (RETRIES.md 1.1)."""
MOVE_COUNTER = "move.retry"
"""The counter a retry move bumps, tallying retry moves over scenarios beside crashes and faults."""


class RetryError(ValueError):
    """A retry stack that cannot be used; the message names the layer and the key."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One retry layer: its scope, its trigger, and its attempts (None: unbounded, the depth bounds it).

    `unset`: unbounded because the layer's retry policy is left unset (the stack's default,
    RETRIES.md 1.8), as the design file says and the label shows. `one_attempt`: the layer's
    schedule-to-close budget is one attempt's, so an attempt that dies spends it (1.8).
    """

    scope: Scope
    on: Trigger
    attempts: int | None
    unset: bool = False
    one_attempt: bool = False

    @property
    def label(self) -> str:
        """`call x3 on error`, `run xN on timeout` (N: unbounded), `call x(unset) on error, 1-attempt budget`."""
        times = "(unset)" if self.unset else "N" if self.attempts is None else str(self.attempts)
        return f"{self.scope} x{times} on {self.on}" + (", 1-attempt budget" if self.one_attempt else "")

    def as_mapping(self) -> dict[str, object]:
        """The layer as a design file writes it."""
        found: dict[str, object] = {"scope": self.scope, "on": self.on}
        if self.unset:
            found["retry_policy"] = UNSET
        else:
            found["attempts"] = UNBOUNDED if self.attempts is None else self.attempts
        if self.one_attempt:
            found["schedule_to_close"] = ONE_ATTEMPT
        return found


Stack: TypeAlias = tuple[Layer, ...]


def counter(scope: str) -> str:
    """The counter a retry of `scope` bumps (`retry.call`)."""
    return f"retry.{scope}"


def stack_label(stack: Stack) -> str:
    """The stack, innermost first: `call x3 on error > run x2 on error`, or `no retries`."""
    return " > ".join(layer.label for layer in stack) if stack else "no retries"


def parse_stack(value: object) -> Stack:
    """A `retries` value of a design file (a list of tables), checked layer by layer."""
    if not isinstance(value, list):
        raise RetryError('retries: expected a list of tables, e.g. [{ scope = "call", on = "error", attempts = 3 }]')
    layers = tuple(_layer(i, item) for i, item in enumerate(value, 1))
    check_stack(layers)
    return layers


_KEYS = ("scope", "on", "attempts", "retry_policy", "schedule_to_close")


def _layer(i: int, item: object) -> Layer:
    where = f"retries[{i}]"
    if not isinstance(item, Mapping):
        raise RetryError(f"{where}: expected a table with scope, on and attempts")
    unknown = sorted(set(item) - set(_KEYS))
    if unknown:
        raise RetryError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})")
    for key, allowed in (("scope", SCOPES), ("on", TRIGGERS)):
        if item.get(key) not in allowed:
            raise RetryError(
                f"{where}.{key}: expected one of {', '.join(repr(a) for a in allowed)}, not {item.get(key)!r}"
            )
    one_attempt = _budget(where, item)
    if "retry_policy" in item:
        if item["retry_policy"] != UNSET:
            value = item["retry_policy"]
            raise RetryError(f'{where}.retry_policy: expected "{UNSET}" (or give attempts), not {value!r}')
        if "attempts" in item:
            raise RetryError(f'{where}: give attempts or retry_policy = "{UNSET}", not both (unset is unbounded)')
        return Layer(item["scope"], item["on"], None, unset=True, one_attempt=one_attempt)
    attempts = item.get("attempts")
    if attempts == UNBOUNDED:
        return Layer(item["scope"], item["on"], None, one_attempt=one_attempt)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 2:
        raise RetryError(
            f'{where}.attempts: expected an integer from 2 (the first attempt included), "unbounded", '
            f'or retry_policy = "{UNSET}"'
        )
    return Layer(item["scope"], item["on"], attempts, one_attempt=one_attempt)


def _budget(where: str, item: Mapping[str, object]) -> bool:
    """Whether the layer's schedule-to-close budget is one attempt's (RETRIES.md 1.8); refuse what it cannot be."""
    budget = item.get("schedule_to_close")
    if budget is None:
        return False
    if budget != ONE_ATTEMPT:
        raise RetryError(f'{where}.schedule_to_close: expected "{ONE_ATTEMPT}" (or leave it out), not {budget!r}')
    if item["scope"] != "call" or item["on"] not in FAILURES:
        raise RetryError(
            f'{where}.schedule_to_close: an activity\'s option, for scope = "call" on "error" or "unknown-outcome"'
        )
    return True


def check_stack(stack: Stack) -> None:
    """Refuse a stack whose scopes narrow from the innermost out, or that is too deep."""
    if len(stack) > MOST_LAYERS:
        raise RetryError(f"retries: at most {MOST_LAYERS} layers, not {len(stack)}")
    for inner, outer in pairwise(stack):
        if SCOPES.index(outer.scope) < SCOPES.index(inner.scope):
            raise RetryError(
                f"retries: layers go from the innermost out, so {outer.scope!r} cannot come after {inner.scope!r}"
            )


def timed_out(stack: Stack, point: str | None, run: str) -> str | None:
    """The entry a process dying at `point` of `run` leaves under `stack`, or None (RETRIES.md 1.8, rule 2).

    Only a `call` layer with a one-attempt budget, and only at one of a call's sites (its
    attempt under way): the attempt never answers, and its timeout leaves no time for another.
    """
    if point is None or not any(layer.one_attempt for layer in stack):
        return None
    for prefix in (ACCEPTED, RETURNED):
        if point.startswith(prefix):
            return f"{TIMED_OUT}{run} {point[len(prefix) :]}"
    return None


def lost_attempt(entry: str) -> tuple[str, str] | None:
    """(run, call) of an `attempt timed out RUN CALL` entry, or None for any other entry."""
    if not entry.startswith(TIMED_OUT):
        return None
    run, _, call = entry[len(TIMED_OUT) :].partition(" ")
    return run, call


def timed_out_call(struck: Sequence[str], run: str) -> str | None:
    """The call of `run` whose attempt died under a one-attempt budget, or None (RETRIES.md 1.8, rule 3)."""
    for entry in struck:
        lost = lost_attempt(entry)
        if lost is not None and lost[0] == run:
            return lost[1]
    return None


def failed_for_good(struck: Sequence[str], run: str) -> bool:
    """Whether a call of `run` timed out under a one-attempt budget: its next start fails the run (1.8, rule 3)."""
    return timed_out_call(struck, run) is not None


def instance(scope: str, run: str, call: str | None, turn: int | None) -> str | None:
    """The instance of `scope` a failure of `call` in turn `turn` of `run` belongs to (RETRIES.md 1.3).

    None when the process is in no instance of the scope (no call, or no turn under way).
    """
    if scope == "call":
        return None if call is None else f"{run}/{call}"
    if scope == "turn":
        return None if turn is None else f"{run}/turn {turn}"
    return "run"


def spent_entry(index: int, where: str) -> str:
    """The `World.struck` entry of one retry by layer `index` (0: innermost) of instance `where`."""
    return f"retry {index} {where}"


def catching(
    stack: Stack, triggers: frozenset[str], struck: Sequence[str], run: str, call: str | None, turn: int | None
) -> tuple[int, Layer, str] | None:
    """The innermost layer that catches a failure of one of `triggers`, with its index and the instance.

    `call` and `turn` say where the process is (None: in no call, or in no turn under way);
    a layer catches only inside an instance of its scope, and only with an attempt left.
    """
    for index, layer in enumerate(stack):
        if layer.on not in triggers:
            continue
        where = instance(layer.scope, run, call, turn)
        if where is None:
            continue
        if layer.attempts is None or struck.count(spent_entry(index, where)) < layer.attempts - 1:
            return index, layer, where
    return None


FRONTIER_STACKS: tuple[Stack, ...] = (
    (),
    (Layer("call", "error", 3),),
    (Layer("turn", "error", 2),),
    (Layer("run", "error", 2),),
    (Layer("call", "error", 3), Layer("turn", "error", 2)),
    (Layer("call", "error", 3), Layer("run", "error", 2)),
)
"""The retry stacks `frontier --retry-stacks` crosses every design with (RETRIES.md 1.5): none, a
tool's own retries (call x3), an agent's (turn x2), a whole-workflow retry (run x2), and the
tool's retries nested in each of the other two. `unknown-outcome` fires where `error` does,
and `timeout` layers need a second process (`--faults pause`), so neither is enumerated."""
