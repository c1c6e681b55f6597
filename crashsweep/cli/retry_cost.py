"""How much a design's retry layers multiply an exploration's work, said in one line before it starts.

A crash-only exploration of a process with P crash points tries about P scenarios per move.
A layer on `timeout` (spec/RETRIES.md 1.1-1.2) adds at each of its sites a new attempt: a
second process started beside the one given up on, which may wake at each of the new
attempt's P points or at its stop. So a site opens P + 1 scenarios where a crash point opened
one, and a move's scenarios are about

    P + S * (P + 1)

for S sites among the P points: scope `run` makes every crash point a site (S = P), so about
P * (P + 2), that is x(P + 2) the crash-only work (x17 for a 15-point process: 255 scenarios
against 15 at depth 1); `turn` the points of a turn in flight, `call` a call's points, fewer.
A layer with N attempts may give up N - 1 times (unbounded: as often as the depth allows), so
over `depth` moves the factor compounds up to min(depth, N - 1) times. Layers on errors add one
retry move per write site (a few scenarios, not a factor) and are not named. The estimate
reads the design alone (no exploring), so P stays a letter; the line says what multiplies and
how, so that minutes without output are expected, not a hang.
"""

from __future__ import annotations

import sys

from crashsweep.spec.design import Design
from crashsweep.spec.retries import SCOPES, Layer

SITES = {
    "run": "every crash point",
    "turn": "each crash point of a turn in flight",
    "call": "each crash point of a call in flight",
}
"""Where a timeout layer of each scope may give up on an attempt (spec/RETRIES.md 1.1)."""


def costliest(design: Design) -> Layer | None:
    """The timeout layer with the widest scope (the most sites), or None when no layer is on timeouts."""
    timeouts = [layer for layer in design.retries if layer.on == "timeout"]
    return max(timeouts, key=lambda layer: SCOPES.index(layer.scope), default=None)


def moves(layer: Layer, depth: int) -> int:
    """How many of `depth` moves the layer's give-ups may take: min(depth, N - 1), the depth for unbounded."""
    return depth if layer.attempts is None else min(depth, layer.attempts - 1)


def line(design: Design, depth: int) -> str | None:
    """The warning for `design` explored to `depth`, or None when no layer multiplies the work."""
    layer = costliest(design)
    if layer is None:
        return None
    times = moves(layer, depth)
    factor = "x(P+2)" if times == 1 else f"x(P+2)^{times}"
    bound = "" if layer.scope == "run" else "up to "
    return (
        f"crashsweep: {design.name}: retry layer '{layer.label}' multiplies the work: at {SITES[layer.scope]} "
        f"a new attempt starts beside the one given up on, which may wake at each of its points: "
        f"{bound}{factor} the scenarios for P crash points a process (x17 for 15 per move), "
        f"over {times} move(s) of depth {depth}"
    )


def warn(design: Design, depth: int) -> None:
    """Print `line` on stderr, when there is one, before the work starts."""
    found = line(design, depth)
    if found is not None:
        print(found, file=sys.stderr, flush=True)
