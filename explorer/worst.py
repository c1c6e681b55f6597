"""The worst case over scenarios: the most a counter (plus a measure of the end) reaches on one path.

Counting (counting.py) sums a figure over every scenario; a user who stacks retry layers also
asks what the single worst scenario costs: the most duplicates, the most model calls. On the
acyclic state graph that is a longest path, computed in one Kahn pass over the search's
arrays: each node keeps the most of the counter over the paths that reach it, and a finished
node adds its measure. Pure: the same exploration gives the same figure.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from crashsweep.explorer.counting import CycleFound
from crashsweep.explorer.model import Summed
from crashsweep.explorer.search import Exploration
from crashsweep.explorer.unstepped import stand_in


def most(exploration: Exploration[Any], counter: str | None = None, measure: Callable[[Any], int] | None = None) -> int:
    """The most, over the scenarios that end, of `counter` summed along the path plus `measure` at its end.

    Without a counter only the measure counts; without a measure only the counter. 0 when no
    scenario ends. A `Summed` measure is its counter summed along the path (explorer/model.py),
    never read off the final state, which the state key may have merged with others.
    """
    core = exploration.core
    nodes = len(core.states)
    targets, finished = core.targets, core.finished
    numbers, table = core.deltas.numbers, core.deltas.table
    counters = [name for name in (counter, measure.counter if isinstance(measure, Summed) else None) if name]
    if isinstance(measure, Summed):
        measure = None
    gains = [sum(delta.get(name, 0) for name in counters) for delta in table]
    waiting = array("I", bytes(4 * nodes))
    for target in targets:
        waiting[target] += 1
    best: list[int | None] = [None] * nodes
    best[exploration.root] = 0
    ready = [node for node in range(nodes) if not waiting[node]]
    worst: int | None = None
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        here = best[node]
        if here is not None and finished[node]:
            total = here + (measure(stand_in(core, node)) if measure is not None else 0)
            worst = total if worst is None else max(worst, total)
        for edge in core.out_edges(node):
            target = targets[edge]
            waiting[target] -= 1
            if not waiting[target]:
                ready.append(target)
            if here is not None:
                reached = here + gains[numbers[edge]]
                known = best[target]
                best[target] = reached if known is None else max(known, reached)
    if done < nodes:
        raise CycleFound
    return 0 if worst is None else worst
