"""Tests of crashsweep.reports.counterexample: shortest counterexamples as values, and replayed paths."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import networkx as nx
import pytest

from crashsweep.explorer.model import Property
from crashsweep.explorer.path import replay
from crashsweep.explorer.search import Exploration, explore
from crashsweep.reports.counterexample import (
    Counterexample,
    from_path,
    moves_words,
    path_nodes,
    shortest,
    violated,
    violates,
)
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.retries import Layer
from crashsweep.spec.tracker import KEYED
from crashsweep.spec.world import World
from crashsweep.variants import PRESETS, model
from crashsweep.variants.composed import compose


def test_save_after_reply_counterexample_has_one_crash_and_ten_steps(sar_cx: Counterexample) -> None:
    """The shortest no-duplicate counterexample crashes once, after create_a was accepted, then restarts."""
    assert sar_cx.invariant == "no-duplicate"
    assert sar_cx.violated
    assert sar_cx.crashes == 1
    assert len(sar_cx.steps) == 10
    assert [s.kind for s in sar_cx.steps].count("crash") == 1
    crash = next(s for s in sar_cx.steps if s.kind == "crash")
    assert crash.point == "tracker accepted create_a"
    assert sar_cx.steps[crash.index].kind == "restart"
    assert sar_cx.violation == "create_a has 2 records: #1 and #2"
    assert sar_cx.code == "10:7=1"


def test_each_step_records_its_action_point_and_state(sar_cx: Counterexample) -> None:
    """Steps are numbered from 1, chain their worlds, and name the crash point they reach."""
    before = sar_cx.initial
    for number, step in enumerate(sar_cx.steps, start=1):
        assert step.index == number
        assert step.before == before
        before = step.state
    assert sar_cx.steps[0].action == "start"
    assert sar_cx.steps[0].point == "start: tmp written"
    assert sar_cx.steps[2].counter("model_calls") == 1
    assert sar_cx.end.tracker.count("create_a") == 2


def test_no_shorter_path_violates_an_invariant(sar: Exploration[Any], sar_cx: Counterexample) -> None:
    """Every state closer to the initial state than the counterexample's end keeps every invariant."""
    distance = nx.single_source_shortest_path_length(sar.graph, sar.root)
    closer = [node for node, d in distance.items() if d < len(sar_cx.steps)]
    assert closer
    assert not [node for node in closer if violated(sar.model, sar.state(node))]


def test_from_path_without_violation_names_no_invariant() -> None:
    """A replayed path that ends in a good state has no invariant and is not violated."""
    loop = model("save-after-reply", TRIAGE, KEYED)
    cx = from_path(
        loop, replay(loop, 2, "5:"), variant="save-after-reply", job="triage", job_file=None, depth=2, tracker="keyed"
    )
    assert cx.invariant is None
    assert not cx.violated
    assert cx.crashes == 0
    assert "no invariant is violated" in cx.violation


def test_from_path_with_a_named_invariant_that_holds_says_so() -> None:
    """Naming an invariant the path's end keeps gives a non-violated counterexample saying it holds."""
    loop = model("save-after-reply", TRIAGE, KEYED)
    cx = from_path(
        loop,
        replay(loop, 2, "10:7=1"),
        variant="save-after-reply",
        job="triage",
        job_file=None,
        depth=2,
        tracker="keyed",
        invariant="no-loss",
    )
    assert not cx.violated
    assert cx.violation == "no-loss holds at the end of this path"


def test_at_end_invariants_are_checked_only_in_finished_states() -> None:
    """An at_end property that always fails is violated only once the run is finished."""
    loop = model("save-after-reply", TRIAGE, KEYED)
    never: Property[World] = Property.at_end("never", lambda _: False, witness="x")
    assert not violates(never, loop, World())
    assert violates(never, loop, World(finished=True))


def test_path_nodes_follow_the_choices(sar: Exploration[Any], sar_cx: Counterexample) -> None:
    """The nodes of the path end at the invariant's first violating node, and a wrong turn is refused."""
    nodes = path_nodes(sar, sar_cx.choices)
    assert nodes[0] == sar.root
    assert nodes[-1] == sar.verdicts["no-duplicate"].node
    with pytest.raises(ValueError, match="leaves the explored graph"):
        path_nodes(sar, (0, 7))


def test_a_retry_move_is_told_apart_from_a_crash() -> None:
    """save-after-reply with call x3 on error: its shortest duplicate is one retry move, no crash (RETRIES.md 1.4).

    The reply is saved; create_a is applied; the move fails its answer, and the layer sends
    create_a again without a key: the second record, 8 steps from the start.
    """
    policy = replace(PRESETS["save-after-reply"].policy, retries=(Layer("call", "error", 3),))
    exploration = explore(model(compose("sar-call", "x", policy), TRIAGE, KEYED), 1)
    (cx,) = shortest(exploration, variant="sar-call", job="triage", job_file=None, tracker="keyed")
    assert [step.kind for step in cx.steps].count("retry") == 1
    assert len(cx.steps) == 8
    assert moves_words(cx) == "0 crashes, 1 retry"
