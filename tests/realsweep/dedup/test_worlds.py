"""The graph of real worlds as data: the scenarios read off a graph built by hand.

The graph (root 0; worlds A and B one move deep; finished nodes f0..f4):

    0 --end-------------------------------> f0   (the uninterrupted run)
    0 --lost reply, end-------------------> f1   (1 move: a fault, no crash)
    0 --crash at 5------------------------> A
    0 --lost reply, crash at 7------------> B    (2 moves)
    0 --crash at 3------------------------> A    (a second path to A, smaller index)
    A --end-------------------------------> f2
    A --key-expiry------------------------> B    (A has 1 move, B has 2)
    B --end-------------------------------> f3

Paths to a final world: f0; f1; f2 by 5 and by 3; f3 by [lost reply, 7], by 5 + expiry and
by 3 + expiry: 1 + 1 + 2 + 3 = 7 scenarios. A's representative is the crash at 3; B's is
the crash at 3 then the expiry ([3] < [7]).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crashsweep.realsweep.dedup import worlds
from crashsweep.realsweep.values import Crash, Outcome

LOST = "lost-reply at tracker accepted create_a"
EXPIRY = "key-expiry at restart"


def _graph() -> worlds.Graph:
    g = worlds.Graph()
    root = g.add(("root", 0), Path("root"), ())
    a = g.add(("a", 1), Path("a"), (Crash(5, "p5"),))
    b = g.add(("b", 2), Path("b"), (Crash(7, "p7"),))
    root.points = ("p1", "p2")
    ends = {}
    for name, moves, dups in (("f0", 0, 0), ("f1", 1, 1), ("f2", 1, 0), ("f3", 2, 1)):
        ends[name] = g.graph.number_of_nodes()
        g.graph.add_node(ends[name], finished=True, crashes=moves, state=Outcome(dups=dups))
    edges: list[tuple[int, int, dict[str, Any]]] = [
        (root.id, ends["f0"], {"deltas": {"asks": 1}, "faults": ()}),
        (root.id, ends["f1"], {"deltas": {"fault.lost-reply": 1}, "faults": (LOST,)}),
        (root.id, a.id, {"deltas": {}, "crash": Crash(5, "p5"), "faults": ()}),
        (root.id, b.id, {"deltas": {"fault.lost-reply": 1}, "crash": Crash(7, "p7"), "faults": (LOST,)}),
        (root.id, a.id, {"deltas": {}, "crash": Crash(3, "p3"), "faults": ()}),
        (a.id, ends["f2"], {"deltas": {}, "faults": ()}),
        (a.id, b.id, {"deltas": {"fault.key-expiry": 1}, "faults": (EXPIRY,)}),
        (b.id, ends["f3"], {"deltas": {"asks": 2}, "faults": ()}),
    ]
    for source, target, data in edges:
        g.graph.add_edge(source, target, **data)
    return g


def test_each_node_is_represented_by_its_path_with_the_smallest_crash_indices() -> None:
    best = worlds.representatives(_graph())
    assert best[1] == ((Crash(3, "p3"),), (), {})
    assert best[2] == ((Crash(3, "p3"),), (EXPIRY,), {"fault.key-expiry": 1})


def test_one_scenario_per_final_world_with_its_faults() -> None:
    found = {(tuple(c.index for c in s.crashes), s.faults, s.outcome.dups) for s in worlds.scenarios(_graph())}
    assert found == {((), (), 0), ((), (LOST,), 1), ((3,), (), 0), ((3,), (EXPIRY,), 1)}


def test_every_path_is_a_scenario_with_the_counters_summed_along_it() -> None:
    """Seven paths (see the module docstring); f3's three carry the asks of B's process."""
    found = sorted(
        (tuple(c.index for c in s.crashes), s.faults, s.moves, dict(s.counters)) for s in worlds.every(_graph())
    )
    assert found == [
        ((), (), 0, {"asks": 1}),
        ((), (LOST,), 1, {"fault.lost-reply": 1}),
        ((3,), (), 1, {}),
        ((3,), (EXPIRY,), 2, {"asks": 2, "fault.key-expiry": 1}),
        ((5,), (), 1, {}),
        ((5,), (EXPIRY,), 2, {"asks": 2, "fault.key-expiry": 1}),
        ((7,), (LOST,), 2, {"asks": 2, "fault.lost-reply": 1}),
    ]


def test_an_unreached_crash_follows_its_nodes_representative() -> None:
    g = _graph()
    g.unreached.append((2, (LOST,), Crash(4, "p4")))
    (only,) = worlds.unreached(g)
    assert [c.index for c in only.crashes] == [3, 4]
    assert only.faults == (EXPIRY, LOST)
    assert only.unreached == 2


def test_the_most_of_a_counter_is_the_worst_single_path() -> None:
    """asks along each of the seven paths (module docstring): 1 on f0's, 2 on each of f3's three, else 0.

    The most is 2 (any path into B, then B's process), not the 6 summed over f3's paths;
    a counter no edge carries has a most of 0.
    """
    assert worlds.most(_graph(), "asks") == 2
    assert worlds.most(_graph(), "fault.lost-reply") == 1
    assert worlds.most(_graph(), "model_calls") == 0
