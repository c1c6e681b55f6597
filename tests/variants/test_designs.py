"""Per-design facts: the crash points of the uninterrupted triage run, and which ones leave duplicates.

The expected point lists are spelled out from SEMANTICS.md sections 7 and 9.
"""

from __future__ import annotations

import pytest

from crashsweep.spec import metrics
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.spec.world import World
from crashsweep.variants import model
from crashsweep.variants.loop_model import CRASH, LoopModel


def _save(what: str) -> list[str]:
    return [f"{what}: tmp written", f"{what}: renamed"]


def _send(call: str) -> list[str]:
    return [f"tracker accepted {call}", f"tool returned {call}"]


def _result(call: str) -> list[str]:
    return [*_save(f"result {call}"), f"result saved {call}"]


def _marker(call: str) -> list[str]:
    return [*_save(f"marker {call}"), f"marker saved {call}"]


ONCE_PER_TURN = [
    *_save("start"), "reply 1 arrived", *_send("create_a"), *_send("create_b"), *_save("turn 1"),
    "reply 2 arrived", "tool returned search", *_send("comment_a"), *_save("turn 2"),
    "final reply arrived", *_save("final"),
]  # fmt: skip
AFTER_REPLY = [
    *_save("start"), "reply 1 arrived", *_save("reply 1"),
    *_send("create_a"), *_result("create_a"), *_send("create_b"), *_result("create_b"), *_save("turn 1"),
    "reply 2 arrived", *_save("reply 2"),
    "tool returned search", *_result("search"), *_send("comment_a"), *_result("comment_a"), *_save("turn 2"),
    "final reply arrived", *_save("final"),
]  # fmt: skip
MARKERS = [
    *_save("start"), "reply 1 arrived", *_save("reply 1"),
    *_marker("create_a"), *_send("create_a"), *_result("create_a"),
    *_marker("create_b"), *_send("create_b"), *_result("create_b"), *_save("turn 1"),
    "reply 2 arrived", *_save("reply 2"),
    "tool returned search", *_result("search"),
    *_marker("comment_a"), *_send("comment_a"), *_result("comment_a"), *_save("turn 2"),
    "final reply arrived", *_save("final"),
]  # fmt: skip
AGENT_LOOP = [
    *_save("lock"), *_save("start"), "reply 1 arrived",
    *_marker("create_a"), *_send("create_a"), *_result("create_a"),
    *_marker("create_b"), *_send("create_b"), *_result("create_b"), *_save("turn 1"),
    "reply 2 arrived", "tool returned search",
    *_marker("comment_a"), *_send("comment_a"), *_result("comment_a"), *_save("turn 2"),
    "final reply arrived", *_save("final"),
]  # fmt: skip
POINTS = {
    "save-once-per-turn": ONCE_PER_TURN,
    "save-after-reply": AFTER_REPLY,
    "idempotency-keys": AFTER_REPLY,
    "attempt-markers": MARKERS,
    "keys-and-markers": MARKERS,
    "agent-loop": AGENT_LOOP,
}


def _run(loop: LoopModel, world: World, crash_at: int | None = None) -> tuple[World, list[str]]:
    """Run without crashing (or crash once at point `crash_at`) to the end; return the points passed."""
    points: list[str] = []
    while not loop.is_finished(world):
        if world.process is not None:
            points.append(world.process.point)
            if len(points) == crash_at:
                world, _ = loop.step(world, CRASH)
                continue
        world, _ = loop.step(world, loop.actions(world)[0])
    return world, points


@pytest.mark.parametrize("variant", POINTS)
def test_crash_points_of_the_uninterrupted_run(variant: str) -> None:
    """The uninterrupted triage run passes exactly the points of SEMANTICS.md, in order."""
    _, points = _run(model(variant, TRIAGE, KEYED), World())
    assert points == POINTS[variant]
    assert len(points) == {"save-once-per-turn": 18, "agent-loop": 38}.get(variant, len(points))


@pytest.mark.parametrize(
    ("variant", "duplicating"),
    [
        (
            "save-once-per-turn",
            [*_send("create_a"), *_send("create_b"), "turn 1: tmp written", *_send("comment_a"), "turn 2: tmp written"],
        ),
        (
            "save-after-reply",
            [*_send("create_a"), "result create_a: tmp written",
             *_send("create_b"), "result create_b: tmp written",
             *_send("comment_a"), "result comment_a: tmp written",
             ],
        ),
    ],
)  # fmt: skip
def test_points_where_one_crash_duplicates(variant: str, duplicating: list[str]) -> None:
    """8 of 18 points duplicate for save-once-per-turn, 9 of 34 for save-after-reply (SEMANTICS.md section 8)."""
    loop = model(variant, TRIAGE, KEYED)
    found = []
    for i, point in enumerate(POINTS[variant], start=1):
        world, _ = _run(loop, World(), crash_at=i)
        if metrics.dups(world, TRIAGE):
            found.append(point)
    assert found == duplicating
    assert len(found) == {"save-once-per-turn": 8, "save-after-reply": 9}[variant]
