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
    """One retry layer: its scope, its trigger, and its attempts (None: unbounded, the depth bounds it)."""

    scope: Scope
    on: Trigger
    attempts: int | None

    @property
    def label(self) -> str:
        """`call x3 on error`, `run xN on timeout` (N: unbounded)."""
        times = "N" if self.attempts is None else str(self.attempts)
        return f"{self.scope} x{times} on {self.on}"

    def as_mapping(self) -> dict[str, object]:
        """The layer as a design file writes it."""
        return {"scope": self.scope, "on": self.on, "attempts": UNBOUNDED if self.attempts is None else self.attempts}


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


def _layer(i: int, item: object) -> Layer:
    where = f"retries[{i}]"
    if not isinstance(item, Mapping):
        raise RetryError(f"{where}: expected a table with scope, on and attempts")
    unknown = sorted(set(item) - {"scope", "on", "attempts"})
    if unknown:
        raise RetryError(f"{where}: unknown key {unknown[0]!r} (known: scope, on, attempts)")
    for key, allowed in (("scope", SCOPES), ("on", TRIGGERS)):
        if item.get(key) not in allowed:
            raise RetryError(
                f"{where}.{key}: expected one of {', '.join(repr(a) for a in allowed)}, not {item.get(key)!r}"
            )
    attempts = item.get("attempts")
    if attempts == UNBOUNDED:
        return Layer(item["scope"], item["on"], None)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 2:
        raise RetryError(f'{where}.attempts: expected an integer from 2 (the first attempt included) or "unbounded"')
    return Layer(item["scope"], item["on"], attempts)


def check_stack(stack: Stack) -> None:
    """Refuse a stack whose scopes narrow from the innermost out, or that is too deep."""
    if len(stack) > MOST_LAYERS:
        raise RetryError(f"retries: at most {MOST_LAYERS} layers, not {len(stack)}")
    for inner, outer in pairwise(stack):
        if SCOPES.index(outer.scope) < SCOPES.index(inner.scope):
            raise RetryError(
                f"retries: layers go from the innermost out, so {outer.scope!r} cannot come after {inner.scope!r}"
            )


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
