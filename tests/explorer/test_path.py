"""Tests of crashsweep.explorer.path: shortest paths as values, their codes, and replay."""

from __future__ import annotations

import pytest

from crashsweep.explorer.path import decode_path, encode_path, replay, shortest_path
from crashsweep.explorer.search import explore
from tests.explorer.toys import Points


def test_shortest_path_reaches_violation_and_round_trips() -> None:
    """The violation's path replays from its code to the same states."""
    model = Points(4, invariant=lambda s: not (s[0] == "at" and s[1] == 2 and s[2] == 0))
    exploration = explore(model, 1)
    node = exploration.verdicts["inv"].node
    assert node is not None
    path = shortest_path(exploration, node)
    assert path.end == ("at", 2, 0)
    assert [step.action.label for step in path.steps[1:] if step.action] == ["start", "next"]
    assert path.code == "2:"
    assert replay(model, 1, path.code) == path


def test_code_lists_only_non_default_choices() -> None:
    """A crash at the second point of the first process encodes as one choice."""
    model = Points(3)
    # Step 1 starts (at p1), step 2 goes on to p2, step 3 takes choice 1 (crash), step 4 restarts.
    path = replay(model, 1, "4:3=1")
    assert [s.action.kind for s in path.steps[1:] if s.action] == ["step", "step", "crash", "restart"]
    assert path.crashes == 1
    assert path.steps[2].state == ("at", 2, 0)
    assert encode_path(path) == "4:3=1"


def test_decode_rejects_malformed_codes() -> None:
    """A code that is not LENGTH:POS=CHOICE names the expected form."""
    with pytest.raises(ValueError, match="LENGTH:POS=CHOICE"):
        decode_path("crash at 3")
    with pytest.raises(ValueError, match="outside the path"):
        decode_path("3:5=1")
    assert decode_path("7:2=1,5=1") == (7, {2: 1, 5: 1})


def test_replay_rejects_choices_the_model_does_not_offer() -> None:
    """A choice beyond the enabled actions (here a crash past the depth) is refused."""
    with pytest.raises(ValueError, match="only 1 are enabled"):
        replay(Points(3), 0, "3:2=1")
    with pytest.raises(ValueError, match="only 0 are enabled"):
        replay(Points(1), 0, "4:")


def test_a_path_longer_than_its_run_names_the_run_s_length() -> None:
    """Points(n) without crashes is a start and n `next` steps: n + 1 steps, counted by hand."""
    with pytest.raises(ValueError, match=r"the path is longer than the run, which finishes after 2 steps"):
        replay(Points(1), 0, "4:")
    with pytest.raises(ValueError, match=r"longer than the run, which finishes after 4 steps \(step 5 takes"):
        replay(Points(3), 0, "5:")
    assert len(replay(Points(3), 0, "4:").steps) == 5  # the initial state and 4 steps
